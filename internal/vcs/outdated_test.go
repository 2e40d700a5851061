package vcs_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

// TestOutdatedHooks: scripts an earlier Switchboard installed (here, one
// without --quiet, as before the quiet git hooks) are named, whatever
// command they run; current scripts, a user's own hook and a directory
// outside any repository are not.
func TestOutdatedHooks(t *testing.T) {
	dir := newRepo(t)
	install(t, dir, vcs.InstallOptions{Command: "/opt/it's/switchboard"})
	if got, err := vcs.OutdatedHooks(dir); err != nil || len(got) != 0 {
		t.Fatalf("after install: got %v, %v; want none outdated", got, err)
	}
	hooksDir := filepath.Join(dir, ".git", "hooks")
	old := strings.ReplaceAll(readFile(t, filepath.Join(hooksDir, "post-commit")), "hooks fire --quiet", "hooks fire")
	writeFile(t, filepath.Join(hooksDir, "post-commit"), old, 0o755)
	writeFile(t, filepath.Join(hooksDir, "pre-push"), "#!/bin/sh\nexit 0\n", 0o755) // the user's
	got, err := vcs.OutdatedHooks(dir)
	if err != nil || !slices.Equal(got, []string{"post-commit"}) {
		t.Fatalf("with an earlier post-commit: got %v, %v; want [post-commit]", got, err)
	}
	if got, err := vcs.OutdatedHooks(t.TempDir()); err != nil || got != nil {
		t.Errorf("outside a repository: got %v, %v; want none", got, err)
	}
}
