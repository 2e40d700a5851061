package project

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	base    string // directory of the .gitignore, slash-separated, "" for the root
	re      *regexp.Regexp
	negate  bool // "!pattern": re-include
	dirOnly bool // "pattern/": matches directories only
	// anchored patterns (a slash before the end) match the path relative to
	// base; others match the base name at any depth below base.
	anchored bool
}

// ignoreRules is the stack of rules that applies inside one directory: the
// rules of every .gitignore from the root down, outermost first.
type ignoreRules []ignoreRule

// parseGitignore reads the rules of a .gitignore in directory base.
// Malformed lines (an unterminated character class) are skipped, as git
// does.
func parseGitignore(base string, data []byte) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Trailing spaces are ignored unless escaped.
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		r := ignoreRule{base: base}
		switch {
		case strings.HasPrefix(line, "!"):
			r.negate = true
			line = line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		re, err := compileGlob(line)
		if err != nil {
			continue
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the root-relative slash path rel (a directory when
// isDir) is ignored: the last rule that matches decides, so deeper
// .gitignore files and later lines override earlier ones.
func (rs ignoreRules) ignored(rel string, isDir bool) bool {
	ignored := false
	for i := range rs {
		r := &rs[i]
		if r.dirOnly && !isDir {
			continue
		}
		sub := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			sub = rel[len(r.base)+1:]
		}
		target := sub
		if !r.anchored {
			target = path.Base(sub)
		}
		if r.re.MatchString(target) {
			ignored = !r.negate
		}
	}
	return ignored
}

// compileGlob turns a gitignore-style glob into an anchored regular
// expression over slash paths: * and ? stay within one segment, [...] is a
// character class ([!...] negated), ** matches across segments, and \
// escapes the next character.
func compileGlob(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' {
				atStart := i == 0 || glob[i-1] == '/'
				j := i + 2
				switch {
				case atStart && j < len(glob) && glob[j] == '/':
					b.WriteString(`(?:.*/)?`) // "**/" : zero or more directories
					i = j
				case atStart && j == len(glob):
					b.WriteString(`.*`) // trailing "/**": everything inside
					i = j - 1
				default:
					b.WriteString(`[^/]*`) // "**" elsewhere acts as "*"
					i = j - 1
				}
				continue
			}
			b.WriteString(`[^/]*`)
		case '?':
			b.WriteString(`[^/]`)
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end == 0 && i+2 < len(glob) { // "[]...]": a literal ] first
				end = strings.IndexByte(glob[i+2:], ']') + 1
				if end == 0 {
					end = -1
				}
			}
			if end < 0 {
				return nil, fmt.Errorf("unterminated [ in %q", glob)
			}
			class := glob[i+1 : i+1+end]
			i += end + 1
			b.WriteByte('[')
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				b.WriteByte('^')
				class = class[1:]
			}
			b.WriteString(strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(class))
			b.WriteByte(']')
		case '\\':
			if i+1 < len(glob) {
				i++
				c = glob[i]
			}
			b.WriteString(regexp.QuoteMeta(string(c)))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

// hasGlobMeta reports whether s contains a glob metacharacter.
func hasGlobMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }
