package vcs_test

import (
	"context"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/vcs"
)

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	u, err := user.Current()
	if err != nil {
		t.Fatalf("looking up the current user: %v", err)
	}
	osName := u.Username

	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (where string, want vcs.Info)
	}{
		{"branch", func(t *testing.T, dir string) (string, vcs.Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			return dir, vcs.Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"subdirectory", func(t *testing.T, dir string) (string, vcs.Info) {
			sha := commitFile(t, dir, "sub/a.txt", "a", "first")
			return filepath.Join(dir, "sub"), vcs.Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"detached", func(t *testing.T, dir string) (string, vcs.Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			commitFile(t, dir, "b.txt", "b", "second")
			git(t, dir, "checkout", "--quiet", "--detach", sha)
			return dir, vcs.Info{User: "Test User", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"feature branch", func(t *testing.T, dir string) (string, vcs.Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			git(t, dir, "switch", "--quiet", "-c", "003-user-auth")
			return dir, vcs.Info{User: "Test User", Branch: "003-user-auth", Feature: "003-user-auth", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"feature branch under a prefix", func(t *testing.T, dir string) (string, vcs.Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			git(t, dir, "switch", "--quiet", "-c", "feature/012-export")
			return dir, vcs.Info{User: "Test User", Branch: "feature/012-export", Feature: "012-export", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"no commits yet", func(t *testing.T, dir string) (string, vcs.Info) {
			return dir, vcs.Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"email when no name", func(t *testing.T, dir string) (string, vcs.Info) {
			git(t, dir, "config", "--unset", "user.name")
			return dir, vcs.Info{User: "test@example.com", Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"OS user when no identity", func(t *testing.T, dir string) (string, vcs.Info) {
			git(t, dir, "config", "--unset", "user.name")
			git(t, dir, "config", "--unset", "user.email")
			return dir, vcs.Info{User: osName, Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"origin over ssh", func(t *testing.T, dir string) (string, vcs.Info) {
			git(t, dir, "remote", "add", "origin", "git@github.com:octo/hello-world.git")
			return dir, vcs.Info{User: "Test User", Branch: "main", Repo: "octo/hello-world", Root: dir}
		}},
		{"origin over https with a token", func(t *testing.T, dir string) (string, vcs.Info) {
			git(t, dir, "remote", "add", "origin", "https://x-access-token:ghp_secret@github.com/octo/hello")
			return dir, vcs.Info{User: "Test User", Branch: "main", Repo: "octo/hello", Root: dir}
		}},
		{"bare", func(t *testing.T, dir string) (string, vcs.Info) {
			bare := filepath.Join(dir, "project.git")
			git(t, dir, "init", "--quiet", "--bare", "--initial-branch=trunk", bare)
			return bare, vcs.Info{User: osName, Branch: "trunk", Repo: "project"}
		}},
		{"not a repository", func(t *testing.T, dir string) (string, vcs.Info) {
			plain, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return plain, vcs.Info{User: osName}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where, want := tt.setup(t, newRepo(t))
			got, err := vcs.Describe(ctx, where)
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Describe (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDescribeIgnoresSurroundingGitDir checks that GIT_DIR and
// GIT_WORK_TREE set by a surrounding git (a hook) do not redirect Describe
// to that repository.
func TestDescribeIgnoresSurroundingGitDir(t *testing.T) {
	other := newRepo(t)
	git(t, other, "switch", "--quiet", "-c", "007-other")
	dir := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	got, err := vcs.Describe(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != dir || got.Branch != "main" {
		t.Errorf("got Root %q Branch %q, want %q and main", got.Root, got.Branch, dir)
	}
}

func TestDescribeErrors(t *testing.T) {
	t.Run("missing directory", func(t *testing.T) {
		_, err := vcs.Describe(context.Background(), filepath.Join(t.TempDir(), "nope"))
		wantKind(t, err, fault.NotFound, "does not exist")
	})
	t.Run("git not on PATH", func(t *testing.T) {
		dir := newRepo(t)
		t.Setenv("PATH", t.TempDir())
		_, err := vcs.Describe(context.Background(), dir)
		wantKind(t, err, fault.Config, "git is not installed or not on PATH")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := vcs.Describe(ctx, newRepo(t))
		wantKind(t, err, fault.Cancelled)
	})
}

// BenchmarkDescribe measures the git context an event costs.
func BenchmarkDescribe(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=003-x"},
		{"-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "--quiet", "--allow-empty", "-m", "x"},
	} {
		if out, err := exec.Command(gitPath, append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := vcs.Describe(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}
