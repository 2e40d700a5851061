package project

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreRules is the stack of .gitignore patterns that applies inside one
// directory: the patterns of every .gitignore from the root down, outermost
// first (go-git's matcher lets the last match decide). It is used where
// git itself cannot answer: a project root that is not in a git work tree.
type ignoreRules []gitignore.Pattern

// parseGitignore reads the patterns of a .gitignore in the root-relative
// slash directory base ("" for the root). Matching is go-git's; this only
// splits the lines, drops comments and blank lines, and gives bracket
// expressions git's "[!...]" negation, which go-git passes to
// path/filepath.Match unchanged (where only "[^...]" negates).
func parseGitignore(base string, data []byte) ignoreRules {
	var domain []string
	if base != "" {
		domain = strings.Split(base, "/")
	}
	var rules ignoreRules
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		rules = append(rules, gitignore.ParsePattern(gitBrackets(line), domain))
	}
	return rules
}

// ignored reports whether the root-relative slash path rel (a directory when
// isDir) is ignored.
func (rs ignoreRules) ignored(rel string, isDir bool) bool {
	if len(rs) == 0 {
		return false
	}
	return gitignore.NewMatcher(rs).Match(strings.Split(rel, "/"), isDir)
}

// gitBrackets rewrites git's negated bracket expression "[!...]" as
// "[^...]", the form path.Match knows, leaving escaped brackets alone.
func gitBrackets(glob string) string {
	if !strings.Contains(glob, "[!") {
		return glob
	}
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		b.WriteByte(c)
		switch {
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteByte(glob[i])
		case c == '[' && i+1 < len(glob) && glob[i+1] == '!':
			b.WriteByte('^')
			i++
		}
	}
	return b.String()
}

// checkGlob reports a glob that path.Match cannot use (an unterminated
// bracket expression, a trailing backslash), segment by segment as the
// matcher applies it.
func checkGlob(glob string) error {
	for _, seg := range strings.Split(gitBrackets(glob), "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("%q is not a valid glob segment: %w", seg, err)
		}
	}
	return nil
}

// hasGlobMeta reports whether s contains a glob metacharacter.
func hasGlobMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }
