package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// invocation is one run of the command line: its arguments, streams and
// environment. Main runs the process's; tests run many at once, each
// with its own state directory and variables, without touching the
// process's environment.
type invocation struct {
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	// env reads the environment: os.LookupEnv for the process's.
	env func(name string) (string, bool)
	// dir is the working directory, absolute: "" for the process's.
	dir string
}

// lookupEnv reads a variable of the environment the command runs in, the
// one place every read goes through: the state directory, the variables
// a configuration refers to, SWITCHBOARD_NO_DAEMON, the LLM endpoint,
// the hook chain, the display. An app made without one reads the
// process's.
func (a *app) lookupEnv(name string) (string, bool) {
	if a.env == nil {
		return os.LookupEnv(name)
	}
	return a.env(name)
}

// getenv is lookupEnv's value, "" when the variable is unset.
func (a *app) getenv(name string) string {
	v, _ := a.lookupEnv(name)
	return v
}

// homeDir is the user's home directory as os.UserHomeDir finds it, read
// from the command's environment: $USERPROFILE on Windows, else $HOME.
func (a *app) homeDir() (string, error) {
	name := "HOME"
	if runtime.GOOS == "windows" {
		name = "USERPROFILE"
	}
	if h := a.getenv(name); h != "" {
		return h, nil
	}
	return "", errors.New("$" + name + " is not defined")
}

// workDir is the working directory the command runs in, absolute: the
// invocation's, else the process's (os.Getwd).
func (a *app) workDir() (string, error) {
	if a.dir != "" {
		return a.dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the working directory: %w", err)
	}
	return wd, nil
}

// inWorkDir is the path p as the command means it: a relative p is
// relative to the invocation's working directory. With the process's (no
// directory given) p is returned as it is, relative paths and all, and the
// system resolves it against the same directory.
func (a *app) inWorkDir(p string) string {
	if a.dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.dir, p)
}
