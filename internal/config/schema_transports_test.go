package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// TestPublishedSchemaTransports checks the published JSON Schema alone, as
// the YAML language server sees it (no Switchboard code, no vocabulary of
// ours: santhosh-tekuri/jsonschema with the file as it is checked in):
// it refuses a key on a server whose transport does not use it, and it
// accepts every switchboard.yaml example in the docs that is not marked as
// wrong on purpose.
func TestPublishedSchemaTransports(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "..", filepath.FromSlash(schema.FilePath)))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource(schema.ID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(schema.ID)
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, name, src string) error {
		t.Helper()
		ps := &problems{}
		root := parseTree(name, []byte(src), ps)
		if len(ps.errs) > 0 || root == nil {
			t.Fatalf("%s: not YAML: %v", name, ps.errs)
		}
		return sch.Validate(instance(root, nil))
	}

	for _, tc := range []struct {
		name, server string
		refused      string // the key the schema must refuse, "" if none
	}{
		{"command on http", "transport: http\n    url: https://example.com/mcp\n    command: npx", "command"},
		{"env on sse", "transport: sse\n    url: https://example.com/sse\n    env: {A: b}", "env"},
		{"docker on websocket", "transport: websocket\n    url: wss://example.com/ws\n    docker: {image: mcp/x}", "docker"},
		{"sse_read_timeout on websocket", "transport: websocket\n    url: wss://example.com/ws\n    sse_read_timeout: 5s", "sse_read_timeout"},
		{"terminate_on_close on sse", "transport: sse\n    url: https://example.com/sse\n    terminate_on_close: false", "terminate_on_close"},
		{"url with no transport (stdio)", "command: npx\n    url: https://example.com/mcp", "url"},
		{"headers on stdio", "transport: stdio\n    command: npx\n    headers: {A: b}", "headers"},
		{"http", "transport: http\n    url: https://example.com/mcp\n    headers: {A: b}\n    terminate_on_close: false\n    sse_read_timeout: 5s\n    oauth: {}\n    auth: per_user", ""},
		{"sse", "transport: sse\n    url: https://example.com/sse\n    sse_read_timeout: 5s", ""},
		{"stdio", "command: npx\n    args: [-y, pkg]\n    env: {A: b}\n    cwd: .\n    launch: {allow: [npx.node-options]}", ""},
		{"docker", "docker: {image: mcp/github}", ""},
		{"keys of every transport", "transport: websocket\n    url: wss://example.com/ws\n    timeout: 5s\n    session: per_user", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(t, "sb.yaml", "servers:\n  - name: a\n    "+tc.server+"\n")
			var ve *sjs.ValidationError
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("got %v, want the server accepted", err)
			case tc.refused != "" && !errors.As(err, &ve):
				t.Errorf("got %v, want %s refused", err, tc.refused)
			case tc.refused != "" && !strings.Contains(err.Error(), "/servers/0/"+tc.refused):
				t.Errorf("got %v, want it to refuse /servers/0/%s", err, tc.refused)
			}
		})
	}

	// What each transport needs: a url for the network ones, a command
	// or a docker image for stdio (the default).
	for _, tc := range []struct{ name, server, missing string }{
		{"http without url", "transport: http\n    headers: {A: b}", "url"},
		{"sse without url", "transport: sse", "url"},
		{"websocket without url", "transport: websocket", "url"},
		{"stdio without command", "transport: stdio\n    args: [x]", "command"},
		{"no transport, no command", "env: {A: b}", "command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(t, "sb.yaml", "servers:\n  - name: a\n    "+tc.server+"\n")
			if err == nil || !strings.Contains(err.Error(), "'"+tc.missing+"'") {
				t.Errorf("got %v, want the server refused for its missing %s", err, tc.missing)
			}
		})
	}

	t.Run("docs examples", func(t *testing.T) {
		checked := 0
		eachDocsExample(t, func(f, before, src string, root *node) {
			if before == InvalidExample || before == plannedExample {
				return
			}
			checked++
			if err := sch.Validate(instance(root, nil)); err != nil {
				t.Errorf("%s: the published schema refuses an example: %v\n%s", filepath.Base(f), err, src)
			}
		})
		if checked < 15 {
			t.Errorf("checked %d examples, want at least 15", checked)
		}
	})
}
