package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Limits on input that keep parsing fast: goccy/go-yaml's parser is
// quadratic in nesting depth, and no configuration comes near these.
const (
	maxFileSize = 1 << 20 // bytes
	maxNesting  = 100     // flow brackets, or columns of block indentation / 2
)

// kind is the shape of a node.
type kind int

const (
	kindNull kind = iota
	kindString
	kindInt
	kindFloat
	kindBool
	kindMap
	kindSeq
)

// describe names a kind for messages: "must be a string, not a list".
func (k kind) describe() string {
	switch k {
	case kindNull:
		return "empty"
	case kindString:
		return "a string"
	case kindInt, kindFloat:
		return "a number"
	case kindBool:
		return "true/false"
	case kindMap:
		return "a mapping"
	case kindSeq:
		return "a list"
	}
	return "unknown"
}

// node is a position-carrying, format-neutral view of a YAML or JSON value.
// Anchors, aliases, merge keys and standard tags are already resolved.
type node struct {
	kind  kind
	pos   Pos
	text  string  // scalars: the value (unescaped for strings, source text otherwise)
	pairs []pair  // kindMap, in file order
	items []*node // kindSeq
}

// pair is one key of a mapping.
type pair struct {
	key    string
	keyPos Pos
	value  *node
}

// isScalar reports whether n is a string, number or boolean.
func (n *node) isScalar() bool {
	return n.kind == kindString || n.kind == kindInt || n.kind == kindFloat || n.kind == kindBool
}

// get returns the value of key in a mapping, or nil.
func (n *node) get(key string) *pair {
	if n == nil || n.kind != kindMap {
		return nil
	}
	for i := range n.pairs {
		if n.pairs[i].key == key {
			return &n.pairs[i]
		}
	}
	return nil
}

// parseTree parses YAML or JSON(C) bytes into a node tree. A nil tree with
// no problems means the document is empty.
func parseTree(file string, data []byte, ps *problems) *node {
	text, _ := strings.CutPrefix(string(data), "\ufeff")
	if len(text) > maxFileSize {
		ps.add(Pos{File: file}, "", fmt.Sprintf("the file is larger than %d bytes", maxFileSize), "split it, or remove what is not configuration", nil)
		return nil
	}
	if !utf8.ValidString(text) {
		line, col := invalidUTF8At(text)
		ps.add(Pos{File: file, Line: line, Col: col}, "", "the file is not valid UTF-8", "save it as UTF-8", nil)
		return nil
	}
	src := text
	trimmed := strings.TrimLeft(src, " \t\r\n")
	isJSON := strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "/*")
	if !isJSON && looksLikeTOML(file, text) {
		return parseTOML(file, text, ps)
	}
	if isJSON {
		src = stripJSONComments(src)
	}
	if line, ok := tooDeep(src); ok {
		ps.add(Pos{File: file, Line: line, Col: 1}, "", fmt.Sprintf("the file is nested more than %d levels deep", maxNesting), "flatten it", nil)
		return nil
	}
	f, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		what := "invalid YAML"
		if isJSON {
			what = "invalid JSON"
		}
		if !isJSON && !isYAMLName(file) {
			// Not JSON, and not named as YAML: most likely another format
			// altogether, so say which formats are read.
			ps.add(Pos{File: file}, "", fmt.Sprintf("%s is in no format Switchboard reads (it is not JSON, TOML or YAML)", filepath.Base(file)),
				"give a file in one of these formats: "+strings.Join(SupportedFormats, "; "), nil)
			return nil
		}
		pos := Pos{File: file}
		msg := err.Error()
		var ye interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			pos = tokenPos(file, ye.GetToken())
		}
		ps.add(pos, "", what+": "+msg, "", nil)
		return nil
	}
	c := &converter{file: file, anchors: map[string]*node{}, ps: ps}
	var docs []*node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		docs = append(docs, c.convert(d.Body, 0))
	}
	if len(docs) > 1 {
		ps.add(docs[1].pos, "", "the file holds more than one YAML document", "keep only one (remove the --- separator)", nil)
	}
	if len(docs) == 0 {
		return nil
	}
	return docs[0]
}

// isYAMLName reports whether a file is named as YAML (or has no
// extension at all, as a file piped in may not).
func isYAMLName(file string) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml", "":
		return true
	}
	return false
}

// invalidUTF8At returns the 1-based line and column of the first invalid
// UTF-8 byte.
func invalidUTF8At(s string) (line, col int) {
	line, col = 1, 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return line, col
}

// tooDeep reports the line at which src nests deeper than maxNesting, by
// flow brackets or by block indentation.
func tooDeep(src string) (int, bool) {
	depth, line := 0, 1
	var quote byte
	atLineStart, indent := true, 0
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == '\n' {
			line++
			atLineStart, indent = true, 0
			continue
		}
		if atLineStart {
			if ch == ' ' || ch == '-' || ch == '\t' {
				indent++
				if indent > 2*maxNesting {
					return line, true
				}
				continue
			}
			atLineStart = false
		}
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case (ch == '"' || ch == '\'') && (i == 0 || strings.IndexByte(" \t[{,:", src[i-1]) >= 0):
			quote = ch
		case ch == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case ch == '[' || ch == '{':
			depth++
			if depth > maxNesting {
				return line, true
			}
		case ch == ']' || ch == '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, false
}

// stripJSONComments blanks out // and /* */ comments outside strings, so
// that JSONC (as VS Code writes it) parses, keeping every line and column.
func stripJSONComments(s string) string {
	b := []byte(s)
	var quote byte
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote == '"' {
				i++
			} else if ch == quote || ch == '\n' {
				quote = 0
			}
		case ch == '"':
			quote = ch
		case ch == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case ch == '/' && i+1 < len(b) && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			for i += 2; i < len(b); i++ {
				if b[i] == '*' && i+1 < len(b) && b[i+1] == '/' {
					b[i], b[i+1] = ' ', ' '
					i++
					break
				}
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
		}
	}
	return string(b)
}

// tokenPos converts a goccy token position.
func tokenPos(file string, tk *token.Token) Pos {
	if tk == nil || tk.Position == nil {
		return Pos{File: file}
	}
	return Pos{File: file, Line: tk.Position.Line, Col: tk.Position.Column}
}

// converter turns a goccy AST into nodes.
type converter struct {
	file    string
	anchors map[string]*node
	ps      *problems
}

func (c *converter) pos(n ast.Node) Pos {
	switch x := n.(type) {
	case *ast.MappingNode:
		if len(x.Values) > 0 {
			return c.pos(x.Values[0])
		}
	case *ast.MappingValueNode:
		return c.pos(x.Key)
	case *ast.MappingKeyNode:
		return tokenPos(c.file, x.Start)
	case *ast.AnchorNode:
		return tokenPos(c.file, x.Start)
	case *ast.TagNode:
		return tokenPos(c.file, x.Start)
	case *ast.LiteralNode:
		return tokenPos(c.file, x.Start)
	}
	return tokenPos(c.file, n.GetToken())
}

func (c *converter) convert(n ast.Node, depth int) *node {
	if n == nil {
		return &node{kind: kindNull}
	}
	pos := c.pos(n)
	if depth > 2*maxNesting {
		c.ps.add(pos, "", fmt.Sprintf("the file is nested more than %d levels deep", maxNesting), "flatten it", nil)
		return &node{kind: kindNull, pos: pos}
	}
	switch x := n.(type) {
	case *ast.DocumentNode:
		return c.convert(x.Body, depth)
	case *ast.MappingNode:
		return c.mapping(pos, x.Values, depth)
	case *ast.MappingValueNode:
		return c.mapping(pos, []*ast.MappingValueNode{x}, depth)
	case *ast.MappingKeyNode:
		return c.convert(x.Value, depth+1)
	case *ast.SequenceNode:
		out := &node{kind: kindSeq, pos: tokenPos(c.file, x.Start)}
		for _, v := range x.Values {
			out.items = append(out.items, c.convert(v, depth+1))
		}
		return out
	case *ast.AnchorNode:
		v := c.convert(x.Value, depth+1)
		if x.Name != nil {
			c.anchors[x.Name.GetToken().Value] = v
		}
		return v
	case *ast.AliasNode:
		name := ""
		if x.Value != nil {
			name = x.Value.GetToken().Value
		}
		if v, ok := c.anchors[name]; ok {
			return v
		}
		c.ps.add(pos, "", fmt.Sprintf("alias *%s refers to no anchor defined before it", name), "define &"+name+" first", nil)
		return &node{kind: kindNull, pos: pos}
	case *ast.TagNode:
		return c.tagged(pos, x, depth)
	case *ast.StringNode:
		return &node{kind: kindString, pos: pos, text: x.Value}
	case *ast.LiteralNode:
		v := ""
		if x.Value != nil {
			v = x.Value.Value
		}
		return &node{kind: kindString, pos: pos, text: v}
	case *ast.IntegerNode:
		return &node{kind: kindInt, pos: pos, text: x.Token.Value}
	case *ast.FloatNode:
		return &node{kind: kindFloat, pos: pos, text: x.Token.Value}
	case *ast.InfinityNode:
		return &node{kind: kindFloat, pos: pos, text: x.Token.Value}
	case *ast.NanNode:
		return &node{kind: kindFloat, pos: pos, text: x.Token.Value}
	case *ast.BoolNode:
		return &node{kind: kindBool, pos: pos, text: strconv.FormatBool(x.Value)}
	case *ast.NullNode:
		return &node{kind: kindNull, pos: pos}
	}
	c.ps.add(pos, "", fmt.Sprintf("unsupported YAML construct (%s)", n.Type()), "use plain mappings, lists and scalars", nil)
	return &node{kind: kindNull, pos: pos}
}

// tagged handles the standard tags; any other tag is a problem.
func (c *converter) tagged(pos Pos, x *ast.TagNode, depth int) *node {
	tag := ""
	if x.Start != nil {
		tag = x.Start.Value
	}
	v := c.convert(x.Value, depth+1)
	switch tag {
	case "!!str", "tag:yaml.org,2002:str":
		if v.isScalar() {
			return &node{kind: kindString, pos: v.pos, text: v.text}
		}
		if v.kind == kindNull {
			return &node{kind: kindString, pos: v.pos}
		}
	case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq":
		return v
	}
	c.ps.add(pos, "", fmt.Sprintf("unsupported YAML tag %s", tag), "remove the tag", nil)
	return v
}

// mapping converts mapping entries, applying merge keys (<<): explicit keys
// win over merged ones, and earlier merges over later ones.
func (c *converter) mapping(pos Pos, values []*ast.MappingValueNode, depth int) *node {
	out := &node{kind: kindMap, pos: pos}
	seen := map[string]bool{}
	var merges []*node
	for _, mv := range values {
		if mv == nil {
			continue
		}
		if mv.Key != nil && mv.Key.IsMergeKey() {
			merges = append(merges, c.convert(mv.Value, depth+1))
			continue
		}
		key, keyPos, ok := c.key(mv.Key, depth)
		if !ok {
			continue
		}
		if seen[key] {
			continue // the parser reports duplicate keys; merged maps may repeat
		}
		seen[key] = true
		out.pairs = append(out.pairs, pair{key: key, keyPos: keyPos, value: c.convert(mv.Value, depth+1)})
	}
	for _, m := range merges {
		sources := []*node{m}
		if m.kind == kindSeq {
			sources = m.items
		}
		for _, src := range sources {
			if src.kind == kindNull {
				continue // an unknown alias, already reported
			}
			if src.kind != kindMap {
				c.ps.add(src.pos, "", "a merge key (<<) must refer to a mapping or a list of mappings", "", nil)
				continue
			}
			for _, p := range src.pairs {
				if !seen[p.key] {
					seen[p.key] = true
					out.pairs = append(out.pairs, p)
				}
			}
		}
	}
	return out
}

// key converts a mapping key, which must be a scalar.
func (c *converter) key(k ast.MapKeyNode, depth int) (string, Pos, bool) {
	if k == nil {
		return "", Pos{File: c.file}, false
	}
	n := c.convert(k, depth+1)
	if n.kind == kindNull {
		return "", n.pos, true
	}
	if !n.isScalar() {
		c.ps.add(n.pos, "", "mapping keys must be strings", "", nil)
		return "", n.pos, false
	}
	return n.text, n.pos, true
}
