package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestServerCancelsItsOwnRequest: a server that stops waiting for an
// answer it asked its client for (a go-sdk tool that elicits under a
// deadline) tells the client so with notifications/cancelled and goes on
// with its call. Directly, the client's handler of the request is
// cancelled and the call's result follows; through the gateway the client
// must get the same on the call's stream — the cancellation naming the
// request it was asked, then the result — with fast_path on, where the
// upstream side's lean path reads the call's stream itself, from the
// shared session and from a client's own (a prefix: never view of a
// per_client server, which passes the elicitation on as the server wrote
// it). The client never answers: a lean path that waited for its answer
// before reading on held the call until its timeout (two minutes here),
// far past the test's wait. (With fast_path off the go-sdk's client reads
// the stream, and its handler's cancellation races the call's result to
// the client: docs/gateway.md says so, and no test here waits on it.)
func TestServerCancelsItsOwnRequest(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "impatient", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "gives-up", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ectx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			_, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"username": map[string]any{"type": "string"}}}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("gave up: %v", errors.Is(err, context.DeadlineExceeded))}}}, nil
		})
	url := serveHTTP(t, srv, nil)
	for _, tc := range []struct{ fast, perNever bool }{{true, false}, {true, true}, {false, false}, {false, true}} {
		// perNever: a prefix: never view of a per_client server, whose
		// elicitations go as given.
		fast, perNever := tc.fast, tc.perNever
		t.Run(fmt.Sprintf("fast_path=%v/per_client_never=%v", fast, perNever), func(t *testing.T) {
			srv := httpUpstream("imp", url)
			srv.RequestTimeout = 2 * time.Minute
			cfg, tool := testConfig(srv), "imp__gives-up"
			if perNever {
				srv.Session = config.SessionPerClient
				cfg, tool = neverView(srv), "gives-up"
			}
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, cfg)
			s := newCapableSession(t, r.url+"/mcp", clientCaps)
			s.waitListed(tool)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url,
				strings.NewReader(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", s.id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			defer resp.Body.Close()
			var asked json.RawMessage // the id of the elicitation the client was sent
			var seen []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				seen = append(seen, data)
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params struct {
						RequestID json.RawMessage `json:"requestId"`
					} `json:"params"`
					Result *mcp.CallToolResult `json:"result"`
				}
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				switch {
				case m.Method == "elicitation/create":
					asked = m.ID // and never answered
				case m.Method == "notifications/cancelled":
					if asked == nil || string(m.Params.RequestID) != string(asked) {
						t.Errorf("notifications/cancelled names %s; the client was asked %s", m.Params.RequestID, asked)
					}
					asked = json.RawMessage("cancelled")
				case string(m.ID) == `"c-1"`:
					if string(asked) != "cancelled" {
						t.Errorf("the call's result came without the cancellation of the request it asked; saw %v", seen)
					}
					if m.Result == nil || len(m.Result.Content) != 1 || m.Result.Content[0].(*mcp.TextContent).Text != "gave up: true" {
						t.Errorf("the call's answer: %s; want the server's result \"gave up: true\"", data)
					}
					return
				}
			}
			t.Fatalf("the call's stream ended without its result (%v); saw %v", sc.Err(), seen)
		})
	}
}
