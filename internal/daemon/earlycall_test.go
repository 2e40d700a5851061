package daemon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestACallBeforeDiscoveryListedFindsTheTool: a client that calls a tool
// the moment its server connected, before the gateway's discovery has
// listed it (here its first tools/list is held until the test ends), gets
// the tool's result, as it would talking to the server, not "no tool
// named"; on a shared and on a per_client server.
func TestACallBeforeDiscoveryListedFindsTheTool(t *testing.T) {
	t.Parallel()
	for _, mode := range []config.SessionMode{config.SessionShared, config.SessionPerClient} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			up := mcp.NewServer(&mcp.Implementation{Name: "slowlist", Version: "1"}, nil)
			up.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echoed"}}}, nil
				})
			held, release := make(chan struct{}), make(chan struct{})
			var first sync.Once
			up.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "tools/list" {
						hold := false
						first.Do(func() { hold = true })
						if hold {
							close(held)
							select {
							case <-release:
							case <-ctx.Done():
							}
						}
					}
					return next(ctx, method, req)
				}
			})
			srv := httpUpstream("slowlist", serveHTTP(t, up, nil))
			srv.Session = mode
			r := start(t, testConfig(srv), debugLogOnFailure(t))
			t.Cleanup(func() { close(release) }) // before the daemon stops
			select {
			case <-held:
			case <-time.After(30 * time.Second):
				t.Fatal("the gateway's discovery did not list the server's tools within 30s")
			}
			cs := r.connect(t, "/mcp", nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slowlist__echo", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("calling slowlist__echo before discovery listed it: %v", err)
			}
			if res.IsError || textOf(res) != "echoed" {
				t.Fatalf("calling slowlist__echo before discovery listed it: got %q (isError %v), want echoed", textOf(res), res.IsError)
			}
			// A name the server does not have is still refused, at once.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slowlist__nope", Arguments: map[string]any{}}); err == nil {
				t.Fatal("calling slowlist__nope: no error, want the server's tool to be unknown")
			}
		})
	}
}
