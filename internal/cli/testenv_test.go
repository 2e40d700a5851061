package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
)

// The environment of a test's CLI runs. A test sets a variable with
// setenv(t, …) rather than t.Setenv, and its working directory with
// chdir(t, …) rather than t.Chdir: the value reaches every run of the
// test and of its subtests (runCLI, mainIn, startDaemon), the process's
// environment and directory are untouched, and so the test can call
// t.Parallel(). What the command's children read (a git hook's
// switchboard, run by git) comes from environOf, which the test gives
// the processes it starts.
var testEnvs sync.Map // test name → *envLayer

// testDirs are the working directories tests set with chdir.
var testDirs sync.Map // test name → string

// chdir makes dir the working directory of t's CLI runs and of its
// subtests', until t ends.
func chdir(t testing.TB, dir string) {
	t.Helper()
	key := t.Name()
	if _, loaded := testDirs.Swap(key, dir); !loaded {
		t.Cleanup(func() { testDirs.Delete(key) })
	}
}

// dirOf is the working directory of t's CLI runs: what t, or else the
// nearest test it runs under, set with chdir; "" (the process's) when
// none did.
func dirOf(t testing.TB) string {
	for n := t.Name(); ; {
		if v, ok := testDirs.Load(n); ok {
			return v.(string)
		}
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			return ""
		}
		n = n[:i]
	}
}

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

// environOf is t's environment (see envOf) as a process gets it, for a
// switchboard process a test starts: the process's environment with
// what t and the tests it runs under set.
func environOf(t testing.TB) []string {
	var names []string
	for n := t.Name(); ; {
		names = append(names, n)
		i := strings.LastIndexByte(n, '/')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	env := os.Environ()
	for i := len(names) - 1; i >= 0; i-- { // the nearest last, to win
		v, ok := testEnvs.Load(names[i])
		if !ok {
			continue
		}
		l := v.(*envLayer)
		l.mu.Lock()
		for k, val := range l.vars {
			env = append(env, k+"="+val)
		}
		l.mu.Unlock()
	}
	return env
}

// withVars is env with vars set over it.
func withVars(env func(string) (string, bool), vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		return env(k)
	}
}

// mainIn runs the command line as Main does, in t's environment and
// working directory (see setenv, chdir); it may run on another goroutine
// than t's.
func mainIn(t testing.TB, ctx context.Context, stdout, stderr io.Writer, args ...string) int {
	return run(ctx, invocation{args: args, stdin: os.Stdin, stdout: stdout, stderr: stderr, env: envOf(t), dir: dirOf(t)})
}

// getenvOf is the value of name in t's environment (see envOf).
func getenvOf(t testing.TB, name string) string {
	v, _ := envOf(t)(name)
	return v
}

// stateDir is a new state directory for t whose history database
// (switchboard.db) is there already, migrated: the first command of
// each of ~100 tests applied the migrations to a new file otherwise
// (about 2 s of the package's CPU under -race). A test about opening or
// migrating a new state directory uses t.TempDir() as it is.
func stateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	storetest.Seed(t, filepath.Join(dir, "switchboard.db"))
	return dir
}
