package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var argsSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"s":     map[string]any{"type": "string"},
		"i":     map[string]any{"type": "integer"},
		"n":     map[string]any{"type": "number"},
		"b":     map[string]any{"type": "boolean"},
		"arr":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"obj":   map[string]any{"type": "object"},
		"maybe": map[string]any{"type": []any{"integer", "null"}},
		"union": map[string]any{"anyOf": []any{map[string]any{"type": "boolean"}, map[string]any{"type": "string"}}},
		"color": map[string]any{"enum": []any{"red", "green"}},
		"free":  map[string]any{},
	},
	"additionalProperties": false,
}

func TestBuildArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   string
		pairs []string
		want  map[string]any
	}{
		{"string stays text", "", []string{"s=42"}, map[string]any{"s": "42"}},
		{"empty string", "", []string{"s="}, map[string]any{"s": ""}},
		{"value with =", "", []string{"s=a=b"}, map[string]any{"s": "a=b"}},
		{"integer", "", []string{"i=-7"}, map[string]any{"i": json.Number("-7")}},
		{"integral float for integer", "", []string{"i=3.0"}, map[string]any{"i": json.Number("3.0")}},
		{"number", "", []string{"n=2.5e3"}, map[string]any{"n": json.Number("2.5e3")}},
		{"boolean", "", []string{"b=false"}, map[string]any{"b": false}},
		{"array as JSON", "", []string{`arr=["x","y"]`}, map[string]any{"arr": []any{"x", "y"}}},
		{"object as JSON", "", []string{`obj={"k":1}`}, map[string]any{"obj": map[string]any{"k": json.Number("1")}}},
		{"nullable null", "", []string{"maybe=null"}, map[string]any{"maybe": nil}},
		{"nullable integer", "", []string{"maybe=4"}, map[string]any{"maybe": json.Number("4")}},
		{"union prefers boolean", "", []string{"union=true"}, map[string]any{"union": true}},
		{"union falls back to string", "", []string{"union=maybe"}, map[string]any{"union": "maybe"}},
		{"string enum", "", []string{"color=red"}, map[string]any{"color": "red"}},
		{"untyped JSON", "", []string{"free=12"}, map[string]any{"free": json.Number("12")}},
		{"untyped text", "", []string{"free=hello"}, map[string]any{"free": "hello"}},
		{"raw JSON forces type", "", []string{`s:="quoted"`, "i:=5"}, map[string]any{"s": "quoted", "i": json.Number("5")}},
		{"--args merged, pairs win", `{"s": "a", "i": 1}`, []string{"i=2"}, map[string]any{"s": "a", "i": json.Number("2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildArgs(tt.raw, strings.NewReader(""), tt.pairs, argsSchema)
			if err != nil {
				t.Fatalf("buildArgs: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("buildArgs mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildArgsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		pairs   []string
		wantErr string
	}{
		{"not a pair", "", []string{"hello"}, `argument "hello" is not key=value`},
		{"empty key", "", []string{"=x"}, `argument "=x" is not key=value`},
		{"bad integer", "", []string{"i=1.5"}, `i: want an integer, got "1.5"`},
		{"bad number", "", []string{"n=NaN"}, `n: want a number, got "NaN"`},
		{"hex is not a number", "", []string{"n=0x10"}, `n: want a number, got "0x10"`},
		{"bad boolean", "", []string{"b=yes"}, `b: want true or false, got "yes"`},
		{"bad array", "", []string{"arr=a,b"}, `arr: want a JSON array`},
		{"object given for array", "", []string{`arr={}`}, `arr: want a JSON array, got an object`},
		{"unknown key suggests", "", []string{"colour=red"}, `the tool has no parameter "colour"; did you mean "color"?`},
		{"twice", "", []string{"s=a", "s=b"}, `argument "s" is given twice`},
		{"raw JSON invalid", "", []string{"i:=five"}, `i:= needs a JSON value`},
		{"--args not JSON", "{", nil, `--args is not valid JSON`},
		{"--args not an object", "[1]", nil, `--args must be a JSON object, got an array`},
		{"--args trailing data", `{} {}`, nil, `--args is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildArgs(tt.raw, strings.NewReader(""), tt.pairs, argsSchema)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("buildArgs: got error %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestBuildArgsStdin(t *testing.T) {
	t.Parallel()
	got, err := buildArgs("-", strings.NewReader(`{"s": "from stdin"}`), nil, argsSchema)
	if err != nil || got["s"] != "from stdin" {
		t.Errorf("--args -: got %v, %v", got, err)
	}
}

// FuzzBuildArgs checks that coercion never panics, and that whatever it
// accepts marshals to a JSON object.
func FuzzBuildArgs(f *testing.F) {
	f.Add("", "i=5")
	f.Add(`{"a":1}`, "n=1e400")
	f.Add("", `arr=["x"]`)
	f.Add("", "union=")
	f.Add("", "x:=null")
	f.Fuzz(func(t *testing.T, raw, pair string) {
		if raw == "-" || strings.HasPrefix(raw, "@") {
			return // reads stdin or files
		}
		got, err := buildArgs(raw, strings.NewReader(""), []string{pair}, argsSchema)
		if err != nil {
			return
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("accepted arguments do not marshal: %v (%#v)", err, got)
		}
		if !json.Valid(b) || b[0] != '{' {
			t.Fatalf("accepted arguments are not a JSON object: %s", b)
		}
	})
}
