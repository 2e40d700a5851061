package vcs

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Info is the standard git context of an event.
type Info struct {
	// User is `git config user.name`, else user.email, else the OS user.
	User string
	// Branch is the checked-out branch's short name, "" when HEAD is
	// detached (or outside a repository).
	Branch string
	// Feature is the spec-workflow feature named by the branch: the branch's
	// last "/"-separated component when it is three digits, a hyphen and at
	// least one more character ("003-user-auth" and "feature/003-user-auth"
	// both give "003-user-auth"); "" otherwise.
	Feature string
	// Repo is the repository's name: "owner/name" taken from the last two
	// path components of remote.origin.url (".git" removed; ssh, scp-like,
	// https and git URLs), the origin's last path component when it is a
	// local path or file:// URL, else the base name of Root (of the git
	// directory without ".git" in a bare repository).
	Repo string
	// Root is the absolute path of the working tree's top-level directory,
	// "" in a bare repository or outside a repository.
	Root string
	// Head is the full sha of the commit HEAD points at, "" in a repository
	// with no commits yet.
	Head string
}

// featurePattern matches a spec-workflow feature branch component.
var featurePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{3}-.+$`) })

// featureOf returns the feature named by branch, or "".
func featureOf(branch string) string {
	last := branch[strings.LastIndex(branch, "/")+1:]
	if featurePattern().MatchString(last) {
		return last
	}
	return ""
}

// Describe returns the git context of dir. Outside a git repository it
// returns an Info holding only User (from git's global configuration, else
// the OS user) and no error. A dir that does not exist is a fault.NotFound
// error; git missing from PATH is a fault.Config error.
func Describe(ctx context.Context, dir string) (Info, error) {
	if st, err := os.Stat(dir); err != nil {
		return Info{}, fault.Wrap(fault.NotFound, err, "directory %s does not exist", dir)
	} else if !st.IsDir() {
		return Info{}, fault.New(fault.Validation, "%s is not a directory", dir)
	}
	var info Info
	inRepo, bare := true, false
	if out, err := run(ctx, dir, nil, "rev-parse", "--show-toplevel"); err == nil {
		info.Root = strings.TrimSpace(out)
	} else if notARepo(err) {
		inRepo = false
	} else if isBare(err) {
		bare = true
	} else {
		return Info{}, failed(err, "reading the git repository at %s", dir)
	}
	cfg, err := configValues(ctx, dir)
	if err != nil {
		return Info{}, err
	}
	info.User = cfg["user.name"]
	if info.User == "" {
		info.User = cfg["user.email"]
	}
	if info.User == "" {
		info.User = osUser()
	}
	if !inRepo {
		return info, nil
	}
	out, err := run(ctx, dir, nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	switch code, ok := exitCode(err); {
	case err == nil:
		info.Branch = strings.TrimSpace(out)
	case ok && code == 1: // detached HEAD
	default:
		return Info{}, failed(err, "reading the current branch of %s", dir)
	}
	out, err = run(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	switch code, ok := exitCode(err); {
	case err == nil:
		info.Head = strings.TrimSpace(out)
	case ok && code == 1: // no commits yet
	default:
		return Info{}, failed(err, "reading HEAD of %s", dir)
	}
	info.Feature = featureOf(info.Branch)
	info.Repo = repoName(cfg["remote.origin.url"])
	if info.Repo == "" && bare {
		if out, err := run(ctx, dir, nil, "rev-parse", "--absolute-git-dir"); err == nil {
			info.Repo = strings.TrimSuffix(filepath.Base(strings.TrimSpace(out)), ".git")
		}
	}
	if info.Repo == "" && info.Root != "" {
		info.Repo = filepath.Base(info.Root)
	}
	return info, nil
}

// isBare reports whether err is git refusing --show-toplevel because the
// repository has no working tree.
func isBare(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && ge.code == 128 && strings.Contains(ge.stderr, "work tree")
}

// notARepo reports whether err is git saying dir is not in a repository.
func notARepo(err error) bool {
	var ge *gitError
	return errors.As(err, &ge) && ge.code == 128 && strings.Contains(ge.stderr, "not a git repository")
}

// configValues reads user.name, user.email and remote.origin.url in one git
// call. Outside a repository only the global and system values are seen.
func configValues(ctx context.Context, dir string) (map[string]string, error) {
	out, err := run(ctx, dir, nil, "config", "--get-regexp", `^(user\.name|user\.email|remote\.origin\.url)$`)
	if code, ok := exitCode(err); ok && code == 1 {
		return map[string]string{}, nil // none set
	} else if err != nil {
		return nil, failed(err, "reading the git configuration of %s", dir)
	}
	values := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		key, value, _ := strings.Cut(line, " ")
		if key != "" {
			values[strings.ToLower(key)] = strings.TrimSpace(value) // last one wins, as in git
		}
	}
	return values, nil
}

// osUser returns the name of the user running Switchboard.
func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, name := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return ""
}

// repoName derives "owner/name" from a remote URL; see [Info.Repo]. It
// never returns credentials that the URL may carry.
func repoName(remote string) string {
	remote = strings.TrimSpace(remote)
	if remote == "" {
		return ""
	}
	var path string
	local := false
	switch {
	case strings.Contains(remote, "://"):
		u, err := url.Parse(remote)
		if err != nil {
			return ""
		}
		path = u.Path
		local = u.Scheme == "file"
	case strings.HasPrefix(remote, "/") || strings.HasPrefix(remote, "."):
		path, local = remote, true
	default:
		// scp-like [user@]host:path; a colon after the first slash makes
		// it a local path (git's own rule).
		colon := strings.Index(remote, ":")
		slash := strings.Index(remote, "/")
		if colon < 0 || (slash >= 0 && slash < colon) {
			path, local = remote, true
		} else {
			path = remote[colon+1:]
		}
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), "/.git")
	path = strings.TrimSuffix(path, ".git")
	var parts []string
	for _, p := range strings.Split(path, "/") {
		if p = strings.TrimPrefix(p, "~"); p != "" {
			parts = append(parts, p)
		}
	}
	switch {
	case len(parts) == 0:
		return ""
	case local || len(parts) == 1:
		return parts[len(parts)-1]
	default:
		return parts[len(parts)-2] + "/" + parts[len(parts)-1]
	}
}
