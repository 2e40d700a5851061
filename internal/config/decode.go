package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// expectKind records a problem unless n has one of the given kinds.
func (ps *problems) expectKind(n *node, field string, want string, kinds ...kind) bool {
	for _, k := range kinds {
		if n.kind == k {
			return true
		}
	}
	ps.add(n.pos, field, fmt.Sprintf("must be %s, not %s", want, n.kind.describe()), "", nil)
	return false
}

// str reads a string. Numbers and booleans are taken as written (PORT:
// 8080 is "8080").
func (ps *problems) str(n *node, field string) (string, bool) {
	if n.kind == kindNull || n.kind == kindMap || n.kind == kindSeq {
		ps.add(n.pos, field, fmt.Sprintf("must be a string, not %s", n.kind.describe()), "", nil)
		return "", false
	}
	return n.text, true
}

// strList reads a list of strings.
func (ps *problems) strList(n *node, field string) ([]*node, bool) {
	if n.kind == kindNull {
		return nil, true
	}
	if !ps.expectKind(n, field, "a list of strings", kindSeq) {
		return nil, false
	}
	ok := true
	for i, it := range n.items {
		if it.kind == kindNull {
			ok = false // taken out as wrong, and reported, by the schema
			continue
		}
		if _, good := ps.str(it, fmt.Sprintf("%s[%d]", field, i)); !good {
			ok = false
		}
	}
	return n.items, ok
}

// strMap reads a mapping of strings. An empty value must be written "".
func (ps *problems) strMap(n *node, field string) ([]pair, bool) {
	if n.kind == kindNull {
		return nil, true
	}
	if !ps.expectKind(n, field, "a mapping of names to strings", kindMap) {
		return nil, false
	}
	ok := true
	for _, p := range n.pairs {
		f := field + "." + p.key
		if p.value.kind == kindNull {
			ps.add(p.value.pos, f, "must be a string, not empty", fmt.Sprintf(`write %s: "" for an empty value`, p.key), nil)
			ok = false
			continue
		}
		if _, good := ps.str(p.value, f); !good {
			ok = false
		}
	}
	return n.pairs, ok
}

// boolean reads true or false.
func (ps *problems) boolean(n *node, field string) (bool, bool) {
	if n.kind != kindBool {
		ps.add(n.pos, field, fmt.Sprintf("must be true or false, not %s", n.kind.describe()), "", nil)
		return false, false
	}
	return n.text == "true", true
}

// integer reads a whole number.
func (ps *problems) integer(n *node, field string) (int, bool) {
	if n.kind == kindInt {
		if v, err := strconv.ParseInt(n.text, 0, 32); err == nil {
			return int(v), true
		}
		ps.add(n.pos, field, fmt.Sprintf("number %s is out of range", n.text), "", nil)
		return 0, false
	}
	ps.add(n.pos, field, fmt.Sprintf("must be a whole number, not %s", n.kind.describe()), "", nil)
	return 0, false
}

// duration reads a Go duration string ("30s", "1m30s") or a number of
// seconds (30, 0.5).
func (ps *problems) duration(n *node, field string) (time.Duration, bool) {
	bad := func() (time.Duration, bool) {
		ps.add(n.pos, field, fmt.Sprintf("invalid duration %q", n.text), "use a duration such as 30s or 1m30s, or a number of seconds", nil)
		return 0, false
	}
	switch n.kind {
	case kindInt, kindFloat, kindString:
	default:
		ps.add(n.pos, field, fmt.Sprintf("must be a duration, not %s", n.kind.describe()), "use a duration such as 30s or 1m30s, or a number of seconds", nil)
		return 0, false
	}
	s := strings.TrimSpace(n.text)
	if d, err := time.ParseDuration(s); err == nil && n.kind == kindString {
		return d, true
	}
	var secs float64
	if n.kind == kindInt {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return bad()
		}
		secs = float64(v)
	} else {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return bad()
		}
		secs = v
	}
	if math.Abs(secs) > float64(math.MaxInt64/int64(time.Second)) {
		ps.add(n.pos, field, fmt.Sprintf("duration %s is too large", n.text), "", nil)
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// known checks the keys of a mapping against the known ones, recording an
// unknown-field problem (with a suggestion) for each other key.
func (ps *problems) known(n *node, field string, known []string) {
	for _, p := range n.pairs {
		if !contains(known, p.key) {
			ps.unknown(p, join(field, p.key), known)
		}
	}
}

// unknown records an unknown-field problem for p.
func (ps *problems) unknown(p pair, field string, known []string) {
	sug := suggest(p.key, known)
	fix := "remove it; docs/configuration.md lists the fields"
	if sug != "" {
		fix = fmt.Sprintf("did you mean %q?", sug)
	}
	ps.add(p.keyPos, field, fmt.Sprintf("unknown field %q", p.key), fix, &UnknownFieldError{Field: field, Suggestion: sug})
}

// join appends a key to a dotted field path.
func join(field, key string) string {
	switch {
	case field == "":
		return key
	case key == "":
		return field
	}
	return field + "." + key
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// suggest returns the known key closest to key, if it is close enough to
// be a likely typo, or "" (schema.Suggest: the schema's messages and the
// resolver's use the one measure).
func suggest(key string, known []string) string { return schema.Suggest(key, known) }
