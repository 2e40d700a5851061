package config_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestURLWithoutTransport: a server with a url and no transport is told
// just that, with the transport its URL suggests, and not that the stdio
// transport (the default) lacks a command or cannot use a url.
func TestURLWithoutTransport(t *testing.T) {
	t.Parallel()
	checkProblems(t, "servers:\n", config.TestOpts, []problemCase{
		{
			name: "streamable HTTP",
			src:  "  - name: remote\n    url: https://mcp.example.com/mcp\n",
			want: []string{`sb.yaml:3:5: servers.remote.transport: url is set but transport is not, and a server without transport is started as a command (stdio); add transport: http (the transports that take a url are http, sse and websocket)`},
		},
		{
			name: "SSE",
			src:  "  - name: remote\n    url: https://mcp.example.com/sse\n",
			want: []string{`sb.yaml:3:5: servers.remote.transport: url is set but transport is not, and a server without transport is started as a command (stdio); add transport: sse (the transports that take a url are http, sse and websocket)`},
		},
		{
			name: "WebSocket",
			src:  "  - name: remote\n    url: wss://mcp.example.com/ws\n",
			want: []string{`sb.yaml:3:5: servers.remote.transport: url is set but transport is not, and a server without transport is started as a command (stdio); add transport: websocket (the transports that take a url are http, sse and websocket)`},
		},
	})
}
