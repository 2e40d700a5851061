package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Value returns a deep copy of the JSON value v (as decoded by encoding/json:
// map[string]any, []any, string, json.Number, float64, bool or nil) with
// secrets removed: every string (object keys included) goes through String,
// a number that holds a secret becomes Marker, and the whole value of a
// credential-like key (password, token, api_key, authorization, cookie,
// session_id and the like, but not max_tokens, token_count or author)
// becomes Marker unless it is null, a boolean or empty. Values of other Go
// types are first converted through their JSON encoding. v is not modified.
func (r *Redactor) Value(v any) any {
	out, _ := r.value(v)
	return out
}

// value is Value, also reporting whether anything was redacted.
func (r *Redactor) value(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, false
	case string:
		return r.redact(v)
	case json.Number:
		if r.containsSecret(string(v)) {
			return Marker, true
		}
		return v, false
	case float64:
		if r != nil && len(r.secrets) > 0 && r.containsSecret(strconv.FormatFloat(v, 'f', -1, 64)) {
			return Marker, true
		}
		return v, false
	case []any:
		if v == nil {
			return v, false
		}
		out := make([]any, len(v))
		changed := false
		for i, x := range v {
			var c bool
			out[i], c = r.value(x)
			changed = changed || c
		}
		return out, changed
	case map[string]any:
		if v == nil {
			return v, false
		}
		out := make(map[string]any, len(v))
		changed := false
		var renamed []string // keys that hold a secret themselves
		for k, x := range v {
			if _, c := r.redact(k); c {
				renamed = append(renamed, k)
				continue
			}
			var c bool
			out[k], c = r.keyValue(k, x)
			changed = changed || c
		}
		// Keys that redact to the same text (or to one already there) are
		// kept once, deterministically: the smallest original key wins.
		slices.Sort(renamed)
		for _, k := range renamed {
			changed = true
			rk := r.String(k)
			if _, dup := out[rk]; !dup {
				out[rk], _ = r.keyValue(k, v[k])
			}
		}
		return out, changed
	default:
		// A Go value of another type: redact its JSON form.
		b, err := json.Marshal(v)
		if err != nil {
			return Marker, true
		}
		x, err := decode(b)
		if err != nil {
			return Marker, true
		}
		out, _ := r.value(x)
		return out, true
	}
}

// keyValue is value for the value x of object key k: all of it is Marker if k
// is a credential key.
func (r *Redactor) keyValue(k string, x any) (any, bool) {
	if isCredentialKey(k) && !isBlank(x) {
		return Marker, x != Marker
	}
	return r.value(x)
}

// containsSecret reports whether s contains one of the exact secrets. Only
// those can hide in a number; the token patterns never match one.
func (r *Redactor) containsSecret(s string) bool {
	if r == nil {
		return false
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec.s) {
			return true
		}
	}
	return false
}

// isBlank reports whether v holds nothing to hide: null, a boolean, "",
// or an empty array or object.
func isBlank(v any) bool {
	switch v := v.(type) {
	case nil, bool:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// JSON returns raw with secrets removed as by Value. Numbers keep their text
// (12345678901234567890 and 1e400 are not rounded) and <, >, & are not
// escaped. When nothing is redacted raw itself is returned, byte for byte;
// otherwise the value is re-encoded compactly, with object keys sorted.
// Text that is not valid JSON is redacted as by String.
func (r *Redactor) JSON(raw json.RawMessage) json.RawMessage {
	v, err := decode(raw)
	if err != nil {
		return r.Bytes(raw)
	}
	out, changed := r.value(v)
	if !changed {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		// Unreachable for decoded values; never return the unredacted input.
		return json.RawMessage(`"` + Marker + `"`)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// decode parses exactly one JSON value, keeping numbers as json.Number.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// maxShapes is how many distinct element shapes Shape shows for an array.
const maxShapes = 5

// Shape returns the shape of the JSON value v: the same structure with every
// leaf replaced by its type name ("string", "number", "boolean", "null"), and
// every array by the distinct shapes of its elements, in order of first
// appearance and at most 5: {"city":"London","days":3,"tags":["a","b"]}
// has the shape {"city":"string","days":"number","tags":["string"]}. It is
// what the history records of tool arguments unless values are asked for.
// Object keys are kept as they are; Shape(r.Value(v)) hides secrets in keys
// too. Values of other Go types are shaped by their JSON encoding.
func Shape(v any) any {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "number"
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = Shape(x)
		}
		return out
	case []any:
		out := []any{}
		seen := make(map[string]bool)
		for _, x := range v {
			if len(out) == maxShapes {
				break
			}
			s := Shape(x)
			key, err := json.Marshal(s)
			if err != nil || seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			out = append(out, s)
		}
		return out
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "unknown"
		}
		x, err := decode(b)
		if err != nil {
			return "unknown"
		}
		return Shape(x)
	}
}
