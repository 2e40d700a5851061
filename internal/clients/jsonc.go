package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// The JSON files of MCP clients are JSON with comments and trailing commas
// for some (VS Code, Zed: JSONC) and plain JSON for others, and all of them
// hold the user's other settings. They are edited in place: the file is
// parsed with github.com/tailscale/hujson, which keeps every byte's offset,
// and only the bytes of the one member that changes are replaced, inserted
// or removed. Everything else — comments, trailing commas, the order of
// keys, indentation, other settings — stays as the user has it.

// jsonDoc is a JSON or JSONC document being edited.
type jsonDoc struct {
	src []byte
}

// parseJSONDoc parses src; an empty (or blank) document is an empty
// object.
func parseJSONDoc(src []byte) (*jsonDoc, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	d := &jsonDoc{src: src}
	root, err := d.root()
	if err != nil {
		return nil, err
	}
	if _, ok := root.Value.(*hujson.Object); !ok {
		return nil, fmt.Errorf("the file is JSON but not an object")
	}
	return d, nil
}

// root parses the current bytes.
func (d *jsonDoc) root() (*hujson.Value, error) {
	v, err := hujson.Parse(d.src)
	if err != nil {
		return nil, fmt.Errorf("the file is not valid JSON or JSONC: %w", err)
	}
	v.UpdateOffsets()
	return &v, nil
}

// member finds the member called name in obj.
func member(obj *hujson.Object, name string) (int, bool) {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i, true
		}
	}
	return -1, false
}

// lookup returns the value at path (object member names), if present.
func (d *jsonDoc) lookup(path []string) (*hujson.Value, bool, error) {
	root, err := d.root()
	if err != nil {
		return nil, false, err
	}
	v := root
	for i, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return nil, false, fmt.Errorf("%s is not an object", strings.Join(path[:i], "."))
		}
		j, ok := member(obj, name)
		if !ok {
			return nil, false, nil
		}
		v = &obj.Members[j].Value
	}
	return v, true, nil
}

// get decodes the value at path into out, reporting whether it exists.
func (d *jsonDoc) get(path []string) (any, bool, error) {
	v, ok, err := d.lookup(path)
	if err != nil || !ok {
		return nil, ok, err
	}
	std, err := hujson.Standardize(append([]byte(nil), d.src[v.StartOffset:v.EndOffset]...))
	if err != nil {
		return nil, false, err
	}
	var out any
	if err := json.Unmarshal(std, &out); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// set makes the value at path value, creating the objects on the way.
// An existing value is replaced in place; a new member goes after the
// object's last member, indented like its siblings.
func (d *jsonDoc) set(path []string, value any) error {
	root, err := d.root()
	if err != nil {
		return err
	}
	v := root
	for i, name := range path {
		obj, ok := v.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("%s is not an object, so %s cannot be added to it", dotted(path[:i]), name)
		}
		j, ok := member(obj, name)
		if !ok {
			// Add the rest of the path as one new member.
			var nested any = value
			for k := len(path) - 1; k > i; k-- {
				nested = map[string]any{path[k]: nested}
			}
			return d.insertMember(v, obj, name, nested)
		}
		v = &obj.Members[j].Value
	}
	indent := d.lineIndent(v.StartOffset)
	enc, err := marshalIndented(value, indent, d.indentUnit())
	if err != nil {
		return err
	}
	if !bytes.ContainsRune(d.src[v.StartOffset:v.EndOffset], '\n') {
		// The old value was on one line: so is the new one.
		enc = oneLine(enc)
	}
	d.splice(v.StartOffset, v.EndOffset, enc)
	return nil
}

// oneLine folds indented JSON onto one line, `{"a": [1, 2]}`. Only the
// structure's newlines are folded: a JSON string holds none.
func oneLine(enc []byte) []byte {
	lines := strings.Split(string(enc), "\n")
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if i > 0 {
			prev := b.String()
			if !strings.HasSuffix(prev, "{") && !strings.HasSuffix(prev, "[") && !strings.HasPrefix(l, "}") && !strings.HasPrefix(l, "]") {
				b.WriteByte(' ')
			}
		}
		b.WriteString(l)
	}
	return []byte(b.String())
}

// insertMember adds "name": value as the last member of obj (the value v).
func (d *jsonDoc) insertMember(v *hujson.Value, obj *hujson.Object, name string, value any) error {
	unit := d.indentUnit()
	parentIndent := d.lineIndent(v.StartOffset)
	indent := parentIndent + unit
	if n := len(obj.Members); n > 0 {
		indent = d.lineIndent(obj.Members[n-1].Name.StartOffset)
	}
	enc, err := marshalIndented(value, indent, unit)
	if err != nil {
		return err
	}
	key, _ := json.Marshal(name)
	entry := string(key) + ": " + string(enc)
	open, closing := v.StartOffset, v.EndOffset-1 // '{' and '}'
	if len(obj.Members) == 0 {
		inner := d.src[open+1 : closing]
		if len(bytes.TrimSpace(inner)) == 0 {
			d.splice(open+1, closing, []byte("\n"+indent+entry+"\n"+parentIndent))
			return nil
		}
		// Only comments inside: the member goes after them.
		at := lastContent(d.src, closing)
		d.splice(at, at, []byte("\n"+indent+entry))
		return nil
	}
	last := obj.Members[len(obj.Members)-1].Value
	comma := last.EndOffset + len(last.AfterExtra)
	if !bytes.ContainsAny(d.src[open:closing], "\r\n") && len(bytes.TrimSpace(d.src[last.EndOffset:closing])) == 0 {
		// An object written on one line (nothing after its last member:
		// no comment, no trailing comma) gets the member on that line,
		// written as compactly as the rest: {"a": {...}, "sb": {...}}.
		flat, err := marshalInline(value)
		if err != nil {
			return err
		}
		d.splice(last.EndOffset, last.EndOffset, []byte(", "+string(key)+": "+string(flat)))
		return nil
	}
	at := lastContent(d.src, closing)
	if comma < len(d.src) && d.src[comma] == ',' {
		// A trailing comma (JSONC): keep the style.
		d.splice(at, at, []byte("\n"+indent+entry+","))
		return nil
	}
	// The new member goes after anything on the last member's line (a
	// comment stays where it was), and the comma right after its value.
	d.splice(at, at, []byte("\n"+indent+entry))
	d.splice(last.EndOffset, last.EndOffset, []byte(","))
	return nil
}

// remove deletes the member at path, reporting whether it was there. The
// comma that separated it goes too, and its line when the member had the
// line to itself.
func (d *jsonDoc) remove(path []string) (bool, error) {
	parent, ok, err := d.lookup(path[:len(path)-1])
	if err != nil || !ok {
		return false, err
	}
	obj, ok := parent.Value.(*hujson.Object)
	if !ok {
		return false, nil
	}
	i, ok := member(obj, path[len(path)-1])
	if !ok {
		return false, nil
	}
	m := obj.Members[i]
	start := m.Name.StartOffset
	end := m.Value.EndOffset + len(m.Value.AfterExtra)
	hasComma := end < len(d.src) && d.src[end] == ','
	switch {
	case hasComma:
		end++ // its own comma
	case i > 0:
		// The last member without a trailing comma: the comma before it
		// goes instead.
		prev := obj.Members[i-1].Value
		start = prev.EndOffset + len(prev.AfterExtra)
		end = m.Value.EndOffset
	}
	if hasComma || i == 0 {
		// Take its whole line when it has the line to itself.
		ls := lineStart(d.src, start)
		if len(bytes.TrimSpace(d.src[ls:start])) == 0 {
			rest := end
			for rest < len(d.src) && (d.src[rest] == ' ' || d.src[rest] == '\t') {
				rest++
			}
			if rest < len(d.src) && d.src[rest] == '\n' {
				start, end = ls, rest+1
			} else if rest < len(d.src) && d.src[rest] == '\r' && rest+1 < len(d.src) && d.src[rest+1] == '\n' {
				start, end = ls, rest+2
			}
		}
	}
	d.splice(start, end, nil)
	if len(obj.Members) == 1 {
		// The object is empty now: make it {} unless a comment is left.
		if p, ok, _ := d.lookup(path[:len(path)-1]); ok {
			inner := d.src[p.StartOffset+1 : p.EndOffset-1]
			if len(bytes.TrimSpace(inner)) == 0 {
				d.splice(p.StartOffset+1, p.EndOffset-1, nil)
			}
		}
	}
	return true, nil
}

// splice replaces src[start:end] with b.
func (d *jsonDoc) splice(start, end int, b []byte) {
	out := make([]byte, 0, len(d.src)-(end-start)+len(b))
	out = append(out, d.src[:start]...)
	out = append(out, b...)
	d.src = append(out, d.src[end:]...)
}

// lineStart is the offset of the start of the line holding offset.
func lineStart(src []byte, offset int) int {
	return bytes.LastIndexByte(src[:offset], '\n') + 1
}

// lineIndent is the leading whitespace of the line holding offset.
func (d *jsonDoc) lineIndent(offset int) string {
	ls := lineStart(d.src, offset)
	end := ls
	for end < len(d.src) && (d.src[end] == ' ' || d.src[end] == '\t') {
		end++
	}
	return string(d.src[ls:end])
}

// lastContent is the offset just after the last byte before end that is
// not whitespace.
func lastContent(src []byte, end int) int {
	for end > 0 && strings.ContainsRune(" \t\r\n", rune(src[end-1])) {
		end--
	}
	return end
}

// indentUnit is the document's indentation step: that of the first
// indented line, else two spaces.
func (d *jsonDoc) indentUnit() string {
	for _, line := range strings.Split(string(d.src), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != line && trimmed != "" {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

// marshalIndented encodes v as indented JSON whose lines after the first
// start with prefix (the indentation of the line it goes on).
func marshalIndented(v any, prefix, unit string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, unit)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// marshalInline encodes v as JSON on one line, with a space after each
// colon and comma, as people write a short object by hand.
func marshalInline(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	compact := bytes.TrimRight(buf.Bytes(), "\n")
	out := make([]byte, 0, len(compact)+len(compact)/4)
	inString, escaped := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ':' || c == ','):
			out = append(out, ' ')
		}
	}
	return out, nil
}

// dotted renders a path for a message; the top level is "the file".
func dotted(path []string) string {
	if len(path) == 0 {
		return "the file's top level"
	}
	return strings.Join(path, ".")
}
