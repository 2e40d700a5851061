// Internal on purpose: fuzzes decodeArguments, the parser of a model's tool-call arguments, which no exported call reaches alone.

package agent

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeArguments: whatever a model writes, the arguments either go to
// the engine as one JSON object or come back to the model with a reason.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range []string{``, `{}`, ` {"a": 1} `, `{"a": 1`, `[1]`, `null`, `{"a":1}{"b":2}`, `{"a":1} x`, `"str"`, "{\"a\":\"\xff\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, why := decodeArguments(s)
		if why != "" {
			if raw != nil {
				t.Fatalf("got %q and a reason %q, want one or the other", raw, why)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", raw, err)
		}
	})
}

func TestDecodeArguments(t *testing.T) {
	for _, tt := range []struct {
		in, want, why string
	}{
		{in: "", want: "{}"},
		{in: ` {"a": 1} `, want: `{"a": 1}`},
		{in: `{"a": 1`, why: "not valid JSON: unexpected EOF"},
		{in: `[1]`, why: "a JSON array; they must be a JSON object"},
		{in: `null`, why: "a JSON null; they must be a JSON object"},
		{in: `"str"`, why: "a JSON string; they must be a JSON object"},
		{in: ` -1.5 `, why: "a JSON number; they must be a JSON object"},
		{in: `true`, why: "a JSON boolean; they must be a JSON object"},
		{in: `{"a":1}{"b":2}`, why: "more than one JSON value; they must be one JSON object"},
		{in: `{"a":1} x`, why: "more than one JSON value; they must be one JSON object"},
		{in: `{"a":1} ]`, why: "not valid JSON after the first value; they must be one JSON object"},
	} {
		raw, why := decodeArguments(tt.in)
		if string(raw) != tt.want || why != tt.why {
			t.Errorf("decodeArguments(%q): got %q, %q; want %q, %q", tt.in, raw, why, tt.want, tt.why)
		}
	}
}
