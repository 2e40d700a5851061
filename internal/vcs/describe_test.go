package vcs

import (
	"context"
	"net/url"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	osName := osUser()
	if u, err := user.Current(); err != nil || osName != u.Username {
		t.Fatalf("got OS user %q, want the current user (%v)", osName, err)
	}

	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (where string, want Info)
	}{
		{"branch", func(t *testing.T, dir string) (string, Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			return dir, Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"subdirectory", func(t *testing.T, dir string) (string, Info) {
			sha := commitFile(t, dir, "sub/a.txt", "a", "first")
			return filepath.Join(dir, "sub"), Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"detached", func(t *testing.T, dir string) (string, Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			commitFile(t, dir, "b.txt", "b", "second")
			git(t, dir, "checkout", "--quiet", "--detach", sha)
			return dir, Info{User: "Test User", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"feature branch", func(t *testing.T, dir string) (string, Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			git(t, dir, "switch", "--quiet", "-c", "003-user-auth")
			return dir, Info{User: "Test User", Branch: "003-user-auth", Feature: "003-user-auth", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"feature branch under a prefix", func(t *testing.T, dir string) (string, Info) {
			sha := commitFile(t, dir, "a.txt", "a", "first")
			git(t, dir, "switch", "--quiet", "-c", "feature/012-export")
			return dir, Info{User: "Test User", Branch: "feature/012-export", Feature: "012-export", Repo: filepath.Base(dir), Root: dir, Head: sha}
		}},
		{"no commits yet", func(t *testing.T, dir string) (string, Info) {
			return dir, Info{User: "Test User", Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"email when no name", func(t *testing.T, dir string) (string, Info) {
			git(t, dir, "config", "--unset", "user.name")
			return dir, Info{User: "test@example.com", Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"OS user when no identity", func(t *testing.T, dir string) (string, Info) {
			git(t, dir, "config", "--unset", "user.name")
			git(t, dir, "config", "--unset", "user.email")
			return dir, Info{User: osName, Branch: "main", Repo: filepath.Base(dir), Root: dir}
		}},
		{"origin over ssh", func(t *testing.T, dir string) (string, Info) {
			git(t, dir, "remote", "add", "origin", "git@github.com:octo/hello-world.git")
			return dir, Info{User: "Test User", Branch: "main", Repo: "octo/hello-world", Root: dir}
		}},
		{"origin over https with a token", func(t *testing.T, dir string) (string, Info) {
			git(t, dir, "remote", "add", "origin", "https://x-access-token:ghp_secret@github.com/octo/hello")
			return dir, Info{User: "Test User", Branch: "main", Repo: "octo/hello", Root: dir}
		}},
		{"bare", func(t *testing.T, dir string) (string, Info) {
			bare := filepath.Join(dir, "project.git")
			git(t, dir, "init", "--quiet", "--bare", "--initial-branch=trunk", bare)
			return bare, Info{User: osName, Branch: "trunk", Repo: "project"}
		}},
		{"not a repository", func(t *testing.T, dir string) (string, Info) {
			plain, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return plain, Info{User: osName}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			where, want := tt.setup(t, newRepo(t))
			got, err := Describe(ctx, where)
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
	got, err := Describe(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != dir || got.Branch != "main" {
		t.Errorf("got Root %q Branch %q, want %q and main", got.Root, got.Branch, dir)
	}
}

func TestDescribeErrors(t *testing.T) {
	t.Run("missing directory", func(t *testing.T) {
		_, err := Describe(context.Background(), filepath.Join(t.TempDir(), "nope"))
		wantKind(t, err, fault.NotFound, "does not exist")
	})
	t.Run("git not on PATH", func(t *testing.T) {
		dir := newRepo(t)
		t.Setenv("PATH", t.TempDir())
		_, err := Describe(context.Background(), dir)
		wantKind(t, err, fault.Config, "git is not installed or not on PATH")
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Describe(ctx, newRepo(t))
		wantKind(t, err, fault.Cancelled)
	})
}

func TestRepoName(t *testing.T) {
	tests := []struct{ url, want string }{
		{"git@github.com:octo/hello.git", "octo/hello"},
		{"github.com:octo/hello", "octo/hello"},
		{"ssh://git@github.com:22/octo/hello.git", "octo/hello"},
		{"ssh://git@example.com/~user/hello.git", "user/hello"},
		{"https://github.com/octo/hello.git", "octo/hello"},
		{"https://github.com/octo/hello/", "octo/hello"},
		{"https://user:secret@ghe.example.com/org/team/repo.git", "team/repo"},
		{"git://example.com/octo/hello.git", "octo/hello"},
		{"https://example.com/solo.git", "solo"},
		{"file:///srv/git/project.git", "project"},
		{"/srv/git/project.git", "project"},
		{"../project/.git", "project"},
		{"./dir:with/colon", "colon"},
		{"", ""},
		{"https://example.com/", ""},
	}
	for _, tt := range tests {
		if got := repoName(tt.url); got != tt.want {
			t.Errorf("repoName(%q): got %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestFeatureOf(t *testing.T) {
	tests := []struct{ branch, want string }{
		{"003-user-auth", "003-user-auth"},
		{"feature/003-user-auth", "003-user-auth"},
		{"1234-long", ""},
		{"03-short", ""},
		{"003-", ""},
		{"003_x", ""},
		{"main", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := featureOf(tt.branch); got != tt.want {
			t.Errorf("featureOf(%q): got %q, want %q", tt.branch, got, tt.want)
		}
	}
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
		if _, err := Describe(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzRepoName checks that any remote URL gives at most "owner/name", and
// never the password of an http(s) URL.
func FuzzRepoName(f *testing.F) {
	for _, s := range []string{"git@github.com:octo/hello.git", "https://u:pw@h/o/n", "ssh://h:22/~u/r", "/a/b.git", "file:///x", "a:b/c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		got := repoName(remote)
		if strings.Count(got, "/") > 1 || strings.HasPrefix(got, "/") || strings.HasSuffix(got, "/") || strings.Contains(got, "//") {
			t.Errorf("repoName(%q) = %q, want at most owner/name", remote, got)
		}
		if u, err := url.Parse(remote); err == nil && strings.Contains(remote, "://") && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 4 && !strings.Contains(u.Path, pw) && strings.Contains(got, pw) {
				t.Errorf("repoName(%q) = %q, which holds the password", remote, got)
			}
		}
		if f := featureOf(got); f != "" && !strings.HasSuffix(got, f) {
			t.Errorf("featureOf(%q) = %q, want a suffix", got, f)
		}
	})
}
