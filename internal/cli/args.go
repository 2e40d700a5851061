package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
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
		v, err := catalog.DecodeJSON(data)
		if err != nil {
			return nil, fault.New(fault.Validation, "--args is not valid JSON: %v", err).
				WithSuggestions(`pass a JSON object, e.g. --args '{"message": "hi"}'`)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fault.New(fault.Validation, "--args must be a JSON object, got %s", catalog.JSONKind(v))
		}
		args = m
	}
	props, additional := catalog.SchemaProps(schema)
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
		val, err := catalog.DecodeJSON([]byte(v))
		if err != nil {
			q, _ := json.Marshal(v)
			return "", nil, fault.New(fault.Validation, "%s:= needs a JSON value: %v", key, err).
				WithSuggestions(fmt.Sprintf("for the string %s, write %s (typed by the tool's schema) or %s", q, shellQuote(key+"="+v), shellQuote(key+":="+string(q))))
		}
		return key, val, nil
	}
	types := catalog.PropTypes(props[k])
	if len(types) == 0 {
		if val, err := catalog.DecodeJSON([]byte(v)); err == nil {
			return k, val, nil
		}
		return k, v, nil
	}
	var firstErr error
	for _, t := range types {
		val, err := catalog.CoerceText(v, t)
		if err == nil {
			return k, val, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	fe := fault.New(fault.Validation, "invalid arguments")
	fe.Fields = []fault.FieldDetail{{
		Field: k, Message: firstErr.Error(), ReceivedValue: v, Received: true,
		Suggestion: fmt.Sprintf("write %s=<%s>, or %s:=JSON for a raw JSON value", k, strings.Join(types, "|"), k),
	}}
	return "", nil, fe
}
