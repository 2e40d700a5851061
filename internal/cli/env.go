package cli

import (
	"errors"
	"io"
	"os"
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
