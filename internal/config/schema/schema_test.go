package schema_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

var update = flag.Bool("update", false, "rewrite docs/switchboard.schema.json from the Go types")

// checkedIn is the checked-in schema, from this package's folder.
var checkedIn = filepath.Join("..", "..", "..", filepath.FromSlash(schema.FilePath))

// TestSchemaFile fails when the checked-in schema is not the one the Go
// types generate: run go generate ./internal/config/schema (or this test
// with -update) after changing a type.
func TestSchemaFile(t *testing.T) {
	got, err := schema.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(checkedIn, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(checkedIn)
	if err != nil {
		t.Fatalf("%v (run go generate ./internal/config/schema)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not the schema the Go types generate; run go generate ./internal/config/schema (-checked in +generated):\n%s", schema.FilePath, diff)
	}
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	if got, want := doc["$id"], schema.ID; got != want {
		t.Errorf("got $id %v, want %v", got, want)
	}
	if !strings.HasSuffix(schema.ID, "/"+schema.FilePath) {
		t.Errorf("ID %s does not name %s", schema.ID, schema.FilePath)
	}
}

// TestEveryKeyDescribed checks that every key of the file has a
// description, which editors show as it is typed.
func TestEveryKeyDescribed(t *testing.T) {
	got, err := schema.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties map[string]map[string]any `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(where string, props map[string]map[string]any) {
		for k, p := range props {
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s.%s has no description: give its field a doc comment", where, k)
			}
		}
	}
	check("(top)", doc.Properties)
	for name, d := range doc.Defs {
		check(name, d.Properties)
	}
}

// TestEveryPatternWorded: an editor shows a value that does not match a
// pattern with the schema's patternErrorMessage, else as "String does not
// match the pattern of" and the regular expression. Every pattern of the
// published schema has words a person can act on.
func TestEveryPatternWorded(t *testing.T) {
	got, err := schema.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	patterns := 0
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["pattern"].(string); ok {
				patterns++
				msg, _ := x["patternErrorMessage"].(string)
				switch {
				case msg == "":
					t.Errorf("%s: pattern %q has no patternErrorMessage: give the field an x-fix", where, p)
				case strings.Contains(p, "ms|s|m|h") && !strings.Contains(msg, "30s"):
					t.Errorf("%s: the duration's patternErrorMessage %q shows no example", where, msg)
				}
			}
			for k, e := range x {
				walk(where+"/"+k, e)
			}
		case []any:
			for _, e := range x {
				walk(where+"/[]", e)
			}
		}
	}
	walk("", doc)
	if patterns < 5 {
		t.Errorf("found %d patterns, want the duration's, the names' and the variables'", patterns)
	}
}

func decode(t *testing.T, src string) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(src)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestViolationWording checks the words of each kind of problem.
func TestViolationWording(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", `{"servers": [{"name": "a", "urll": "x"}], "limts": {}}`, []string{
			`limts: unknown field "limts"; did you mean "limits"?`,
			`servers.0.urll: unknown field "urll"; did you mean "url"?`,
		}},
		{"x- keys", `{"x-common": {"anything": 1}}`, nil},
		{"type", `{"servers": "github", "history": {"keep": "all", "record_values": "yes"}}`, []string{
			`history.keep: must be a whole number, not a string`,
			`history.record_values: must be true or false, not a string; write record_values: true (true and false are written bare: yes, on and quoted words are strings)`,
			`servers: must be a list of servers, not a string; start each server with "- name: ..."`,
		}},
		{"null in a mapping of strings", `{"servers": [{"name": "a", "env": {"A": null}}]}`, []string{
			`servers.0.env.A: must be a string, not empty; write A: "" for an empty value`,
		}},
		{"numbers as text", `{"servers": [{"name": "a", "args": ["--port", 8080], "env": {"DEBUG": true}}]}`, nil},
		{"required", `{"servers": [{"command": "npx"}], "gateway": {"tokens": [{"token_env": "T"}]}}`, []string{
			`gateway.tokens.0.user: user is required; add user: with the identity calls made with this token carry, e.g. user: alice`,
			`servers.0.name: name is required; add name: with a unique name, e.g. name: github`,
		}},
		{"ranges", `{"defaults": {"request_timeout": "6m", "connect_timeout": 0, "max_retries": -1, "health": {"max_failures": 0}}, "hook_settings": {"retries": 9}}`, []string{
			`defaults.connect_timeout: must be greater than 0, not 0s`,
			`defaults.health.max_failures: must be at least 1, not 0; use 1 or more (the default is 3)`,
			`defaults.max_retries: must not be negative, not -1`,
			`defaults.request_timeout: 6m is out of range; use a value from 1s to 5m (the default is 30s)`,
			`hook_settings.retries: 9 is out of range; use 0 to 5 (the default is 1)`,
		}},
		{"sizes", `{"limits": {"max_output": 512}, "gateway": {"max_request_bytes": "1 TB"}}`, []string{
			`gateway.max_request_bytes: invalid size "1 TB"; use a number of bytes, or a size such as 512KiB or 1MiB (units B, KB, KiB, MB, MiB, GB or GiB)`,
			`limits.max_output: 512 bytes is out of range; use a size from 1KiB to 1GiB (the default is 1MiB)`,
		}},
		{"durations", `{"defaults": {"discovery_ttl": "5 m", "ping": 1}, "limits": {"queue_wait": [1]}}`, []string{
			`defaults.discovery_ttl: invalid duration "5 m"; use a duration such as 30s or 1m30s, or a number of seconds`,
			`defaults.ping: unknown field "ping"; remove it; docs/configuration.md lists the fields`,
			`limits.queue_wait: must be a duration, not a list; use a duration such as 30s or 1m30s, or a number of seconds`,
		}},
		{"enums", `{"servers": [{"name": "a", "transport": "htpp"}, {"name": "b", "transport": "grpc"}]}`, []string{
			`servers.0.transport: unknown transport "htpp"; did you mean "http"?`,
			`servers.1.transport: unknown transport "grpc"; use one of stdio, sse, http, websocket`,
		}},
		{"a value or a word", `{"limits": {"queue_wait": "timout", "session_limit": 0}}`, []string{
			`limits.queue_wait: invalid value "timout"; use "timeout" to wait as long as the call's timeout allows (the default), or a duration from 0s (fail at once) to 5m`,
			`limits.session_limit: must be -1 (unlimited) or at least 1, not 0; use -1 for unlimited`,
		}},
		{"keys that go with a type", `{"hooks": [{"name": "h", "on": "x", "actions": [{"type": "mcp", "server": "s", "tool": "t", "url": "u"}, {"type": "github", "github": "comment"}]}]}`, []string{
			`hooks.0.actions.0.url: url is not a key of an mcp action; remove it; an mcp action takes type, timeout, server, tool and params`,
			`hooks.0.actions.1.body: body is required for a github action; give the comment text (a template)`,
			`hooks.0.actions.1.number: number is required for a github action; give the issue or pull request number (a template, e.g. "{number}")`,
		}},
		{"conditions", `{"hooks": [{"name": "h", "on": "x", "if": {"a": "x", "b": {"glob": "x", "regex": "y"}, "c": {"equal": "x"}}, "actions": [{"type": "command", "command": ["x"]}]}]}`, []string{
			`hooks.0.if.b: a condition has exactly one of equals, glob or regex; e.g. branch: {glob: "feature/*"}`,
			`hooks.0.if.c.equal: unknown field "equal"; did you mean "equals"?`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := schema.Validate(decode(t, tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				s := strings.Join(v.Path, ".") + ": " + v.Message
				if v.Fix != "" {
					s += "; " + v.Fix
				}
				got = append(got, s)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("violations mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckKey checks a flag's value by the rules of the key it overrides.
func TestCheckKey(t *testing.T) {
	tests := []struct {
		key  string
		v    any
		want string
	}{
		{"agent.max_steps", json.Number("0"), "0 is out of range; use 1 to 1000 (the default is 10)"},
		{"agent.max_steps", json.Number("10"), ""},
		{"agent.timeout", "25h", "25h is out of range; use a value up to 24h, or 0 for no time limit (the default is 5m)"},
		{"agent.timeout", "0s", ""},
		{"limits.queue_wait", "timeout", ""},
	}
	for _, tt := range tests {
		if got := schema.CheckKey(tt.key, tt.v); got != tt.want {
			t.Errorf("CheckKey(%s, %v): got %q, want %q", tt.key, tt.v, got, tt.want)
		}
	}
}

// TestIsValueMap tells a mapping of names to values from a block.
func TestIsValueMap(t *testing.T) {
	for path, want := range map[string]bool{
		"servers/0/env": true, "servers/0/headers": true, "gateway/views/0/rename": true,
		"servers/0": false, "defaults": false, "defaults/health": false, "": false, "servers/0/docker/ports": true,
	} {
		var p []string
		if path != "" {
			p = strings.Split(path, "/")
		}
		if got := schema.IsValueMap(p); got != want {
			t.Errorf("IsValueMap(%s): got %v, want %v", path, got, want)
		}
	}
}
