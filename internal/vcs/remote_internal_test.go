// Internal on purpose: tests the remote-URL and branch parsers (repoName, featureOf) over inputs no repository of a test would have.

package vcs

import (
	"net/url"
	"strings"
	"testing"
)

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
