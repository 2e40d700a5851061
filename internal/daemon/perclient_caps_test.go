package daemon

//lint:file-ignore SA1019 sampling, elicitation and roots are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// directStdio connects a go-sdk client (opts) straight to srv, a stdio
// test server: what the client sees without the gateway.
func directStdio(t *testing.T, srv config.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return connectStdio(t, &mcp.CommandTransport{Command: cmd}, opts)
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
			direct := textOf(call(t, directStdio(t, srv, c.opts()), "caps", map[string]any{}))
			o := c.opts()
			gw := r.connectListening(t, "/mcp", o)
			through := textOf(call(t, gw.cs, "st__caps", map[string]any{}))
			if through != direct {
				t.Errorf("the server saw capabilities %s through the gateway, %s directly", through, direct)
			}
		})
	}
}
