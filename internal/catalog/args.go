package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
)

// Typing arguments given as text by a tool's input schema: the CLI's
// key=value pairs and the string fields of hook events.

// CoerceText converts s, a value typed as text (a command line's
// key=value, a hook's event field), to the JSON type t: a number or
// integer as json.Number, a boolean, null, or an array or object decoded
// as JSON. An unknown type name keeps the text.
func CoerceText(s, t string) (any, error) {
	switch t {
	case "string":
		return s, nil
	case "integer":
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			if f, ferr := strconv.ParseFloat(s, 64); ferr != nil || f != float64(int64(f)) {
				return nil, fmt.Errorf("want an integer, got %q", s)
			}
		}
		return json.Number(s), nil
	case "number":
		if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "xXpP_") || isNonFinite(s) {
			return nil, fmt.Errorf("want a number, got %q", s)
		}
		return json.Number(s), nil
	case "boolean":
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("want true or false, got %q", s)
	case "null":
		if s == "null" {
			return nil, nil
		}
		return nil, fmt.Errorf("want null, got %q", s)
	case "array", "object":
		v, err := DecodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("want a JSON %s, got %q (quote it for the shell: '[\"a\", \"b\"]')", t, s)
		}
		if t == "array" {
			if _, ok := v.([]any); !ok {
				return nil, fmt.Errorf("want a JSON array, got %s", JSONKind(v))
			}
		} else if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("want a JSON object, got %s", JSONKind(v))
		}
		return v, nil
	}
	// Unknown type names: keep the text.
	return s, nil
}

// isNonFinite reports whether s spells infinity or NaN, which ParseFloat
// accepts but JSON has no number for.
func isNonFinite(s string) bool {
	l := strings.ToLower(strings.TrimLeft(s, "+-"))
	return l == "inf" || l == "infinity" || l == "nan"
}

// DecodeJSON decodes exactly one JSON value, numbers as json.Number.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// JSONKind names the kind of a decoded JSON value for messages: "a
// number", "an object", ...
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// SchemaProps returns the top-level properties of an object schema and
// whether other properties are allowed.
func SchemaProps(schema any) (map[string]map[string]any, bool) {
	m, ok := SchemaMap(schema)
	if !ok {
		return nil, true
	}
	pm, ok := m["properties"].(map[string]any)
	if !ok {
		return nil, true
	}
	props := make(map[string]map[string]any, len(pm))
	for k, v := range pm {
		p, _ := v.(map[string]any)
		props[k] = Deref(m, p)
	}
	additional := true
	if b, ok := m["additionalProperties"].(bool); ok && !b {
		additional = false
	}
	return props, additional
}

// maxRefs bounds the chain of $refs Deref follows, against a schema whose
// references loop.
const maxRefs = 32

// Deref returns the property schema p of the schema root with its local
// "$ref" (a JSON pointer into root: "#/$defs/Address", as pydantic and
// FastMCP write a model's fields) replaced by the schema it points to,
// p's own keywords (a description, a default) kept over the target's, and
// so the $refs of its anyOf and oneOf branches (Optional[Address] is
// anyOf [{$ref}, {type: null}]). A reference Deref cannot follow — not
// local, pointing nowhere, looping — is left as it is. p is not changed.
func Deref(root, p map[string]any) map[string]any {
	p, _ = derefOne(root, p)
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := p[key].([]any)
		if !ok {
			continue
		}
		var out []any
		for i, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if d, changed := derefOne(root, bm); changed {
				if out == nil {
					out = append([]any(nil), branches...)
				}
				out[i] = d
			}
		}
		if out != nil {
			p = maps.Clone(p)
			p[key] = out
		}
	}
	return p
}

// derefOne follows p's own chain of $refs; changed says whether it
// followed any.
func derefOne(root, p map[string]any) (_ map[string]any, changed bool) {
	for range maxRefs {
		ref, ok := p["$ref"].(string)
		if !ok {
			return p, changed
		}
		target, ok := pointer(root, ref)
		if !ok {
			return p, changed
		}
		changed = true
		merged := maps.Clone(target)
		for k, v := range p {
			if k != "$ref" {
				merged[k] = v
			}
		}
		if _, again := target["$ref"]; !again {
			delete(merged, "$ref")
		} else {
			merged["$ref"] = target["$ref"]
		}
		p = merged
	}
	return p, changed
}

// pointer resolves a local reference ("#/a/b", RFC 6901 escapes) in root.
func pointer(root map[string]any, ref string) (map[string]any, bool) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok || root == nil {
		return nil, false
	}
	var cur any = root
	for _, tok := range strings.Split(path, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur, ok = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			ok = err == nil && i >= 0 && i < len(c)
			if ok {
				cur = c[i]
			}
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

// SchemaMap returns a schema as a generic map, re-decoding typed values.
func SchemaMap(schema any) (map[string]any, bool) {
	switch s := schema.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return s, true
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil, false
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return nil, false
		}
		return m, true
	}
}

// PropTypes returns the JSON types a property accepts, most specific
// first: "type" (a string or a list), else the types of anyOf/oneOf
// branches, else string for an enum of strings.
func PropTypes(p map[string]any) []string {
	if p == nil {
		return nil
	}
	var out []string
	switch t := p["type"].(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		for _, key := range []string{"anyOf", "oneOf"} {
			if branches, ok := p[key].([]any); ok {
				for _, b := range branches {
					if bm, ok := b.(map[string]any); ok {
						out = append(out, PropTypes(bm)...)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
			if _, ok := enum[0].(string); ok {
				out = append(out, "string")
			}
		}
	}
	// Prefer the strict interpretations before "string" swallows everything.
	order := map[string]int{"null": 0, "boolean": 1, "integer": 2, "number": 3, "array": 4, "object": 5, "string": 6}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && order[out[j]] < order[out[j-1]]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
