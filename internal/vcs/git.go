// Package vcs is Switchboard's git plumbing for hooks: the standard git
// context of every event ([Describe]), the `git` action's operations
// ([CreateBranch], [Commit], [Tag]) and the thin git hook scripts that fire
// `git.<hook>` events ([InstallHooks]).
//
// Every operation runs the git executable found on PATH, without a shell,
// as `git -C dir ...`, in an environment cleaned of the GIT_* variables that
// point git at a repository or index (see [cleanEnv]): a git action run from
// inside one repository's hook must not operate on that repository's
// GIT_DIR or GIT_INDEX_FILE when it was asked to work on another. Failures
// are [*fault.Error] values carrying the first line of git's stderr.
package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// EnvDisableHooks names the environment variable that, set to "0", makes the
// installed git hook scripts do nothing but run any chained user hook.
const EnvDisableHooks = "SWITCHBOARD_GIT_HOOKS"

// keptGitEnv lists the GIT_* variables that describe the user's transport,
// credential and configuration preferences rather than one repository's
// state; they are passed to git. Every other GIT_* variable is dropped.
var keptGitEnv = map[string]bool{
	"GIT_SSH":             true,
	"GIT_SSH_COMMAND":     true,
	"GIT_SSH_VARIANT":     true,
	"GIT_ASKPASS":         true,
	"GIT_TERMINAL_PROMPT": true,
	"GIT_CONFIG_GLOBAL":   true,
	"GIT_CONFIG_SYSTEM":   true,
	"GIT_CONFIG_NOSYSTEM": true,
	"GIT_SSL_NO_VERIFY":   true,
	"GIT_SSL_CAINFO":      true,
	"GIT_SSL_CAPATH":      true,
	"GIT_HTTP_PROXY":      true,
	"GIT_TRACE":           true,
}

type envKey struct{}

// WithEnv returns a context whose git commands run with the given extra
// "KEY=value" environment entries, after the cleaning described in the
// package comment. A hooks engine uses it to pass its chain depth to the
// git hooks that an action's commit or checkout fires in a new process.
func WithEnv(ctx context.Context, env ...string) context.Context {
	prev, _ := ctx.Value(envKey{}).([]string)
	all := make([]string, 0, len(prev)+len(env))
	all = append(all, prev...)
	all = append(all, env...)
	return context.WithValue(ctx, envKey{}, all)
}

// cleanEnv returns environ without the GIT_* variables that would redirect
// git to another repository, index, object store or configuration (GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_COMMON_DIR,
// GIT_PREFIX, GIT_CONFIG_COUNT/KEY/VALUE, GIT_AUTHOR_DATE set by a
// surrounding `git commit`, ...), keeping the ones in keptGitEnv. It pins
// git's messages to English (LANGUAGE=en) so that "not a git repository" is
// recognised, and disables terminal prompts: nothing reads a terminal here.
func cleanEnv(environ []string, extra []string) []string {
	env := make([]string, 0, len(environ)+len(extra)+2)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") && !keptGitEnv[name] {
			continue
		}
		if name == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LANGUAGE=en", "GIT_TERMINAL_PROMPT=0")
	return append(env, extra...)
}

// gitError is a failed git command: its arguments, exit code and stderr.
type gitError struct {
	args   []string
	code   int // -1 when git did not exit normally
	stderr string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s exited with status %d", strings.Join(e.args, " "), e.code)
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// run runs git -C dir args... with stdin (may be nil) and returns its
// stdout. A non-zero exit is a *gitError; a missing git executable is a
// fault.Config error; a cancelled or expired ctx is reported as such.
func run(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	extra, _ := ctx.Value(envKey{}).([]string)
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = cleanEnv(os.Environ(), extra)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", fault.Wrap(fault.Config, err, "git is not installed or not on PATH").
			WithSuggestions("Install git (https://git-scm.com/downloads) and make sure it is on PATH")
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return "", fault.Wrap(fault.Timeout, ctxErr, "git %s did not finish in the time allowed", args[0])
		}
		return "", fault.Wrap(fault.Cancelled, ctxErr, "git %s was cancelled", args[0])
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.String(), &gitError{args: args, code: exit.ExitCode(), stderr: stderr.String()}
	}
	return "", fault.Wrap(fault.Internal, err, "running git %s", args[0])
}

// exitCode reports the exit code of a *gitError in err, and whether there
// was one.
func exitCode(err error) (int, bool) {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code, true
	}
	return 0, false
}

// failed turns err from run into a fault.Error saying what was being done:
// git's own failures (a *gitError) become fault.Backend with the first line
// of git's stderr; faults pass through.
func failed(err error, format string, args ...any) error {
	var ge *gitError
	if !errors.As(err, &ge) {
		return err
	}
	fe := fault.Wrap(fault.Backend, err, format, args...)
	line := firstLine(ge.stderr)
	for _, prefix := range []string{"fatal: ", "error: "} {
		line = strings.TrimPrefix(line, prefix)
	}
	if line != "" {
		fe.Message += ": " + line
		fe.WithDetail("stderr", line)
	}
	switch {
	case notARepo(err):
		fe.Kind = fault.Validation
		fe.WithSuggestions("Run the action in a git repository, or run `git init` first")
	case strings.Contains(ge.stderr, "identity unknown"):
		fe.Kind = fault.Config
		fe.WithSuggestions("Set an identity: git config user.name \"Your Name\" && git config user.email you@example.com")
	}
	return fe
}
