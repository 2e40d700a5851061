package hooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// echoServer is an in-process streamable-HTTP server named name with the
// tool echo, served until the test ends: for tests about hooks rather than
// about a server's process, where a stdio test server (a race-built child
// that costs about 0.35 s CPU to start) would add nothing. One serves every
// subtest of a test; each subtest's pool opens its own session on it.
func echoServer(t testing.TB, name string) config.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type echoArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message back."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	// Closed after the subtests' fixtures (cleanups run last first), whose
	// sessions hold the server's event streams open until they stop.
	t.Cleanup(hs.Close)
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: hs.URL}
}
