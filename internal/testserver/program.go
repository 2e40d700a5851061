package testserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testbuild"
)

// EnvProgram names a testserver program built beforehand with the test
// binaries' flags (make test builds one and sets it), so that no test
// process runs go build; Command trusts it to be up to date.
const EnvProgram = "SWITCHBOARD_TESTSERVER_PROGRAM"

// programPackage is the main package of the program that runs the modes.
const programPackage = "./internal/testserver/cmd/testserver"

// moduleFile identifies this repository's go.mod while walking up to it.
const moduleLine = "module github.com/switchboard-mcp/switchboard"

// setup is what Command needs from the process as it was when the test
// binary started: tests may change HOME, PATH or the working directory
// (t.Setenv, t.Chdir) before their first server.
type setup struct {
	cacheDir string   // where the program is kept, or "" if there is none
	goCmd    string   // the go command, or "" if there is none
	root     string   // the module's directory, or "" if not found
	env      []string // the environment to build in
	program  string   // EnvProgram's value
}

var (
	setupOnce sync.Once
	started   setup
)

// capture records the setup, once; Init calls it first thing.
func capture() {
	setupOnce.Do(func() {
		if dir, err := os.UserCacheDir(); err == nil {
			started.cacheDir = dir
		}
		started.goCmd = findGo()
		if wd, err := os.Getwd(); err == nil {
			started.root = moduleRoot(wd)
		}
		started.env = os.Environ()
		started.program = os.Getenv(EnvProgram)
	})
}

// findGo returns the go command on PATH (go test puts its toolchain's
// first), or "".
func findGo() string {
	if exe, err := exec.LookPath("go"); err == nil {
		return exe
	}
	return ""
}

// moduleRoot returns the directory at or above dir whose go.mod declares
// this module, or "".
func moduleRoot(dir string) string {
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(mod, []byte(moduleLine+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// programOnce builds (or finds up to date) the program once per test
// process, and names it in [EnvProgram] for the processes a test starts
// (a daemon's crash child, the CLI run as a process), which would
// otherwise each build it again.
var programOnce = sync.OnceValues(func() (string, error) {
	path, err := buildProgram()
	if err == nil {
		os.Setenv(EnvProgram, path)
	}
	return path, err
})

// Command returns the program that serves the modes, for a server's
// command: a small program (testserver/cmd/testserver) built with the
// test binary's race and tags settings, which starts for about half the
// CPU of a race-built test binary (docs/decisions.md, "The test suite's
// child processes"). If [EnvProgram] names one, that is it. Otherwise the
// first test process to ask builds it into the user's cache directory,
// under a name keyed by the module's directory and the flags, holding a
// file lock so that packages tested in parallel build it once; later ones
// find it up to date (go build checks, and the program is replaced only
// when it changed). Where there is no go command or no module source (a
// test binary run on its own, away from the repository) it returns the
// test binary, which serves the same modes through [Init]. A build that
// fails fails the test.
func Command(t testing.TB) string {
	t.Helper()
	path, err := programOnce()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return path
}

// buildProgram returns the program's path, building it if it is out of
// date, or the test binary's where it cannot be built.
func buildProgram() (string, error) {
	capture()
	if started.program != "" {
		if _, err := os.Stat(started.program); err != nil {
			return "", fmt.Errorf("%s names a test server program that cannot be run (build it with go build -race -o PATH %s, or unset %s): %w", EnvProgram, programPackage, EnvProgram, err)
		}
		return started.program, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the test binary: %w", err)
	}
	if started.goCmd == "" || started.root == "" || started.cacheDir == "" {
		return self, nil
	}
	return buildInCache()
}

// buildInCache builds the program, if it is out of date, into the user's
// cache directory, under a name keyed by the module's directory and the
// flags, and returns its path ([testbuild.Program]).
func buildInCache() (string, error) {
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%q\x00%s/%s", started.root, testbuild.Flags(), runtime.GOOS, runtime.GOARCH))
	dir := filepath.Join(started.cacheDir, "switchboard-testserver", hex.EncodeToString(key[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("making a directory for the test server program: %w", err)
	}
	return testbuild.Program(dir, "testserver", started.goCmd, started.root, programPackage, started.env)
}
