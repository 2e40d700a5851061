package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// buildArgs makes a tool's arguments from --args (JSON, @file or - for
// stdin) and key=value pairs, which win. Each value is typed by the
// property's schema: string as is; number and integer parsed; boolean
// true/false; array, object and null as JSON. `key:=JSON` always takes raw
// JSON. Without a schema type, a value that is valid JSON is taken as JSON,
// anything else as a string.
func buildArgs(raw string, stdin io.Reader, pairs []string, schema any) (map[string]any, error) {
	args := map[string]any{}
	if raw != "" {
		data := []byte(raw)
		switch {
		case raw == "-":
			b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
			if err != nil {
				return nil, fmt.Errorf("reading --args from stdin: %w", err)
			}
			data = b
		case strings.HasPrefix(raw, "@"):
			b, err := os.ReadFile(raw[1:])
			if err != nil {
				return nil, fault.Wrap(fault.Validation, err, "reading --args file %s", raw[1:])
			}
			data = b
		}
		v, err := decodeJSON(data)
		if err != nil {
			return nil, fault.New(fault.Validation, "--args is not valid JSON: %v", err).
				WithSuggestions(`pass a JSON object, e.g. --args '{"message": "hi"}'`)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fault.New(fault.Validation, "--args must be a JSON object, got %s", jsonKind(v))
		}
		args = m
	}
	props, additional := schemaProps(schema)
	seen := map[string]bool{}
	for _, p := range pairs {
		k, v, err := coercePair(p, props)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, fault.New(fault.Validation, "argument %q is given twice", k)
		}
		seen[k] = true
		if props != nil && !additional {
			if _, ok := props[k]; !ok {
				fe := fault.New(fault.Validation, "the tool has no parameter %q", k)
				if s := suggest.Closest(k, sortedKeys(props), 3); len(s) > 0 {
					fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
					fe.WithSuggestions(s...)
				} else {
					fe.WithSuggestions("its parameters are: " + strings.Join(sortedKeys(props), ", "))
				}
				return nil, fe
			}
		}
		args[k] = v
	}
	return args, nil
}

// coercePair parses one key=value or key:=JSON pair.
func coercePair(pair string, props map[string]map[string]any) (string, any, error) {
	k, v, ok := strings.Cut(pair, "=")
	if !ok || k == "" || k == ":" {
		return "", nil, fault.New(fault.Validation, "argument %q is not key=value", pair).
			WithSuggestions("write parameters as key=value, or key:=JSON for a raw JSON value")
	}
	if key, isRaw := strings.CutSuffix(k, ":"); isRaw {
		val, err := decodeJSON([]byte(v))
		if err != nil {
			return "", nil, fault.New(fault.Validation, "%s:= needs a JSON value: %v", key, err)
		}
		return key, val, nil
	}
	types := propTypes(props[k])
	if len(types) == 0 {
		if val, err := decodeJSON([]byte(v)); err == nil {
			return k, val, nil
		}
		return k, v, nil
	}
	var firstErr error
	for _, t := range types {
		val, err := coerce(v, t)
		if err == nil {
			return k, val, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", nil, fault.New(fault.Validation, "%s: %v", k, firstErr).WithDetail("field", k)
}

// coerce converts s to the JSON type t.
func coerce(s, t string) (any, error) {
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
		v, err := decodeJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("want a JSON %s, got %q (quote it for the shell: '[\"a\", \"b\"]')", t, s)
		}
		if t == "array" {
			if _, ok := v.([]any); !ok {
				return nil, fmt.Errorf("want a JSON array, got %s", jsonKind(v))
			}
		} else if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("want a JSON object, got %s", jsonKind(v))
		}
		return v, nil
	}
	// Unknown type names: keep the text.
	return s, nil
}

func isNonFinite(s string) bool {
	l := strings.ToLower(strings.TrimLeft(s, "+-"))
	return l == "inf" || l == "infinity" || l == "nan"
}

// decodeJSON decodes exactly one JSON value, numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
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

func jsonKind(v any) string {
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

// schemaProps returns the top-level properties of an object schema and
// whether other properties are allowed.
func schemaProps(schema any) (map[string]map[string]any, bool) {
	m, ok := asMap(schema)
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
		props[k] = p
	}
	additional := true
	if b, ok := m["additionalProperties"].(bool); ok && !b {
		additional = false
	}
	return props, additional
}

// asMap returns a schema as a generic map, re-decoding typed values.
func asMap(schema any) (map[string]any, bool) {
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

// propTypes returns the JSON types a property accepts, most specific
// first: "type" (a string or a list), else the types of anyOf/oneOf
// branches, else string for an enum of strings.
func propTypes(p map[string]any) []string {
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
						out = append(out, propTypes(bm)...)
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
