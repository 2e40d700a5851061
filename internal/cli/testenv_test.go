package cli

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// The environment of a test's CLI runs. A test sets a variable with
// setenv(t, …) rather than t.Setenv: the value reaches every run of the
// test and of its subtests (runCLI, startDaemon), the process's
// environment is untouched, and so the test can call t.Parallel(). What
// the command reads outside its environment (the working directory,
// os.UserConfigDir for config.Find and the trust records, $BROWSER in
// oauth, $PATH for hooks) still needs t.Setenv or t.Chdir, in a test
// that stays sequential.
var testEnvs sync.Map // test name → *envLayer

// envLayer is what one test set.
type envLayer struct {
	mu   sync.Mutex
	vars map[string]string
}

// setenv sets name to value in the environment of t's CLI runs and of
// its subtests', until t ends.
func setenv(t testing.TB, name, value string) {
	t.Helper()
	v, loaded := testEnvs.LoadOrStore(t.Name(), &envLayer{vars: map[string]string{}})
	if !loaded {
		key := t.Name()
		t.Cleanup(func() { testEnvs.Delete(key) })
	}
	l := v.(*envLayer)
	l.mu.Lock()
	l.vars[name] = value
	l.mu.Unlock()
}

// envOf returns the environment of t's CLI runs: what t and the tests it
// runs under set with setenv, nearest first, then the process's. It reads
// them when asked, as a variable t.Setenv changes would be read.
func envOf(t testing.TB) func(string) (string, bool) {
	name := t.Name()
	return func(k string) (string, bool) {
		for n := name; ; {
			if v, ok := testEnvs.Load(n); ok {
				l := v.(*envLayer)
				l.mu.Lock()
				val, ok := l.vars[k]
				l.mu.Unlock()
				if ok {
					return val, true
				}
			}
			i := strings.LastIndexByte(n, '/')
			if i < 0 {
				return os.LookupEnv(k)
			}
			n = n[:i]
		}
	}
}
