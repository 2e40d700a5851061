package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// TestCallDeniedCarriesTheRequestID: a call a guard hook denies is
// recorded with the id of the client's tools/call as the client sent it —
// a number from the go-sdk client, a string from a raw client, kept as
// JSON — and the client's session, whether the gateway answers the call
// itself (fast_path) or through the SDK.
func TestCallDeniedCarriesTheRequestID(t *testing.T) {
	t.Parallel()
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			trail := filepath.Join(dir, "audit.jsonl")
			path := filepath.Join(dir, "switchboard.yaml")
			writeConfig(t, path, map[string]string{"alpha": "ok"}, `hooks:
  - name: no-adding
    on: tool.before
    if:
      tool: add
    actions:
      - type: command
        command: [sh, -c, "echo adding is closed today >&2; exit 2"]
audit:
  file: audit.jsonl
`)
			cfg, err := config.Load(path, config.Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, cfg, func(o *Options) {
				if _, err := hooks.Trust(o.StateDir, path); err != nil {
					t.Fatal(err)
				}
			})

			// The go-sdk client numbers its requests.
			cs := r.connect(t, "/mcp", nil, nil)
			waitTools(t, cs, "alpha's tools", has("alpha__add"))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err == nil && (res == nil || !res.IsError) {
				t.Fatal("the guard let the go-sdk client's call through")
			}
			// A raw client names its request with a string.
			s := newCapableSession(t, r.url+"/mcp", clientCaps)
			msgs := s.exchangeID(`{"jsonrpc":"2.0","id":"deny-7","method":"tools/call","params":{"name":"alpha__add","arguments":{"a":1,"b":2}}}`, `"deny-7"`, answerAll)
			if b, _ := json.Marshal(msgs); !strings.Contains(string(b), "adding is closed today") {
				t.Fatalf("the raw client's call was not denied: %s", b)
			}

			events := auditEvents(t, trail, "two denied calls", func(es []audit.Event) bool { return len(find(es, audit.CallDenied)) == 2 })
			bySession := map[string]audit.Event{}
			for _, e := range find(events, audit.CallDenied) {
				bySession[e.Actor.Session] = e
			}
			sdk, ok := bySession[cs.ID()]
			if !ok {
				t.Fatalf("no call.denied in the go-sdk client's session %s: %+v", cs.ID(), events)
			}
			if id := sdk.RequestID; len(id) == 0 || id[0] < '0' || id[0] > '9' {
				t.Errorf("go-sdk client: request_id %s, want the JSON number the client sent", sdk.RequestID)
			}
			raw, ok := bySession[s.id]
			if !ok {
				t.Fatalf("no call.denied in the raw client's session %s: %+v", s.id, events)
			}
			if string(raw.RequestID) != `"deny-7"` {
				t.Errorf("raw client: request_id %s, want \"deny-7\" (a JSON string)", raw.RequestID)
			}
			for _, e := range []audit.Event{sdk, raw} {
				if e.CallID == "" || e.Target.Tool != "add" || e.Actor.Via != "gateway" {
					t.Errorf("got %+v, want the denied call of add through the gateway with its call id", e)
				}
			}
		})
	}
}
