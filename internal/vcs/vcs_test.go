package vcs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// gitPath is the git the tests run; TestMain fails without one.
var gitPath string

// TestMain gives the tests a HOME of their own, so that they neither read
// nor write the user's git configuration, and drops GIT_* variables that a
// surrounding git (a hook running `go test`) would have set.
func TestMain(m *testing.M) {
	var err error
	gitPath, err = exec.LookPath("git")
	if err != nil {
		fmt.Fprintln(os.Stderr, "internal/vcs tests need git on PATH: install git (apt-get install git, brew install git)")
		os.Exit(1)
	}
	home, err := os.MkdirTemp("", "vcs-home-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "GIT_") {
			os.Unsetenv(name)
		}
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Unsetenv(vcs.EnvDisableHooks)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitResult is what a git command run by a test did.
type gitResult struct {
	stdout, stderr string
	code           int
}

// runGit runs git -C dir args with the test's environment plus env and
// stdin, and reports what it did; it fails the test only when git could
// not be started.
func runGit(t *testing.T, dir string, env []string, stdin string, args ...string) gitResult {
	t.Helper()
	cmd := exec.Command(gitPath, append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := gitResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running git %v: %v", args, err)
	}
	return res
}

// git runs git -C dir args and returns its trimmed stdout, failing the
// test when git fails.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	res := runGit(t, dir, nil, "", args...)
	if res.code != 0 {
		t.Fatalf("git %v: exit %d: %s", args, res.code, res.stderr)
	}
	return strings.TrimSpace(res.stdout)
}

// newRepo returns a new repository on branch main with an identity in its
// own configuration.
func newRepo(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "--quiet", "--initial-branch=main")
	git(t, dir, "config", "user.name", "Test User")
	git(t, dir, "config", "user.email", "test@example.com")
	git(t, dir, "config", "commit.gpgSign", "false")
	git(t, dir, "config", "tag.gpgSign", "false")
	return dir
}

// commitFile writes name, stages and commits it, and returns the sha.
func commitFile(t *testing.T, dir, name, content, message string) string {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), content, 0o644)
	git(t, dir, "add", name)
	git(t, dir, "commit", "--quiet", "-m", message)
	return git(t, dir, "rev-parse", "HEAD")
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// wantKind fails the test unless err is a fault of kind whose message
// contains every one of parts.
func wantKind(t *testing.T, err error, kind fault.Kind, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s error", kind)
	}
	if got := fault.KindOf(err); got != kind {
		t.Fatalf("got error kind %s (%v), want %s", got, err, kind)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("got error %q, want it to contain %q", err, p)
		}
	}
}
