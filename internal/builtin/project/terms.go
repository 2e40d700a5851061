package project

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// termDict numbers the words of the index, so that passages hold small
// integers instead of strings and each word is stored once. Only the index
// build adds words; queries look them up concurrently.
type termDict struct {
	mu    sync.RWMutex
	ids   map[string]uint32
	terms []string
}

func newTermDict() *termDict { return &termDict{ids: map[string]uint32{}} }

// id returns the id of term, adding it when new. Only the build goroutine
// calls it, so its own unlocked map reads cannot race with a write.
func (d *termDict) id(term []byte) uint32 {
	if id, ok := d.ids[string(term)]; ok {
		return id
	}
	s := string(term)
	d.mu.Lock()
	defer d.mu.Unlock()
	id := uint32(len(d.terms))
	d.ids[s] = id
	d.terms = append(d.terms, s)
	return id
}

// lookup returns the id of term, if it is known.
func (d *termDict) lookup(term string) (uint32, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	id, ok := d.ids[term]
	return id, ok
}

// size returns how many words the dictionary holds.
func (d *termDict) size() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.terms)
}

// eachTerm calls fn with every searchable word of s, in lower case: each
// identifier and, for compound identifiers (camelCase, snake_case), each
// of its parts. Words shorter than 2 or longer than maxTermLen bytes are
// left out. term is only valid during the call; buf is scratch space,
// returned for reuse.
func eachTerm(s string, buf []byte, fn func(term []byte)) []byte {
	var bounds [][2]int
	for i := 0; i < len(s); {
		if !isIdentByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		id := s[i:j]
		i = j
		if len(id) < 2 || len(id) > maxTermLen {
			continue
		}
		buf = appendLower(buf[:0], id)
		fn(buf)
		bounds = identParts(id, bounds[:0])
		if len(bounds) < 2 {
			continue
		}
		for _, b := range bounds {
			if b[1]-b[0] >= 2 {
				buf = appendLower(buf[:0], id[b[0]:b[1]])
				fn(buf)
			}
		}
	}
	return buf
}

// appendLower appends s in lower case (ASCII letters; other bytes as they
// are).
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendTerms appends the searchable words of s (see eachTerm) as strings.
func appendTerms(dst []string, s string) []string {
	eachTerm(s, nil, func(t []byte) { dst = append(dst, string(t)) })
	return dst
}

func isIdentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c >= utf8.RuneSelf
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// identParts appends the byte ranges of the parts of an ASCII identifier
// (see splitIdent); a non-ASCII identifier is one part.
func identParts(id string, out [][2]int) [][2]int {
	for i := 0; i < len(id); i++ {
		if id[i] >= utf8.RuneSelf {
			return append(out, [2]int{0, len(id)})
		}
	}
	start := -1
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c == '_' {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := id[i-1]
		if (isLower(prev) || isDigit(prev)) && isUpper(c) ||
			isUpper(prev) && isUpper(c) && i+1 < len(id) && isLower(id[i+1]) {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(id)})
	}
	return out
}

// splitIdent splits an identifier at underscores, at lower-to-upper case
// changes and before the last capital of an acronym followed by a lower-case
// letter: "parseHTTPRequest_v2" → parse, HTTP, Request, v2.
func splitIdent(id string) []string {
	var parts []string
	for _, seg := range strings.FieldsFunc(id, func(r rune) bool { return r == '_' }) {
		rs := []rune(seg)
		start := 0
		for i := 1; i < len(rs); i++ {
			prev, cur := rs[i-1], rs[i]
			split := (unicode.IsLower(prev) || unicode.IsDigit(prev)) && unicode.IsUpper(cur) ||
				unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if split {
				parts = append(parts, string(rs[start:i]))
				start = i
			}
		}
		parts = append(parts, string(rs[start:]))
	}
	return parts
}

// splitLines splits data into lines without their terminators.
func splitLines(data []byte) []string {
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// stopWords are dropped from natural-language queries.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"can": true, "code": true, "do": true, "does": true, "for": true, "from": true, "how": true,
	"i": true, "in": true, "is": true, "it": true, "me": true, "of": true, "on": true, "or": true,
	"show": true, "that": true, "the": true, "this": true, "to": true, "what": true, "where": true,
	"which": true, "who": true, "why": true, "with": true, "find": true, "defined": true, "implemented": true,
}

// queryTerms returns the distinct search words of a query text.
func queryTerms(text string) []string {
	var out []string
	for _, t := range appendTerms(nil, text) {
		if !stopWords[t] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
