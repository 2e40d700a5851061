package config

import (
	"fmt"
	"iter"
	"strings"

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
		fix := ""
		if n.kind != kindNull && n.isScalar() {
			fix = schema.BoolFix(field[strings.LastIndex(field, ".")+1:], n.text)
		}
		ps.add(n.pos, field, fmt.Sprintf("must be true or false, not %s", n.kind.describe()), fix, nil)
		return false, false
	}
	return n.text == "true", true
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

// present yields the items of a list that are there, with their indexes:
// those the schema found wrong were taken out (see prune).
func present(n *node) iter.Seq2[int, *node] {
	return func(yield func(int, *node) bool) {
		for i, it := range n.items {
			if it.kind != kindNull && !yield(i, it) {
				return
			}
		}
	}
}
