package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Scope limits a query to part of the project (seed 003's scope).
type Scope struct {
	// FilePatterns are globs a file must match (any of them) to be searched.
	FilePatterns []string `json:"filePatterns,omitempty"`
	// Directories are the directories to search, relative to the root.
	Directories []string `json:"directories,omitempty"`
	// ExcludePatterns are globs of files and directories to leave out.
	ExcludePatterns []string `json:"excludePatterns,omitempty"`
}

// Scope limits.
const (
	maxScopeEntries = 100
	maxScopeEntry   = 512 // bytes
)

// scopeFilter is a validated Scope.
type scopeFilter struct {
	dirs    []string // root-relative, slash-separated; "" is the root
	include []scopePattern
	exclude []scopePattern
}

// scopePattern is one file pattern, with gitignore semantics (go-git's
// matcher): a pattern without a slash matches a name at any depth, one
// with a slash matches from the root, and either covers what is inside a
// directory it matches, so that "vendor" or "internal/auth" cover their
// files.
type scopePattern struct {
	p gitignore.Pattern
}

// matches reports whether the pattern matches rel or one of its parent
// directories.
func (p scopePattern) matches(rel string) bool {
	return p.p.Match(strings.Split(rel, "/"), false) != gitignore.NoMatch
}

// allow reports whether the root-relative file rel is in scope.
func (f *scopeFilter) allow(rel string) bool {
	if len(f.dirs) > 0 {
		in := false
		for _, d := range f.dirs {
			if d == "" || rel == d || strings.HasPrefix(rel, d+"/") {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	if len(f.include) > 0 {
		in := false
		for _, p := range f.include {
			if p.matches(rel) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, p := range f.exclude {
		if p.matches(rel) {
			return false
		}
	}
	return true
}

// empty reports whether the filter lets everything through.
func (f *scopeFilter) empty() bool {
	return len(f.dirs) == 0 && len(f.include) == 0 && len(f.exclude) == 0
}

// validateScope checks every entry of s against root (absolute, symlinks
// resolved) and compiles it. Each problem is a validation field detail
// naming the entry, e.g. scope.directories[0].
func validateScope(root string, s Scope) (*scopeFilter, []fault.FieldDetail) {
	var problems []fault.FieldDetail
	f := &scopeFilter{}
	check := func(field string, list []string) bool {
		if len(list) > maxScopeEntries {
			problems = append(problems, fault.FieldDetail{Field: field,
				Message:    fmt.Sprintf("has %d entries; at most %d are allowed", len(list), maxScopeEntries),
				Suggestion: "Use broader patterns or a directory"})
			return false
		}
		return true
	}
	if check("scope.directories", s.Directories) {
		for i, d := range s.Directories {
			field := fmt.Sprintf("scope.directories[%d]", i)
			rel, fd := resolveInside(root, field, d, true)
			if fd != nil {
				problems = append(problems, *fd)
				continue
			}
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil || !fi.IsDir() {
				problems = append(problems, fault.FieldDetail{Field: field, ReceivedValue: d, Received: true,
					Message:    "is not a directory",
					Suggestion: "Name a directory here; to search particular files, use scope.filePatterns"})
				continue
			}
			f.dirs = append(f.dirs, rel)
		}
	}
	for _, list := range []struct {
		field string
		in    []string
		out   *[]scopePattern
	}{{"scope.filePatterns", s.FilePatterns, &f.include}, {"scope.excludePatterns", s.ExcludePatterns, &f.exclude}} {
		if !check(list.field, list.in) {
			continue
		}
		for i, p := range list.in {
			field := fmt.Sprintf("%s[%d]", list.field, i)
			sp, fd := compileScopePattern(root, field, p)
			if fd != nil {
				problems = append(problems, *fd)
				continue
			}
			*list.out = append(*list.out, sp)
		}
	}
	return f, problems
}

// compileScopePattern validates and compiles one file pattern. Patterns are
// relative to the root; one that names an existing path literally is
// resolved like a directory, so a link out is rejected.
func compileScopePattern(root, field, p string) (scopePattern, *fault.FieldDetail) {
	bad := func(msg, suggestion string) (scopePattern, *fault.FieldDetail) {
		return scopePattern{}, &fault.FieldDetail{Field: field, Message: msg, ReceivedValue: p, Received: true, Suggestion: suggestion}
	}
	if fd := checkEntry(field, p); fd != nil {
		return scopePattern{}, fd
	}
	p = filepath.ToSlash(p)
	if path.IsAbs(p) || filepath.IsAbs(p) {
		if hasGlobMeta(p) {
			return bad("must be relative to the project root", "Write the pattern relative to the project root, e.g. internal/**/*.go")
		}
		rel, fd := resolveInside(root, field, p, false)
		if fd != nil {
			return scopePattern{}, fd
		}
		p = rel
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return bad("must not contain '..': patterns cannot reach outside the project root", "Write the pattern relative to the project root without '..'")
		}
	}
	p = strings.TrimPrefix(strings.TrimSuffix(p, "/"), "./")
	if p == "" || p == "." {
		return bad("matches nothing", "Use a glob such as *.go or internal/**")
	}
	if !hasGlobMeta(p) {
		if _, fd := resolveInside(root, field, p, false); fd != nil {
			return scopePattern{}, fd
		}
	}
	if err := checkGlob(p); err != nil {
		return bad("is not a valid glob: "+err.Error(), "Use *, ?, ** and [...] only; escape other special characters with \\")
	}
	if strings.HasPrefix(p, "!") {
		p = `\` + p // a name starting with "!", not a gitignore re-inclusion
	}
	return scopePattern{p: gitignore.ParsePattern(gitBrackets(p), nil)}, nil
}

// checkEntry applies the size and character limits to one scope entry.
func checkEntry(field, p string) *fault.FieldDetail {
	switch {
	case strings.TrimSpace(p) == "":
		return &fault.FieldDetail{Field: field, Message: "must not be empty", ReceivedValue: p, Received: true}
	case len(p) > maxScopeEntry:
		return &fault.FieldDetail{Field: field, Message: fmt.Sprintf("is %d bytes long; at most %d are allowed", len(p), maxScopeEntry)}
	case strings.ContainsRune(p, 0):
		return &fault.FieldDetail{Field: field, Message: "must not contain a NUL character"}
	}
	return nil
}

// resolveInside resolves p (relative to root, or absolute) with every
// symbolic link followed and returns it relative to root, slash-separated
// ("" for the root itself). A path that leaves the root — by "..", by being
// absolute elsewhere, or through a symbolic link — is rejected. When
// mustExist is false a path that does not exist is accepted if it stays
// inside the root lexically.
func resolveInside(root, field, p string, mustExist bool) (string, *fault.FieldDetail) {
	if fd := checkEntry(field, p); fd != nil {
		return "", fd
	}
	outside := func(how string) (string, *fault.FieldDetail) {
		return "", &fault.FieldDetail{Field: field, ReceivedValue: p, Received: true,
			Message:    how + "; only paths inside the project root are allowed",
			Suggestion: "Give a path relative to the project root that stays inside it"}
	}
	native := filepath.FromSlash(p)
	abs := native
	if !filepath.IsAbs(native) {
		abs = filepath.Join(root, native)
		if !within(root, abs) {
			return outside("leaves the project root through '..'")
		}
	}
	resolved, err := filepath.EvalSymlinks(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return "", &fault.FieldDetail{Field: field, ReceivedValue: p, Received: true,
				Message: "does not exist in the project", Suggestion: "List the directories of the project and pick an existing one"}
		}
		if !within(root, abs) {
			return outside("is an absolute path outside the project root")
		}
		rel, _ := filepath.Rel(root, abs)
		return cleanRel(rel), nil
	case err != nil:
		return "", &fault.FieldDetail{Field: field, ReceivedValue: p, Received: true, Message: "cannot be resolved: " + err.Error()}
	}
	if !within(root, resolved) {
		if filepath.IsAbs(native) && !within(root, abs) {
			return outside("is an absolute path outside the project root")
		}
		return outside("is or passes through a symbolic link that leads outside the project root")
	}
	rel, _ := filepath.Rel(root, resolved)
	return cleanRel(rel), nil
}

// within reports whether the clean absolute path p is root or inside it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func cleanRel(rel string) string {
	rel = filepath.ToSlash(rel)
	if rel == "." {
		return ""
	}
	return rel
}
