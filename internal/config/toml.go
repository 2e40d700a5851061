package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its configuration in TOML (config.toml). It is read with
// github.com/pelletier/go-toml/v2 (docs/decisions.md): the document is
// first decoded whole, which checks it as TOML (duplicate keys, redefined
// tables) with line and column, then walked with the library's parser to
// build the same position-carrying tree as YAML and JSON files.

// tomlTable matches a TOML table header line, [a.b] or [[a]].
var tomlTable = lazyRegexp(`^\[\[?[A-Za-z0-9_."' -]+\]\]?\s*(#.*)?$`)

// tomlKeyValue matches a TOML key = value line.
var tomlKeyValue = lazyRegexp(`^[A-Za-z0-9_."'-]+(\s*\.\s*[A-Za-z0-9_"'-]+)*\s*=`)

// looksLikeTOML reports whether a file is TOML: its name ends in .toml, or
// its first line that is not blank or a comment is a table header or a
// key = value.
func looksLikeTOML(file, text string) bool {
	if strings.HasSuffix(strings.ToLower(file), ".toml") {
		return true
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return tomlTable().MatchString(line) || tomlKeyValue().MatchString(line)
	}
	return false
}

// parseTOML parses a TOML document into a node tree.
func parseTOML(file, text string, ps *problems) *node {
	var check map[string]any
	if err := toml.Unmarshal([]byte(text), &check); err != nil {
		pos := Pos{File: file}
		var de *toml.DecodeError
		msg := err.Error()
		if errors.As(err, &de) {
			pos.Line, pos.Col = de.Position()
			msg = strings.TrimPrefix(de.Error(), "toml: ")
		}
		if !strings.HasSuffix(strings.ToLower(file), ".toml") {
			// Only guessed to be TOML from its first line: say what is
			// read instead.
			ps.add(Pos{File: file}, "", fmt.Sprintf("%s is in no format Switchboard reads (it is not JSON, TOML or YAML)", filepath.Base(file)),
				"give a file in one of these formats: "+strings.Join(SupportedFormats, "; "), nil)
			return nil
		}
		ps.add(pos, "", "invalid TOML: "+msg, "", nil)
		return nil
	}
	t := &tomlTree{file: file, lines: lineStarts(text)}
	root := &node{kind: kindMap, pos: Pos{File: file, Line: 1, Col: 1}}
	current := root
	var p unstable.Parser
	p.Reset([]byte(text))
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			current = t.table(root, e.Key(), false)
		case unstable.ArrayTable:
			current = t.table(root, e.Key(), true)
		case unstable.KeyValue:
			t.keyValue(current, e)
		}
	}
	if err := p.Error(); err != nil {
		ps.add(Pos{File: file}, "", "invalid TOML: "+err.Error(), "", nil)
		return nil
	}
	return root
}

// tomlTree builds nodes from the parser's expressions.
type tomlTree struct {
	file  string
	lines []int // the offset at which each line starts
}

// lineStarts returns the offset of the start of each line of text.
func lineStarts(text string) []int {
	out := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// pos is the position of a parser node.
func (t *tomlTree) pos(n *unstable.Node) Pos {
	off := int(n.Raw.Offset)
	if n.Raw.Length == 0 && off == 0 {
		if c := n.Child(); c != nil {
			return t.pos(c)
		}
	}
	line := sort.Search(len(t.lines), func(i int) bool { return t.lines[i] > off })
	return Pos{File: t.file, Line: line, Col: off - t.lines[line-1] + 1}
}

// child returns the value of key in m, adding a mapping there if absent.
// A list (an array of tables) yields its last mapping, as TOML reads
// [a.b] after [[a]].
func (t *tomlTree) child(m *node, key string, pos Pos) *node {
	if p := m.get(key); p != nil {
		if p.value.kind == kindSeq && len(p.value.items) > 0 {
			return p.value.items[len(p.value.items)-1]
		}
		return p.value
	}
	c := &node{kind: kindMap, pos: pos}
	m.pairs = append(m.pairs, pair{key: key, keyPos: pos, value: c})
	return c
}

// table returns the mapping a [table] or [[array table]] header opens.
func (t *tomlTree) table(root *node, keys unstable.Iterator, array bool) *node {
	var parts []*unstable.Node
	for keys.Next() {
		parts = append(parts, keys.Node())
	}
	m := root
	for i, k := range parts {
		pos := t.pos(k)
		if i < len(parts)-1 || !array {
			m = t.child(m, string(k.Data), pos)
			continue
		}
		item := &node{kind: kindMap, pos: pos}
		if p := m.get(string(k.Data)); p != nil {
			p.value.items = append(p.value.items, item)
		} else {
			m.pairs = append(m.pairs, pair{key: string(k.Data), keyPos: pos, value: &node{kind: kindSeq, pos: pos, items: []*node{item}}})
		}
		m = item
	}
	return m
}

// keyValue adds a key = value (the key possibly dotted) to m.
func (t *tomlTree) keyValue(m *node, e *unstable.Node) {
	var parts []*unstable.Node
	for it := e.Key(); it.Next(); {
		parts = append(parts, it.Node())
	}
	for _, k := range parts[:len(parts)-1] {
		m = t.child(m, string(k.Data), t.pos(k))
	}
	last := parts[len(parts)-1]
	m.pairs = append(m.pairs, pair{key: string(last.Data), keyPos: t.pos(last), value: t.value(e.Value())})
}

// value converts a TOML value.
func (t *tomlTree) value(v *unstable.Node) *node {
	pos := t.pos(v)
	switch v.Kind {
	case unstable.String:
		return &node{kind: kindString, pos: pos, text: string(v.Data)}
	case unstable.Integer:
		return &node{kind: kindInt, pos: pos, text: string(v.Data)}
	case unstable.Float:
		return &node{kind: kindFloat, pos: pos, text: string(v.Data)}
	case unstable.Bool:
		return &node{kind: kindBool, pos: pos, text: string(v.Data)}
	case unstable.Array:
		out := &node{kind: kindSeq, pos: pos}
		for it := v.Children(); it.Next(); {
			out.items = append(out.items, t.value(it.Node()))
		}
		return out
	case unstable.InlineTable:
		out := &node{kind: kindMap, pos: pos}
		for it := v.Children(); it.Next(); {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				t.keyValue(out, kv)
			}
		}
		return out
	default: // dates and times
		return &node{kind: kindString, pos: pos, text: string(v.Data)}
	}
}
