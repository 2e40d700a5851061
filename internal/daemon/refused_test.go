package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestEveryRefusedCallIsRecorded sends the gateway a call for each way it
// can refuse one — a server still starting, a tool outside the view, an
// unknown tool (with and without a server of the view in its name),
// arguments that fail the schema, arguments that are not an object, a
// call without a name — on the fast path and the SDK's: each answers with
// the typed error the CLI gives, is in the history with its error kind,
// and fires tool.failed.
func TestEveryRefusedCallIsRecorded(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "SDK path"}[fast], func(t *testing.T) {
			testRefusedCalls(t, fast)
		})
	}
}

func testRefusedCalls(t *testing.T, fast bool) {
	sink := newEventSink(t)
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok", "slow": "slow-start " + testserver.EnvDelay + "=5m"}, fmt.Sprintf(`hooks:
  - name: failures
    on: tool.failed
    actions:
      - {type: http, url: %q}
`, sink.srv.URL))
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Gateway.DisableFastPath = !fast
	cfg.Gateway.Views = []config.View{
		{Name: "narrow", Exclude: []string{"alpha__add"}, Prefix: config.PrefixAlways},
		{Name: "renamed", Servers: []string{"alpha"}, Rename: map[string]string{"alpha__echo": "say"}, Prefix: config.PrefixAlways},
		{Name: "solo", Servers: []string{"alpha"}, Exclude: []string{"add"}, Prefix: config.PrefixNever},
	}
	r := start(t, cfg, func(o *Options) {
		if _, err := hooks.Trust(o.StateDir, path); err != nil {
			t.Fatal(err)
		}
	})
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__echo", "alpha__add"))
	narrow := r.connect(t, "/mcp/narrow", nil, nil)
	waitTools(t, narrow, "the narrow view", has("alpha__echo"))
	renamed := r.connect(t, "/mcp/renamed", nil, nil)
	waitTools(t, renamed, "the renamed view", has("say"))
	solo := r.connect(t, "/mcp/solo", nil, nil)
	waitTools(t, solo, "the solo view", has("echo"))

	tests := []struct {
		name     string
		cs       *mcp.ClientSession
		tool     string
		args     any
		protocol bool // a JSON-RPC error rather than an isError result
		want     string
		// what the history and the tool.failed event hold
		server, recTool, kind string
	}{
		{"server still starting", cs, "slow__echo", map[string]any{"message": "hi"}, false, "server slow is not connected yet", "slow", "echo", "connection"},
		{"tool outside the view", narrow, "alpha__add", map[string]any{"a": 1, "b": 2}, true, `tool "alpha__add" is not part of view "narrow"`, "alpha", "add", "authorization"},
		{"unknown tool of a server", cs, "alpha__nope", map[string]any{}, true, `server alpha has no tool named "nope"`, "alpha", "nope", "not_found"},
		{"unknown name", cs, "nonsense", map[string]any{}, true, `view "default" has no tool named "nonsense"`, "", "nonsense", "not_found"},
		{"a renamed tool's old name", renamed, "alpha__echo", map[string]any{"message": "hi"}, true, `it calls that tool "say"`, "alpha", "echo", "not_found"},
		{"outside an unprefixed view", solo, "add", map[string]any{"a": 1, "b": 2}, true, `tool "add" is not part of view "solo"`, "alpha", "add", "authorization"},
		{"unknown in an unprefixed view", solo, "nothing", map[string]any{}, true, `server alpha has no tool named "nothing"`, "alpha", "nothing", "not_found"},
		{"arguments that fail the schema", cs, "alpha__add", map[string]any{"a": "one", "b": 2}, false, "", "alpha", "add", "validation"},
		{"arguments that are not an object", cs, "alpha__echo", "just text", false, "the arguments are a string", "alpha", "echo", "validation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
			var msg string
			if tt.protocol {
				var werr *jsonrpc.Error
				if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
					t.Fatalf("got %v %v, want a JSON-RPC invalid-params error", res, err)
				}
				var data struct {
					Type string `json:"error_type"`
				}
				if json.Unmarshal(werr.Data, &data) != nil || data.Type != tt.kind+"_error" {
					t.Errorf("the error's data: got %s, want a structured %s_error", werr.Data, tt.kind)
				}
				msg = werr.Message
			} else {
				if err != nil {
					t.Fatalf("got %v, want an isError result", err)
				}
				if typ := errorType(t, res); typ != tt.kind+"_error" {
					t.Errorf("got error_type %q, want %s_error: %s", typ, tt.kind, textOf(res))
				}
				msg = textOf(res)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("the error %q does not say %q", msg, tt.want)
			}
			r.waitRecords(t, store.CallFilter{Source: "gateway", Tool: tt.recTool}, func(recs []store.CallRecord) bool {
				for _, rec := range recs {
					if rec.Server == tt.server && rec.ErrorKind == tt.kind && rec.Status == "error" {
						return true
					}
				}
				return false
			})
			sink.wait(t, "tool.failed for "+tt.tool, isEvent("tool.failed", "server", tt.server, "tool", tt.recTool, "error_kind", tt.kind, "source", "gateway"))
		})
	}

	// A call without a tool name is refused and recorded too.
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "params.name") {
		t.Errorf("a call without a name: got %v, want invalid params naming params.name", err)
	}
	r.waitRecords(t, store.CallFilter{Source: "gateway"}, func(recs []store.CallRecord) bool {
		for _, rec := range recs {
			if rec.Tool == "" && rec.ErrorKind == "validation" {
				return true
			}
		}
		return false
	})
}

// TestPromptOfServerNotConnected: prompts/get of a server that is not
// connected (still starting here; reconnecting after a crash in the soak)
// says so with the -32603 of an unreachable upstream, not the SDK's
// "unknown prompt" (invalid params), which would tell the client that the
// prompt does not exist. A prompt no server has is still unknown.
func TestPromptOfServerNotConnected(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok", "slow": "slow-start " + testserver.EnvDelay + "=5m"}, "")
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__echo"))

	_, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "slow__greet", Arguments: map[string]string{"name": "Ada"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError || !strings.Contains(werr.Message, "server slow is not connected yet") {
		t.Errorf("prompts/get of a server still starting: got %v, want a JSON-RPC internal error saying server slow is not connected yet", err)
	}
	_, err = cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "alpha__nope"})
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("prompts/get of a prompt alpha does not have: got %v, want invalid params", err)
	}
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "alpha__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(res.Messages) != 1 {
		t.Errorf("prompts/get of alpha's greet: got %v, %v, want its message", res, err)
	}
}
