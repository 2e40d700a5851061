package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file checks that a view is indistinguishable from its server
// (issue 17): what a client and an upstream each see through the gateway
// is what they see talking to each other directly.

// httpUpstream is the configuration of a streamable-HTTP server at url.
func httpUpstream(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true, LoadTools: true,
		LoadPrompts: true, LoadResources: true, RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
}

// serveHTTP serves s over streamable HTTP (stateful unless opts says
// otherwise) until the test ends, after the daemon has stopped.
func serveHTTP(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	return hs.URL
}

// connectStdio connects a go-sdk client (opts) to serve --stdio's end t.
func connectStdio(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// metaServer is a go-sdk server whose tool "meta" returns the _meta of
// the request that called it.
func metaServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "meta", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	return s
}

// TestGatewayStripsTheClientsProtocolMeta: a go-sdk client over serve
// --stdio negotiates protocol 2026-07-28, so every request it sends
// carries its protocol version, identity and capabilities in _meta. Those
// belong to its hop to the gateway: a go-sdk HTTP server on 2025-11-25
// refuses a call that carries them ("protocol version 2026-07-28 is not
// supported"). Forwarded without them, the call is answered, and the
// server sees what the client asked (its own _meta keys) and the caller's
// identity, nothing of the client's protocol.
func TestGatewayStripsTheClientsProtocolMeta(t *testing.T) {
	url := serveHTTP(t, metaServer(), nil)
	clientT := startStdio(t, testConfig(httpUpstream("remote", url)))
	cs := connectStdio(t, clientT, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client negotiated %s with serve --stdio, want 2026-07-28 (the case this test is about)", v)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"trace": "t-1"}})
	if err != nil {
		t.Fatalf("calling through the gateway: %v", err)
	}
	if res.IsError {
		t.Fatalf("the upstream refused the call: %s", textOf(res))
	}
	var seen map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &seen); err != nil {
		t.Fatalf("the upstream's _meta: %q: %v", textOf(res), err)
	}
	for k := range seen {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			t.Errorf("the upstream saw the client's %s: %v", k, seen)
		}
	}
	if seen["trace"] != "t-1" || seen["user_id"] == nil {
		t.Errorf("the upstream's _meta: got %v, want the client's trace and the caller's user_id", seen)
	}
}
