package vcs_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

func TestCreateBranch(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	sha := commitFile(t, dir, "a.txt", "a", "first")
	writeFile(t, filepath.Join(dir, "a.txt"), "changed", 0o644) // uncommitted work is kept

	if err := vcs.CreateBranch(ctx, dir, "004-payments"); err != nil {
		t.Fatalf("CreateBranch: %v", err)
	}
	if got := git(t, dir, "symbolic-ref", "--short", "HEAD"); got != "004-payments" {
		t.Errorf("got current branch %q, want 004-payments", got)
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != sha {
		t.Errorf("got HEAD %s, want %s", got, sha)
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "changed" {
		t.Errorf("got a.txt %q, want the uncommitted %q", got, "changed")
	}

	t.Run("exists", func(t *testing.T) {
		wantKind(t, vcs.CreateBranch(ctx, dir, "main"), fault.Validation, `branch "main" already exists`)
	})
	for _, name := range []string{"", "-x", "a..b", "a b", "@{-1}", "x.lock", "a~1", "HEAD", "/a"} {
		t.Run("invalid "+name, func(t *testing.T) {
			wantKind(t, vcs.CreateBranch(ctx, dir, name), fault.Validation, "invalid branch name")
		})
	}
	t.Run("not a repository", func(t *testing.T) {
		err := vcs.CreateBranch(ctx, t.TempDir(), "x")
		wantKind(t, err, fault.Validation, "not a git repository")
	})
}

func TestCommit(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)

	t.Run("nothing staged before the first commit", func(t *testing.T) {
		_, err := vcs.Commit(ctx, dir, "msg")
		wantKind(t, err, fault.Validation, "nothing is staged")
	})

	writeFile(t, filepath.Join(dir, "a.txt"), "a", 0o644)
	git(t, dir, "add", "a.txt")
	t.Run("empty message", func(t *testing.T) {
		_, err := vcs.Commit(ctx, dir, " \n")
		wantKind(t, err, fault.Validation, "message cannot be empty")
	})

	message := "Add a.txt\n\n#42 is kept, -n too\n"
	sha, err := vcs.Commit(ctx, dir, message)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := git(t, dir, "rev-parse", "HEAD"); got != sha {
		t.Errorf("got sha %s, want HEAD %s", sha, got)
	}
	if got, want := git(t, dir, "log", "-1", "--format=%B"), "Add a.txt\n\n#42 is kept, -n too"; got != want {
		t.Errorf("got message %q, want %q", got, want)
	}

	t.Run("nothing staged", func(t *testing.T) {
		writeFile(t, filepath.Join(dir, "b.txt"), "untracked", 0o644)
		_, err := vcs.Commit(ctx, dir, "msg")
		wantKind(t, err, fault.Validation, "nothing is staged")
	})

	t.Run("surrounding GIT_INDEX_FILE is ignored", func(t *testing.T) {
		other := newRepo(t)
		writeFile(t, filepath.Join(other, "o.txt"), "o", 0o644)
		git(t, other, "add", "o.txt")
		t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
		t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
		_, err := vcs.Commit(ctx, dir, "msg")
		wantKind(t, err, fault.Validation, "nothing is staged")
	})

	t.Run("a failing pre-commit hook", func(t *testing.T) {
		repo := newRepo(t)
		writeFile(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho 'lint: trailing space in a.txt' >&2\nexit 1\n", 0o755)
		writeFile(t, filepath.Join(repo, "a.txt"), "a ", 0o644)
		git(t, repo, "add", "a.txt")
		_, err := vcs.Commit(ctx, repo, "msg")
		wantKind(t, err, fault.Backend, "committing in", "lint: trailing space in a.txt")
	})

	t.Run("no identity", func(t *testing.T) {
		repo := newRepo(t)
		git(t, repo, "config", "--unset", "user.name")
		git(t, repo, "config", "--unset", "user.email")
		git(t, repo, "config", "user.useConfigOnly", "true")
		writeFile(t, filepath.Join(repo, "a.txt"), "a", 0o644)
		git(t, repo, "add", "a.txt")
		_, err := vcs.Commit(ctx, repo, "msg")
		wantKind(t, err, fault.Config, "committing in", "identity unknown")
	})
}

func TestTag(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t)
	sha := commitFile(t, dir, "a.txt", "a", "first")

	if err := vcs.Tag(ctx, dir, "v1.0.0", ""); err != nil {
		t.Fatalf("Tag lightweight: %v", err)
	}
	if got := git(t, dir, "cat-file", "-t", "v1.0.0"); got != "commit" {
		t.Errorf("got lightweight tag object type %q, want commit", got)
	}
	if err := vcs.Tag(ctx, dir, "v1.1.0", "Release 1.1\n\n#1 fixed"); err != nil {
		t.Fatalf("Tag annotated: %v", err)
	}
	if got := git(t, dir, "cat-file", "-t", "v1.1.0"); got != "tag" {
		t.Errorf("got annotated tag object type %q, want tag", got)
	}
	if got, want := git(t, dir, "tag", "-l", "--format=%(contents)", "v1.1.0"), "Release 1.1\n\n#1 fixed"; got != want {
		t.Errorf("got tag message %q, want %q", got, want)
	}
	if got := git(t, dir, "rev-parse", "v1.1.0^{commit}"); got != sha {
		t.Errorf("got tagged commit %s, want %s", got, sha)
	}

	wantKind(t, vcs.Tag(ctx, dir, "v1.0.0", "again"), fault.Validation, `tag "v1.0.0" already exists`)
	for _, name := range []string{"", "-f", "a..b", "a b", "v1^", "x:y"} {
		wantKind(t, vcs.Tag(ctx, dir, name, ""), fault.Validation, "invalid tag name")
	}
}
