package project

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// gitListLimit bounds the output of git ls-files (NUL-separated paths):
// about a million files of typical path length. A larger listing is read
// by walking the tree instead.
const gitListLimit = 64 << 20

// gitFiles lists the files git shows under the root: tracked files and the
// untracked ones that no ignore rule excludes (every .gitignore,
// .git/info/exclude and core.excludesFile — what `git status` treats as
// ignored, which a matcher of .gitignore files alone cannot know). ok is
// false when git cannot answer — the root is not in a work tree, git is
// not installed, the repository is not trusted (safe.directory) — and the
// caller walks the tree itself.
func (ix *index) gitFiles(ctx context.Context) (entries []walkEntry, ok bool, err error) {
	out, cut, err := gitRunner{dir: ix.root}.run(ctx, gitListLimit,
		"-c", "core.fsmonitor=false", // never run a repository's configured command
		"ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		ix.logger.Debug("git cannot list the files; walking the tree with its .gitignore files", logKeyRoot, ix.root, logKeyErr, err)
		return nil, false, nil
	}
	if cut > 0 {
		ix.logger.Debug("git's file list is too long; walking the tree with its .gitignore files", logKeyRoot, ix.root)
		return nil, false, nil
	}
	seen := make(map[string]bool)
	for _, rel := range bytes.Split(out, []byte{0}) {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		name := string(rel)
		// Empty: the final separator. A trailing slash: an untracked
		// nested repository, whose files are its own.
		if name == "" || strings.HasSuffix(name, "/") || seen[name] {
			continue
		}
		seen[name] = true // a conflicted path is listed once per stage
		if !localPath(name) {
			return nil, false, fmt.Errorf("git listed %q, which is not a path inside %s", name, ix.root)
		}
		info, err := os.Lstat(filepath.Join(ix.root, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue // tracked but deleted from the work tree
		case err != nil:
			ix.logger.Debug("skipping unreadable file", logKeyErr, err)
			continue
		case !info.Mode().IsRegular() || info.Size() > ix.maxFileSize:
			continue // symbolic links, submodules, oversized files
		}
		entries = append(entries, walkEntry{rel: name, size: info.Size(), modTime: info.ModTime()})
	}
	return entries, true, nil
}

// localPath reports whether the slash path rel stays inside the directory
// it is relative to.
func localPath(rel string) bool { return filepath.IsLocal(filepath.FromSlash(rel)) }
