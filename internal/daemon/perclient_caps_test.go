package daemon

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// directStateful connects a go-sdk client (opts) straight to the test
// server's "stateful" mode, served in process: what the client declares
// to the server without the gateway. The gateway's side keeps its stdio
// children; this side's point is the client's initialize, not a process.
func directStateful(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := testserver.Stateful(t).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("serving the stateful server in process: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	return connectStdio(t, ct, opts)
}

// TestPerClientSessionDeclaresItsClientsCapabilities: a per_client
// upstream session declares what its client declared — no more (the
// shared session declares sampling, elicitation and roots for everyone)
// and in the same modes — so the server sees the capabilities it sees
// when the client connects to it directly.
func TestPerClientSessionDeclaresItsClientsCapabilities(t *testing.T) {
	t.Parallel()
	srv := statefulServer(t, config.SessionPerClient, 8)
	r := start(t, testConfig(srv))
	waitTools(t, r.connectListening(t, "/mcp", nil).cs, "st's tools", has("st__caps"))
	for _, c := range []struct {
		name string
		opts func() *mcp.ClientOptions
	}{
		{"nothing", func() *mcp.ClientOptions { return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}} }},
		{"sdk defaults (roots with listChanged)", func() *mcp.ClientOptions { return &mcp.ClientOptions{} }},
		{"roots without listChanged", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}}
		}},
		{"sampling", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, CreateMessageHandler: sampleX}
		}},
		{"elicitation, form and url", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{ElicitationHandler: declineElicitation, Capabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}}
		}},
		{"elicitation, url only", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{ElicitationHandler: declineElicitation, Capabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}}
		}},
		{"everything", func() *mcp.ClientOptions {
			return &mcp.ClientOptions{CreateMessageHandler: sampleX, ElicitationHandler: declineElicitation}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			direct := textOf(call(t, directStateful(t, c.opts()), "caps", map[string]any{}))
			o := c.opts()
			gw := r.connectListening(t, "/mcp", o)
			through := textOf(call(t, gw.cs, "st__caps", map[string]any{}))
			if through != direct {
				t.Errorf("the server saw capabilities %s through the gateway, %s directly", through, direct)
			}
		})
	}
}
