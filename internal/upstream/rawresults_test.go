package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestCaptureResult checks that a request the SDK's client makes with
// CaptureResult's context keeps its result as the server wrote it — over
// a wrapped connection (as stdio's) and over streamable HTTP, answered as
// an event stream and as JSON — and that requests of other methods,
// and error answers, keep nothing.
func TestCaptureResult(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
	// The go-sdk's types decode a schema into a map and its numbers into
	// float64: encoded again, this would read {"properties":{"n":{"maximum":1000,…
	const schema = `{"type":"object","properties":{"n":{"type":"number","maximum":1e3}}}`
	s.AddTool(&mcp.Tool{Name: "written", InputSchema: json.RawMessage(schema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})

	dial := map[string]func(t *testing.T) *upstream.Client{
		"connection": func(t *testing.T) *upstream.Client {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := s.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			c, err := upstream.Dial(context.Background(), config.Server{Name: "raw", Transport: config.TransportStdio, Command: "unused"},
				upstream.DialOptions{Transport: ct})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		},
	}
	for name, jsonResponse := range map[string]bool{"event stream": false, "JSON": true} {
		dial["streamable HTTP, "+name] = func(t *testing.T) *upstream.Client {
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			t.Cleanup(hs.Close)
			c, err := upstream.Dial(context.Background(), config.Server{Name: "raw", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true},
				upstream.DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
	}
	for name, dial := range dial {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := dial(t)
			ctx, capt := upstream.CaptureResult(context.Background(), "tools/list")
			tools, _, err := c.ListToolsPage(ctx, "")
			if err != nil || len(tools) != 1 {
				t.Fatalf("tools/list: %v, %d tools", err, len(tools))
			}
			raw, params, ok := capt.Result()
			if !ok || !strings.Contains(string(raw), `"inputSchema":`+schema) {
				t.Errorf("the kept result: %s (kept %v), want the server's, with the schema %s as written", raw, ok, schema)
			}
			if params == nil {
				t.Error("the request's params were not kept")
			}

			// Another method's request made with the context keeps nothing.
			ctx, capt = upstream.CaptureResult(context.Background(), "prompts/get")
			if _, _, err := c.ListToolsPage(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if raw, _, ok := capt.Result(); ok {
				t.Errorf("a tools/list kept as a prompts/get: %s", raw)
			}
			// An error answer keeps nothing.
			ctx, capt = upstream.CaptureResult(context.Background(), "prompts/get")
			if _, err := c.GetPrompt(ctx, "no-such-prompt", nil); err == nil {
				t.Fatal("prompts/get of an unknown prompt: no error")
			}
			if raw, _, ok := capt.Result(); ok {
				t.Errorf("an error answer kept: %s", raw)
			}
		})
	}
}
