package upstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestStdoutLineNotAnMCPMessage: a stdio server that prints a line that is
// not an MCP message to stdout (the TypeScript SDK's own
// toolWithSampleServer.js prints "MCP server is running..." with
// console.log) is used all the same, as clients built on the TypeScript
// SDK use it: the line is skipped, and kept with the server's stderr, where
// servers and the console show it.
func TestStdoutLineNotAnMCPMessage(t *testing.T) {
	t.Parallel()
	srv := config.Server{Name: "sample", Transport: config.TransportStdio, Enabled: true, LoadTools: true,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second}
	srv.Command, srv.Args = testpeer.SampleToolCommand(t)
	c, err := upstream.Dial(context.Background(), srv, upstream.DialOptions{})
	if err != nil {
		t.Fatalf("connecting to a server that prints a banner to stdout: %v; want it connected", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	tools, err := c.ListTools(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Name != "summarize" {
		t.Fatalf("tools/list: got %v, %v; want summarize", tools, err)
	}
	if _, err := c.Ping(context.Background()); err != nil {
		t.Errorf("ping: %v", err)
	}
	if got := c.Stderr(); !strings.Contains(got, "MCP server is running...") || !strings.Contains(got, "not an MCP message") {
		t.Errorf("stderr tail: got %q, want the stdout line, marked as not an MCP message", got)
	}
}
