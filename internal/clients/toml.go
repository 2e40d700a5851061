package clients

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex keeps its servers in TOML (config.toml), one table each:
//
//	[mcp_servers.switchboard]
//	url = "http://127.0.0.1:7777/mcp"
//
// The file is edited as text: the entry's table (with its sub-tables, such
// as [mcp_servers.switchboard.env]) is found with go-toml's parser, which
// gives each header's offset, and only those lines are replaced, added at
// the end or removed; comments and every other table stay as they are. An
// entry written another way (dotted keys, an inline table) is not edited:
// the error says to edit it by hand.

// tomlDoc is a TOML document being edited.
type tomlDoc struct {
	src []byte
}

func parseTOMLDoc(src []byte) (*tomlDoc, error) {
	var check map[string]any
	if err := toml.Unmarshal(src, &check); err != nil {
		return nil, fmt.Errorf("the file is not valid TOML: %w", err)
	}
	return &tomlDoc{src: src}, nil
}

// tomlHeader is one [table] or [[array table]] header.
type tomlHeader struct {
	keys  []string
	start int // offset of the start of its line
}

// scan lists the table headers in order, and whether a key/value
// outside a table named the entry (dotted keys or an inline table).
func (d *tomlDoc) scan(table, name string) (hs []tomlHeader, elsewhere bool) {
	var p unstable.Parser
	p.Reset(d.src)
	var current []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var keys []string
			var first *unstable.Node
			for it := e.Key(); it.Next(); {
				if first == nil {
					first = it.Node()
				}
				keys = append(keys, string(it.Node().Data))
			}
			off := 0
			if first != nil {
				off = int(first.Raw.Offset)
			}
			hs = append(hs, tomlHeader{keys: keys, start: lineStart(d.src, off)})
			current = keys
		case unstable.KeyValue:
			full := slices.Clone(current)
			for it := e.Key(); it.Next(); {
				full = append(full, string(it.Node().Data))
			}
			inOurs := len(current) >= 2 && current[0] == table && current[1] == name
			named := len(full) >= 2 && full[0] == table && full[1] == name
			inline := len(full) == 1 && full[0] == table
			if !inOurs && (named || inline) {
				elsewhere = true
			}
		}
	}
	return hs, elsewhere
}

// span is the byte range of the entry's tables, if it has any.
func (d *tomlDoc) span(table, name string) (start, end int, found bool, err error) {
	hs, elsewhere := d.scan(table, name)
	start, end = -1, -1
	for _, h := range hs {
		ours := len(h.keys) >= 2 && h.keys[0] == table && h.keys[1] == name
		switch {
		case ours && start < 0:
			start = h.start
		case !ours && start >= 0 && end < 0:
			end = h.start
		case ours && end >= 0:
			return 0, 0, false, fmt.Errorf("the tables of [%s.%s] are not together in the file; edit it by hand", table, name)
		}
	}
	if start < 0 {
		if elsewhere {
			return 0, 0, false, fmt.Errorf("%s.%s is written with dotted keys or an inline table, which Switchboard does not edit; edit it by hand", table, name)
		}
		return 0, 0, false, nil
	}
	if end < 0 {
		end = len(d.src)
	}
	return start, end, true, nil
}

// get returns the entry's table decoded.
func (d *tomlDoc) get(table, name string) (map[string]any, bool, error) {
	var all map[string]any
	if err := toml.Unmarshal(d.src, &all); err != nil {
		return nil, false, err
	}
	t, ok := all[table].(map[string]any)
	if !ok {
		return nil, false, nil
	}
	e, ok := t[name].(map[string]any)
	return e, ok, nil
}

// set writes the entry's table: in place of the old one, else at the end.
func (d *tomlDoc) set(table, name string, fields []tomlField) error {
	start, end, found, err := d.span(table, name)
	if err != nil {
		return err
	}
	text := tomlTable(table, name, fields)
	if found {
		if end < len(d.src) {
			text += "\n" // a blank line before the next table
		}
		d.src = slices.Concat(d.src[:start], []byte(text), d.src[end:])
		return nil
	}
	src := bytes.TrimRight(d.src, " \t\r\n")
	if len(src) > 0 {
		src = append(src, '\n', '\n')
	}
	d.src = append(src, text...)
	return nil
}

// remove deletes the entry's tables, reporting whether there were any.
func (d *tomlDoc) remove(table, name string) (bool, error) {
	start, end, found, err := d.span(table, name)
	if err != nil || !found {
		return false, err
	}
	out := append([]byte{}, d.src[:start]...)
	rest := d.src[end:]
	if len(rest) == 0 {
		out = append(bytes.TrimRight(out, " \t\r\n"), '\n')
		if len(bytes.TrimSpace(out)) == 0 {
			out = nil
		}
	}
	d.src = append(out, rest...)
	return true, nil
}

// tomlField is one key = value line of an entry.
type tomlField struct {
	key   string
	value any // string or []string
}

// tomlTable renders [table.name] with its fields, one per line.
func tomlTable(table, name string, fields []tomlField) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\n", table, tomlKey(name))
	for _, f := range fields {
		fmt.Fprintf(&b, "%s = %s\n", f.key, tomlValue(f.value))
	}
	return b.String()
}

// tomlKey quotes a key that is not a bare key.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return strconv.Quote(k)
		}
	}
	return k
}

// tomlValue renders a string or a list of strings as TOML (basic strings,
// whose escapes are JSON's for what an entry holds).
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	panic(fmt.Sprintf("clients: no TOML form for %T", v))
}

func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
