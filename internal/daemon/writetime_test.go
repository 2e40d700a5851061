package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// chattyServer has a tool that reports progress with large messages until
// its call ends, counting them in sent, and one that reports three small
// steps.
func chattyServer(sent *atomic.Int64) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "1"}, nil)
	big := strings.Repeat("x", 64<<10)
	type none struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "chatter", Description: "Reports 64 KiB progress messages until cancelled (at most 400)."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= 400 && ctx.Err() == nil; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Message: big})
				sent.Add(1)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "chattered"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Reports three steps."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 steps"}}}, nil, nil
		})
	return s
}

// A client that calls a tool and never reads its stream is cut off once a
// write to it has waited gateway.write_timeout, and the daemon says so; until
// then the write holds the notifications of the upstream connection (one
// handler goroutine each, over stdio, SSE and WebSocket), and without the
// bound another client's progress from the same server never reached it
// while the stalled client kept its connection open.
func TestStalledClientIsCutOff(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	// Over SSE, as over stdio, the server's notifications arrive on one
	// connection and are handled one at a time.
	var sent atomic.Int64
	chatty := chattyServer(&sent)
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return chatty }, nil))
	t.Cleanup(hs.Close) // after the daemon's, which holds the stream open
	srv := httpUpstream("alpha", hs.URL)
	srv.Transport = config.TransportSSE
	cfg := testConfig(srv)
	cfg.Gateway.WriteTimeout = 300 * time.Millisecond
	r := start(t, cfg, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	addr := strings.TrimPrefix(r.url, "http://")
	other := make(chan *mcp.ProgressNotificationParams, 16)
	cs := r.connect(t, "/mcp", nil, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { other <- req.Params },
	})
	waitTools(t, cs, "alpha's tools", has("alpha__chatter", "alpha__steps"))

	// The stalled client: a session, then a call on a connection with a
	// small receive buffer that it never reads.
	s := newRawSession(t, r.url+"/mcp", nil)
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha__chatter","arguments":{},"_meta":{"progressToken":"stalled"}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", addr, s.id, len(body), body)

	// 6.4 MB, more than the sockets' buffers hold.
	eventually(t, "the server sends the stalled client's call 100 messages", func() bool { return sent.Load() >= 100 })

	// Another client's progress on the same server reaches it.
	params := &mcp.CallToolParams{Name: "alpha__steps", Arguments: map[string]any{}}
	params.SetProgressToken("other")
	if res, err := cs.CallTool(context.Background(), params); err != nil || textOf(res) != "3 steps" {
		t.Fatalf("alpha__steps: %v %v", res, err)
	}
	for i := range 3 {
		select {
		case p := <-other:
			if p.ProgressToken != "other" {
				t.Errorf("progress token: got %v, want other", p.ProgressToken)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d progress notifications of the other client's call, want 3", i)
		}
	}

	if n := r.d.writes.stalled.Load(); n != 1 {
		t.Errorf("clients cut off: got %d, want 1", n)
	}
	if !strings.Contains(logs.String(), "closed the connection of a client that did not read its response within gateway.write_timeout") {
		t.Errorf("log: got\n%s\nwant a line saying a stalled client was cut off", logs.String())
	}
	// The stalled client's connection was closed: what it reads ends.
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		t.Errorf("reading the stalled connection: %v, want it closed by the daemon", err)
	}
}
