package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := redact.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode(%s): %v", s, err)
	}
	return v
}

func TestValue(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2", "424242424242"})
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"strings", `{"q":"login with hunter2hunter2","n":1}`, `{"q":"login with [REDACTED]","n":1}`},
		{"credential keys", `{"password":"x","api_key":123,"Authorization":"Basic abc","auth":{"user":"u","pass":"p"},"cookies":["a","b"]}`,
			`{"password":"[REDACTED]","api_key":"[REDACTED]","Authorization":"[REDACTED]","auth":"[REDACTED]","cookies":"[REDACTED]"}`},
		{"blank credential values kept", `{"password":null,"token":"","auth":false,"secrets":[],"session":{}}`,
			`{"password":null,"token":"","auth":false,"secrets":[],"session":{}}`},
		{"harmless keys kept", `{"max_tokens":100,"tokens_used":5,"author":"Jane","token_count":2,"nextPageToken":"CAE"}`,
			`{"max_tokens":100,"tokens_used":5,"author":"Jane","token_count":2,"nextPageToken":"CAE"}`},
		{"nested", `{"a":[{"b":{"client_secret":"s","c":"` + ghToken + `"}}]}`, `{"a":[{"b":{"client_secret":"[REDACTED]","c":"[REDACTED]"}}]}`},
		{"secret number", `{"pin":424242424242,"n":424242424243}`, `{"pin":"[REDACTED]","n":424242424243}`},
		{"secret in a key", `{"hunter2hunter2":1}`, `{"[REDACTED]":1}`},
		{"scalar", `"Bearer ` + bearerToken + `"`, `"Bearer [REDACTED]"`},
		{"null", `null`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustDecode(t, tt.in)
			before := mustDecode(t, tt.in)
			got := r.Value(in)
			if diff := cmp.Diff(mustDecode(t, tt.want), got); diff != "" {
				t.Errorf("Value(%s) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("Value changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestValueOtherTypes(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2"})
	in := map[string]any{
		"env":   map[string]string{"HOME": "/root", "GITHUB_TOKEN": "abc"},
		"args":  []string{"--pw", "hunter2hunter2"},
		"count": 3,
		"f":     1.5,
	}
	want := map[string]any{
		"env":   map[string]any{"HOME": "/root", "GITHUB_TOKEN": redact.Marker},
		"args":  []any{"--pw", redact.Marker},
		"count": json.Number("3"),
		"f":     1.5,
	}
	if diff := cmp.Diff(want, r.Value(in)); diff != "" {
		t.Errorf("Value (-want +got):\n%s", diff)
	}
	if got := r.Value(func() {}); got != redact.Marker {
		t.Errorf("Value(func) = %v, want %q", got, redact.Marker)
	}
}

func TestJSON(t *testing.T) {
	r := redact.New([]string{"hunter2hunter2"})
	tests := []struct {
		name, in, want string
	}{
		{"unchanged keeps bytes", "{ \"b\": 1,\n  \"a\": [1e400, 12345678901234567890] }", "{ \"b\": 1,\n  \"a\": [1e400, 12345678901234567890] }"},
		{"numbers keep their text", `{"token":"x","big":12345678901234567890,"huge":1e400,"f":0.10,"neg":-0}`,
			`{"big":12345678901234567890,"f":0.10,"huge":1e400,"neg":-0,"token":"[REDACTED]"}`},
		{"no HTML escaping", `{"q":"<a href='x'>&</a> hunter2hunter2"}`, `{"q":"<a href='x'>&</a> [REDACTED]"}`},
		{"escaped secret", `{"q":"hunter2\u0068unter2"}`, `{"q":"[REDACTED]"}`},
		{"unicode kept", `{"q":"héllo ✓ hunter2hunter2"}`, `{"q":"héllo ✓ [REDACTED]"}`},
		{"invalid JSON", `{"password": "hunter2hunter2", oops`, `{"password": "[REDACTED]", oops`},
		{"trailing data", `{"a":1} hunter2hunter2`, `{"a":1} [REDACTED]`},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(r.JSON(json.RawMessage(tt.in))); got != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestShape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"object", `{"city":"London","days":3,"opts":{"x":true},"tags":["a","b"],"none":null}`,
			`{"city":"string","days":"number","opts":{"x":"boolean"},"tags":["string"],"none":"null"}`},
		{"mixed array", `[1,"a",2,{"k":1},{"k":2},{"k":"s"},null,[true]]`,
			`["number","string",{"k":"number"},{"k":"string"},"null"]`},
		{"empty", `{"a":[],"o":{}}`, `{"a":[],"o":{}}`},
		{"scalar", `"x"`, `"string"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.Shape(mustDecode(t, tt.in))
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Shape(%s) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	if got, want := redact.Shape(map[string]any{"n": 3, "s": []string{"a"}}), (map[string]any{"n": "number", "s": []any{"string"}}); !cmp.Equal(got, want) {
		t.Errorf("Shape of Go types = %v, want %v", got, want)
	}
	if got := redact.Shape(strings.Repeat("secret", 3)); got != "string" {
		t.Errorf("Shape(string) = %v, want string", got)
	}
}
