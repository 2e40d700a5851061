package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wsTestTimeout bounds every wait in these tests; none sleeps.
const wsTestTimeout = 10 * time.Second

type wsEchoArgs struct {
	Text string `json:"text"`
	// Repeat, if positive, makes the result Text repeated Repeat times.
	Repeat int `json:"repeat,omitempty"`
}

// newWSTestServer returns an MCP server with tools "echo", "progress" and
// "block".
func newWSTestServer() *mcp.Server { return newWSTestServerStarted(nil) }

// newWSTestServerStarted is newWSTestServer whose "block" tool signals on
// started, if not nil, when it begins.
func newWSTestServerStarted(started chan<- struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ws-test", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in wsEchoArgs) (*mcp.CallToolResult, any, error) {
			text := in.Text
			if in.Repeat > 0 {
				text = strings.Repeat(text, in.Repeat)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "reports progress once"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: 1, Total: 2, Message: "halfway",
				})
				if err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "blocks until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if started != nil {
				started <- struct{}{}
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	return s
}

// wsStart serves server over WebSocket on an httptest server.
func wsStart(t *testing.T, server *mcp.Server, opts *WebSocketHandlerOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(NewWebSocketHandler(func(*http.Request) *mcp.Server { return server }, opts))
	t.Cleanup(ts.Close)
	return ts
}

func wsURL(ts *httptest.Server) string { return "ws" + strings.TrimPrefix(ts.URL, "http") }

// wsConnect connects an MCP client to ts; the session is closed at cleanup.
func wsConnect(t *testing.T, ts *httptest.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "ws-test-client", Version: "v0"}, copts)
	cs, err := client.Connect(ctx, &WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func wsCallEcho(ctx context.Context, cs *mcp.ClientSession, args wsEchoArgs) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("echo: unexpected result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", fmt.Errorf("echo: content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text, nil
}

// wsWaitDone fails the test unless f returns within wsTestTimeout, and returns
// its error.
func wsWaitDone(t *testing.T, what string, f func() error) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	select {
	case err := <-ch:
		return err
	case <-time.After(wsTestTimeout):
		t.Fatalf("%s did not return within %v", what, wsTestTimeout)
		return nil
	}
}

func wsReceive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wsTestTimeout):
		t.Fatalf("no %s within %v", what, wsTestTimeout)
		var zero T
		return zero
	}
}

func TestWebSocketSession(t *testing.T) {
	t.Parallel()
	server := newWSTestServer()
	ts := wsStart(t, server, nil)

	progress := make(chan *mcp.ProgressNotificationParams, 1)
	listChanged := make(chan struct{}, 1)
	cs := wsConnect(t, ts, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	// Each subtest has wsTestTimeout of its own: on a busy machine the
	// race-built large and concurrent echoes alone can take seconds, and
	// one deadline for them all left the last ones what the first had
	// not used.
	var ctx context.Context
	run := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.Background(), wsTestTimeout)
			defer cancel()
			f(t)
		})
	}

	run("initialize", func(t *testing.T) {
		got := cs.InitializeResult().ServerInfo.Name
		if got != "ws-test" {
			t.Errorf("server name: got %q, want %q", got, "ws-test")
		}
	})

	run("list tools", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if diff := cmp.Diff([]string{"block", "echo", "progress"}, names); diff != "" {
			t.Errorf("tool names (-want +got):\n%s", diff)
		}
	})

	run("call tool", func(t *testing.T) {
		got, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: "héllo"})
		if err != nil {
			t.Fatal(err)
		}
		if got != "héllo" {
			t.Errorf("echo: got %q, want %q", got, "héllo")
		}
	})

	run("progress notification", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{}}
		params.SetProgressToken("tok-1")
		if _, err := cs.CallTool(ctx, params); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		p := wsReceive(t, "progress notification", progress)
		if p.ProgressToken != "tok-1" || p.Progress != 1 || p.Total != 2 || p.Message != "halfway" {
			t.Errorf("progress: got %+v, want token tok-1, 1 of 2, halfway", p)
		}
	})

	run("tools list_changed", func(t *testing.T) {
		server.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		wsReceive(t, "tools/list_changed notification", listChanged)
	})

	run("large messages", func(t *testing.T) {
		// Both directions well past coder/websocket's default 32 KiB limit.
		in := strings.Repeat("abcdefgh", 16<<10) // 128 KiB
		got, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: in, Repeat: 8})
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat(in, 8); got != want {
			t.Errorf("echo of %d bytes: got %d bytes back, want %d", len(in), len(got), len(want))
		}
	})

	run("concurrent calls", func(t *testing.T) {
		const n = 50
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				want := fmt.Sprintf("call-%d", i)
				got, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: want})
				if err == nil && got != want {
					err = fmt.Errorf("got %q, want %q", got, want)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestWebSocketServerClose checks that the client notices at once when the
// server ends the session cleanly.
func TestWebSocketServerClose(t *testing.T) {
	t.Parallel()
	server := newWSTestServer()
	ts := wsStart(t, server, nil)
	cs := wsConnect(t, ts, nil)

	var n int
	for ss := range server.Sessions() {
		n++
		if err := ss.Close(); err != nil {
			t.Errorf("ServerSession.Close: %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("server sessions: got %d, want 1", n)
	}
	if err := wsWaitDone(t, "ClientSession.Wait", cs.Wait); err != nil {
		t.Errorf("ClientSession.Wait after a clean server close: got %v, want nil", err)
	}
}

// TestWebSocketNetworkFailure checks that a dropped TCP connection ends the
// client's session at once, with an error.
func TestWebSocketNetworkFailure(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(NewWebSocketHandler(func(*http.Request) *mcp.Server { return newWSTestServer() }, nil))
	tl := &wsTrackingListener{Listener: ts.Listener}
	ts.Listener = tl
	ts.Start()
	t.Cleanup(ts.Close)
	cs := wsConnect(t, ts, nil)

	tl.closeAll()
	err := wsWaitDone(t, "ClientSession.Wait", cs.Wait)
	if err == nil {
		t.Fatal("ClientSession.Wait after the network failed: got nil, want an error")
	}
	t.Logf("Wait error: %v", err)
	if errors.Is(err, io.EOF) {
		t.Errorf("ClientSession.Wait: got %v, which claims a clean end", err)
	}
}

// wsTrackingListener remembers accepted connections so a test can cut them.
type wsTrackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *wsTrackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *wsTrackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
}

// wsCaptureTransport records the connection its inner transport makes.
type wsCaptureTransport struct {
	inner mcp.Transport
	conn  mcp.Connection
}

func (t *wsCaptureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	t.conn = c
	return c, err
}

// TestWebSocketClientCloseUnblocks checks that closing the client's
// connection ends an in-flight call, the session and the server's handler.
func TestWebSocketClientCloseUnblocks(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	server := newWSTestServerStarted(started)
	ts := wsStart(t, server, nil)
	ct := &wsCaptureTransport{inner: &WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}}
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()

	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		callErr <- err
	}()
	wsReceive(t, "the block call to reach the server", started)

	if err := ct.conn.Close(); err != nil {
		t.Errorf("Close: got %v, want nil", err)
	}
	if err := wsReceive(t, "CallTool result", callErr); err == nil {
		t.Error("CallTool after Close: got nil error, want one")
	}
	wsWaitDone(t, "ClientSession.Wait", cs.Wait)
	wsWaitFor(t, "the server session to end", func() bool {
		for range server.Sessions() {
			return false
		}
		return true
	})
}

// wsWaitFor polls cond until it holds or wsTestTimeout passes.
func wsWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wsTestTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // poll interval, not synchronisation
	}
}

func TestWebSocketConnClose(t *testing.T) {
	t.Parallel()
	ts := wsStart(t, newWSTestServer(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	conn, err := (&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}).Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if got := conn.SessionID(); got != "" {
		t.Errorf("SessionID: got %q, want empty", got)
	}

	readErr := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		readErr <- err
	}()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := conn.Close(); err != nil {
				t.Errorf("Close: got %v, want nil", err)
			}
		})
	}
	wsWaitDone(t, "concurrent Close", func() error { wg.Wait(); return nil })
	if err := wsReceive(t, "Read result", readErr); !errors.Is(err, io.EOF) {
		t.Errorf("Read during Close: got %v, want io.EOF", err)
	}
	if _, err := conn.Read(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: got %v, want io.EOF", err)
	}
	id, err := jsonrpc.MakeID(float64(1))
	if err != nil {
		t.Fatal(err)
	}
	ping := &jsonrpc.Request{Method: "ping", ID: id}
	if err := conn.Write(ctx, ping); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("Write after Close: got %v, want mcp.ErrConnectionClosed", err)
	}
}

// TestWebSocketConnectContext checks that the Connect context bounds only the
// handshake.
func TestWebSocketConnectContext(t *testing.T) {
	t.Parallel()
	ts := wsStart(t, newWSTestServer(), nil)
	dialCtx, cancelDial := context.WithCancel(context.Background())
	conn, err := (&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}).Connect(dialCtx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	cancelDial()

	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, &wsFixedTransport{conn}, nil)
	if err != nil {
		t.Fatalf("Connect after the dial context ended: %v", err)
	}
	defer cs.Close()
	if got, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: "still here"}); err != nil || got != "still here" {
		t.Errorf("echo after the dial context ended: got %q, %v; want %q, nil", got, err, "still here")
	}

	// A context that is already done fails the dial.
	_, err = (&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}).Connect(dialCtx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context: got %v, want context.Canceled", err)
	}
}

type wsFixedTransport struct{ conn mcp.Connection }

func (t *wsFixedTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

func TestWebSocketDialNonMCP(t *testing.T) {
	t.Parallel()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(plain.Close)
	// A WebSocket server that speaks no subprotocol.
	noProto := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
		}
	}))
	t.Cleanup(noProto.Close)

	tests := []struct {
		name string
		ts   *httptest.Server
		path string
		want []string
	}{
		{"plain HTTP", plain, "/mcp?token=secret", []string{"HTTP 404 Not Found", "nothing here", "is this an MCP WebSocket endpoint?"}},
		{"no subprotocol", noProto, "/ws", []string{`selected WebSocket subprotocol "", not "mcp"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
			defer cancel()
			conn, err := (&WebSocketTransport{URL: wsURL(tt.ts) + tt.path, HTTPClient: tt.ts.Client()}).Connect(ctx)
			if err == nil {
				conn.Close()
				t.Fatal("Connect: got nil error, want one")
			}
			t.Logf("Connect error: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Connect error: got %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("Connect error %q leaks the URL's query", err)
			}
		})
	}
}

func TestWebSocketHandlerRefusals(t *testing.T) {
	t.Parallel()
	ts := wsStart(t, newWSTestServer(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()

	t.Run("missing subprotocol", func(t *testing.T) {
		c, resp, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: ts.Client()})
		if err == nil {
			c.CloseNow()
			t.Fatal("Dial without a subprotocol: got nil error, want one")
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("Dial without a subprotocol: got response %v, want 400", resp)
		}
		body, _ := io.ReadAll(resp.Body)
		if !strings.Contains(string(body), `requires the "mcp" subprotocol`) {
			t.Errorf("400 body: got %q, want it to name the mcp subprotocol", body)
		}
	})

	t.Run("wrong subprotocol", func(t *testing.T) {
		_, resp, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: ts.Client(), Subprotocols: []string{"graphql-ws"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("Dial with another subprotocol: got %v, %v; want 400", resp, err)
		}
	})

	t.Run("not a WebSocket", func(t *testing.T) {
		resp, err := ts.Client().Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUpgradeRequired {
			t.Errorf("plain GET: got %s, want 426", resp.Status)
		}
	})

	t.Run("cross origin", func(t *testing.T) {
		h := http.Header{"Origin": {"https://evil.example"}}
		_, resp, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: ts.Client(), HTTPHeader: h, Subprotocols: []string{"mcp"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("Dial from another origin: got %v, %v; want 403", resp, err)
		}
		allowed := wsStart(t, newWSTestServer(), &WebSocketHandlerOptions{OriginPatterns: []string{"evil.example"}})
		conn, err := (&WebSocketTransport{URL: wsURL(allowed), Header: h, HTTPClient: allowed.Client()}).Connect(ctx)
		if err != nil {
			t.Fatalf("Connect from an allowed origin: %v", err)
		}
		conn.Close()
	})

	t.Run("no server", func(t *testing.T) {
		none := httptest.NewServer(NewWebSocketHandler(func(*http.Request) *mcp.Server { return nil }, nil))
		defer none.Close()
		_, resp, err := websocket.Dial(ctx, wsURL(none), &websocket.DialOptions{HTTPClient: none.Client(), Subprotocols: []string{"mcp"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("Dial with no server: got %v, %v; want 400", resp, err)
		}
	})
}

// TestWebSocketWire checks framing against a raw WebSocket peer: batches are
// refused call by call, and a message that is not JSON-RPC ends the
// connection with status 1007.
func TestWebSocketWire(t *testing.T) {
	t.Parallel()
	ts := wsStart(t, newWSTestServer(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	dial := func(t *testing.T) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, wsURL(ts), &websocket.DialOptions{HTTPClient: ts.Client(), Subprotocols: []string{"mcp"}})
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	roundTrip := func(t *testing.T, c *websocket.Conn, msg string) any {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		typ, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if typ != websocket.MessageText {
			t.Errorf("reply type: got %v, want text", typ)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("reply %q: %v", data, err)
		}
		return v
	}
	const refusal = "JSON-RPC batches are not supported by MCP over WebSocket; send one message per WebSocket message"

	t.Run("batch", func(t *testing.T) {
		c := dial(t)
		got := roundTrip(t, c, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`)
		want := []any{
			map[string]any{"jsonrpc": "2.0", "id": 1.0, "error": map[string]any{"code": -32600.0, "message": refusal}},
			map[string]any{"jsonrpc": "2.0", "id": "b", "error": map[string]any{"code": -32600.0, "message": refusal}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("batch reply (-want +got):\n%s", diff)
		}
		// The connection is still up.
		got = roundTrip(t, c, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
		if id := got.(map[string]any)["id"]; id != 7.0 {
			t.Errorf("ping reply after a batch: got %v, want id 7", got)
		}
	})

	t.Run("empty batch", func(t *testing.T) {
		got := roundTrip(t, dial(t), ` [] `)
		want := map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600.0, "message": refusal}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("empty batch reply (-want +got):\n%s", diff)
		}
	})

	t.Run("not JSON-RPC", func(t *testing.T) {
		c := dial(t)
		if err := c.Write(ctx, websocket.MessageText, []byte("hello?")); err != nil {
			t.Fatalf("Write: %v", err)
		}
		_, _, err := c.Read(ctx)
		if got := websocket.CloseStatus(err); got != websocket.StatusInvalidFramePayloadData {
			t.Errorf("close status: got %v (%v), want %v", got, err, websocket.StatusInvalidFramePayloadData)
		}
	})
}

func TestWebSocketReadLimit(t *testing.T) {
	t.Parallel()
	ts := wsStart(t, newWSTestServer(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx,
		&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client(), ReadLimit: 64 << 10}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	if _, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: "x", Repeat: 100 << 10}); err == nil {
		t.Error("echo of 100 KiB with a 64 KiB read limit: got nil error, want one")
	}
	err = wsWaitDone(t, "ClientSession.Wait", cs.Wait)
	t.Logf("Wait error: %v", err)
	if err == nil {
		t.Error("Wait after exceeding the read limit: got nil, want an error")
	}
}

// TestWebSocketRequestContext checks that the handler ends the session when
// the request's context ends.
func TestWebSocketRequestContext(t *testing.T) {
	t.Parallel()
	reqCtx, cancelReq := context.WithCancel(context.Background())
	defer cancelReq()
	h := NewWebSocketHandler(func(*http.Request) *mcp.Server { return newWSTestServer() }, nil)
	served := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		h.ServeHTTP(w, r.WithContext(reqCtx))
	}))
	t.Cleanup(ts.Close)
	cs := wsConnect(t, ts, nil)

	cancelReq()
	wsReceive(t, "handler return", served)
	wsWaitDone(t, "ClientSession.Wait", cs.Wait)
}

// TestWebSocketNoLeaks runs a whole session, shuts everything down and
// checks that no goroutine is left behind.
func TestWebSocketNoLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		server := newWSTestServer()
		ts := httptest.NewServer(NewWebSocketHandler(func(*http.Request) *mcp.Server { return server }, nil))
		defer ts.Close()
		defer ts.Client().CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
		defer cancel()

		for range 3 {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx,
				&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}, nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if _, err := wsCallEcho(ctx, cs, wsEchoArgs{Text: "x"}); err != nil {
				t.Fatal(err)
			}
			if err := cs.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		// And one ended by the server.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx,
			&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}, nil)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		for ss := range server.Sessions() {
			ss.Close()
		}
		wsWaitDone(t, "ClientSession.Wait", cs.Wait)
		cs.Close()
	}()

	// Poll: the server's handlers end just after their clients.
	deadline := time.Now().Add(wsTestTimeout)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		ours := bytes.Contains(buf, []byte("upstream.(*wsConn)")) || bytes.Contains(buf, []byte("upstream.(*webSocketHandler)"))
		n := runtime.NumGoroutine()
		if n <= before && !ours {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines after shutdown: got %d, want at most %d, WebSocket ones left: %v\n%s", n, before, ours, buf)
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

// TestWebSocketCloseUnresponsivePeer checks that Close does not wait long for
// a peer that never answers the close handshake.
func TestWebSocketCloseUnresponsivePeer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		<-release // never read, so never answer the close frame
		c.CloseNow()
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithTimeout(context.Background(), wsTestTimeout)
	defer cancel()
	conn, err := (&WebSocketTransport{URL: wsURL(ts), HTTPClient: ts.Client()}).Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	start := time.Now()
	wsWaitDone(t, "Close", conn.Close)
	if d, limit := time.Since(start), wsCloseTimeout+2*time.Second; d > limit {
		t.Errorf("Close took %v, want at most %v", d, limit)
	}
}
