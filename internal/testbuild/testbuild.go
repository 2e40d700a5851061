// Package testbuild builds the programs that test helpers run (package
// testserver's test server program, package testpeer's go-sdk conformance
// server) once for the test binaries run side by side, and the way the
// running test binary was built: with -race when it has it, so that they
// link the race-compiled packages its build put in the build cache, where
// a plain build compiles the standard library's net/http and crypto and
// the go-sdk a second time on a cold cache (about 30 s of CPU;
// docs/decisions.md, "The test suite's child processes").
package testbuild

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"

	"github.com/rogpeppe/go-internal/lockedfile"
)

// RaceEnv is the GORACE setting for a race-built program a test starts:
// without it, the program sleeps a second at exit (atexit_sleep_ms).
const RaceEnv = "atexit_sleep_ms=0"

// Flags returns the go build flags that match how this test binary was
// built: -race and -tags, as they were given.
func Flags() []string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var flags []string
	for _, s := range info.Settings {
		switch s.Key {
		case "-race":
			if s.Value == "true" {
				flags = append(flags, "-race")
			}
		case "-tags":
			flags = append(flags, "-tags="+s.Value)
		}
	}
	return flags
}

// Program builds the main package pkg with [Flags] into dir as name, if
// it is out of date, and returns its path. go runs as goCmd in root, with
// env (nil: this process's environment). It holds dir's file lock, so
// that test binaries run side by side build it once between them.
//
// go build -o leaves its output in place when it is up to date (it reads
// the build ID the output carries) and links it again otherwise, removing
// the old file and writing a new one, while other test processes may be
// starting the program. So go build writes a file of its own
// ([StagedPath]), kept from run to run, which spares the link (most of a
// build's CPU) whenever nothing changed, and the program is replaced, by
// a copy and a rename, only when that file's bytes differ from it.
func Program(dir, name, goCmd, root, pkg string, env []string) (string, error) {
	unlock, err := lockedfile.MutexAt(filepath.Join(dir, "lock")).Lock()
	if err != nil {
		return "", fmt.Errorf("locking %s to build %s: %w", dir, pkg, err)
	}
	defer unlock()
	out := filepath.Join(dir, name)
	built := StagedPath(out)
	args := append(append([]string{"build"}, Flags()...), "-o", built, pkg)
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = root
	cmd.Env = env
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (go %q in %s): %w\n%s", pkg, args, root, err, msg)
	}
	if err := install(built, out); err != nil {
		return "", fmt.Errorf("installing %s: %w", out, err)
	}
	return out, nil
}

// StagedPath is where [Program] has go build write the program it
// installs at path.
func StagedPath(path string) string { return path + ".build" }

// install makes dst a copy of src, by a rename, unless it already has
// src's bytes (a build of unchanged sources links the same program).
func install(src, dst string) error {
	want, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
		return nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	defer os.Remove(tmp)
	if err := os.WriteFile(tmp, want, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
