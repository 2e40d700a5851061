package upstream_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// restartable is a go-sdk streamable-HTTP server that can be restarted
// on the same address: the new process-alike knows none of the old
// sessions, as a real server after a restart.
type restartable struct {
	t    *testing.T
	addr string
	json bool // answer calls with JSON, not an event stream
	// noKeepAlive closes every connection after its answer, so that no
	// request meets a connection the old server closed.
	noKeepAlive bool
	// noStream refuses the standalone event stream (405), so that only
	// requests meet a change of the server.
	noStream bool

	mu  sync.Mutex
	hs  *httptest.Server
	gen int
	// current is the generation that answers (start).
	current atomic.Pointer[http.Handler]
	// started is told of each call of "slow" as it starts.
	started chan int
}

func newRestartable(t *testing.T, jsonResponse, keepAlive bool) *restartable {
	r := &restartable{t: t, addr: "127.0.0.1:0", json: jsonResponse, noKeepAlive: !keepAlive, started: make(chan int, 16)}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) url() string { return "http://" + r.addr + "/mcp" }

// start serves a new generation on r.addr: on the listener of the one
// before, if it still listens (restart), else on a new one.
func (r *restartable) start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	gen := r.gen
	s := mcp.NewServer(&mcp.Implementation{Name: "restartable", Version: fmt.Sprint(gen)}, nil)
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	s.AddTool(&mcp.Tool{Name: "gen", InputSchema: map[string]any{"type": "object"}, Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(gen)}}}, nil
		})
	slow := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r.started <- gen
		time.Sleep(200 * time.Millisecond) // the server restarts meanwhile (a sleep in the server, not to synchronise the test)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(gen)}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}, Annotations: readOnly}, slow)
	s.AddTool(&mcp.Tool{Name: "slow-write", InputSchema: map[string]any{"type": "object"}}, slow)
	s.AddTool(&mcp.Tool{Name: "write", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(gen)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: r.json})
	noStream := r.noStream // this generation's
	var gh http.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if noStream && req.Method == http.MethodGet {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, req)
	})
	r.current.Store(&gh)
	if r.hs != nil {
		// A restart: the new generation answers every connection made
		// from now on; the old one's are closed (as a process that exits
		// closes them). Nothing is refused meanwhile: a client that
		// notices the closing at once finds the new server, as it would
		// a server that restarted between its requests.
		r.hs.CloseClientConnections()
		return
	}
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		// The old listener's port is free again at once; retry briefly
		// should the kernel disagree.
		if ln, err = net.Listen("tcp", r.addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("listening on %s again: %v", r.addr, err)
	}
	r.addr = ln.Addr().String()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.current.Load()).ServeHTTP(w, req)
	}))
	hs.Listener.Close()
	hs.Listener = ln
	hs.Config.SetKeepAlivesEnabled(!r.noKeepAlive)
	hs.Start()
	r.hs = hs
}

// stop ends the current generation and every connection to it: nothing
// listens on r.addr until start.
func (r *restartable) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hs != nil {
		r.hs.CloseClientConnections()
		r.hs.Close()
		r.hs = nil
	}
}

// restart replaces the server by a new generation that knows none of the
// old one's sessions, closing the old one's connections.
func (r *restartable) restart() { r.start() }

// engineFor runs srv supervised with a catalog and an engine, as the
// daemon does; states records every state the server passes through.
func engineFor(t *testing.T, srv config.Server) (*toolcall.Engine, *upstream.Pool, *stateLog) {
	t.Helper()
	cfg := &config.Config{Servers: []config.Server{srv}, Defaults: config.Defaults{
		RequestTimeout: 20 * time.Second,
		// No pings: recovery must not wait for one. The default backoff.
		Health: config.Health{PingInterval: time.Hour, PingTimeout: 2 * time.Second,
			Backoff: config.DefaultBackoff, MaxFailures: 3},
	}}
	cfg.Limits = config.Limits{MaxConcurrent: 25, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20}
	states := &stateLog{}
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnChange:  states.add,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = pool.Run(ctx) })
	wg.Go(func() { _ = cat.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	if _, err := pool.WaitConnected(ctx, srv.Name, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := cat.Refresh(ctx, srv.Name); err != nil {
		t.Fatal(err)
	}
	eng, err := toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return eng, pool, states
}

// stateLog records the states a server passes through.
type stateLog struct {
	mu     sync.Mutex
	states []upstream.State
	errs   []string
}

func (l *stateLog) add(s upstream.Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.states); n == 0 || l.states[n-1] != s.State {
		l.states = append(l.states, s.State)
		if s.State == upstream.StateError {
			l.errs = append(l.errs, s.LastError)
		}
	}
}

// since returns the states recorded after the first n, and the errors.
func (l *stateLog) snapshot() ([]upstream.State, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]upstream.State(nil), l.states...), append([]string(nil), l.errs...)
}

func callText(t *testing.T, eng *toolcall.Engine, tool string) (string, error) {
	t.Helper()
	res, err := eng.Call(context.Background(), toolcall.Request{Server: "restartable", Tool: tool, Source: "test"})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", b.String())
	}
	return b.String(), nil
}

// TestStreamableRestartBetweenCalls: after a streamable-HTTP server
// restarts, it answers 404 for the old session; Switchboard starts a new
// session at once (the MCP specification's rule) — no failure, no
// backoff, no waiting for a ping — and a read-only call is retried on it.
// A call that is not safe to repeat fails as a connection error marked
// never delivered (never a protocol error), which the engine sends again
// on the new session.
func TestStreamableRestartBetweenCalls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ json, keepAlive bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("json=%v,keepalive=%v", tc.json, tc.keepAlive), func(t *testing.T) {
			r := newRestartable(t, tc.json, tc.keepAlive)
			srv := config.Server{Name: "restartable", Transport: config.TransportHTTP, URL: r.url(), TerminateOnClose: true,
				Enabled: true, LoadTools: true, MaxRetries: 2}
			eng, pool, states := engineFor(t, srv)
			if got, err := callText(t, eng, "gen"); err != nil || got != "1" {
				t.Fatalf("first call: got %q %v, want 1", got, err)
			}

			r.restart()
			if got, err := callText(t, eng, "gen"); err != nil || got != "2" {
				t.Fatalf("a read-only call after the restart: got %q %v, want the new server's answer 2", got, err)
			}
			seen, errs := states.snapshot()
			if len(errs) > 0 {
				t.Errorf("states %v, errors %q: want a new session without a failure", seen, errs)
			}
			sup, _ := pool.Supervisor("restartable")
			if snap := sup.Snapshot(); snap.ConsecutiveFailures != 0 || snap.Retrying {
				t.Errorf("after the restart: %d failures, retrying %v; want none", snap.ConsecutiveFailures, snap.Retrying)
			}

			// A call not safe to repeat is refused unprocessed by the
			// restarted server (404 for the old session): the client says
			// so, and marks it never delivered ...
			old, err := pool.Client("restartable")
			if err != nil {
				t.Fatal(err)
			}
			r.restart()
			_, err = old.CallTool(context.Background(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{}}, nil)
			msg := fmt.Sprint(err)
			switch {
			case fault.KindOf(err) != fault.Connection:
				t.Errorf("a call not safe to repeat after a restart: got %s %v, want a connection error", fault.KindOf(err), err)
			case !tc.keepAlive && (!strings.Contains(msg, "no longer has this session (HTTP 404): the server restarted or ended it") || !upstream.NotDelivered(err)):
				t.Errorf("a call not safe to repeat after a restart: got %v (not delivered: %v), want one that says the session is gone and was not delivered",
					err, upstream.NotDelivered(err))
			case tc.keepAlive && !strings.Contains(msg, "no longer has this session") && !metClosedConnection(msg):
				// A request may meet a connection the old server closed.
				t.Errorf("a call not safe to repeat after a restart: got %v, want it to say the session is gone or the connection closed", err)
			}
			// The supervisor starts a new session without a call or a ping.
			waitFor(t, 10*time.Second, "a new session", func() bool {
				c, err := pool.Client("restartable")
				return err == nil && c != old
			})
			if got, err := callText(t, eng, "write"); err != nil || got != "3" {
				t.Errorf("the next call: got %q %v, want 3 on the new session", got, err)
			}

			// ... so the engine sends it again, on the new session, however
			// unsafe the tool (a request that met a connection the old
			// server closed may have been processed: that one fails).
			// The supervisor may learn of the restart first (the standalone
			// stream breaks) and renew the session before the call is sent:
			// then it needs no retry. Either way the new server answers it
			// once.
			r.restart()
			res, err := eng.Call(context.Background(), toolcall.Request{Server: "restartable", Tool: "write", Source: "test"})
			switch {
			case err == nil && (res.Content[0].(*mcp.TextContent).Text != "4" || res.Retries > 1):
				t.Errorf("a call the restarted server never processed: got %q after %d retries, want 4 after at most 1", res.Content[0].(*mcp.TextContent).Text, res.Retries)
			case err != nil && (!tc.keepAlive || !metClosedConnection(err.Error())):
				t.Errorf("a call the restarted server never processed: got %v, want it sent again on the new session", err)
			}
		})
	}
}

// metClosedConnection reports whether msg says a request met a kept-alive
// connection the old server closed: before its answer, or as it went out
// (Go's transport: "server closed idle connection").
func metClosedConnection(msg string) bool {
	return strings.Contains(msg, "closed the connection without answering") ||
		strings.Contains(msg, "closed the connection as the request went out")
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}

// TestStreamableRestartDuringACall: a server that restarts while a call
// is in flight breaks the call's connection: a read-only call is retried
// on the new server, another fails as a connection error.
func TestStreamableRestartDuringACall(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			r := newRestartable(t, jsonResponse, true)
			srv := config.Server{Name: "restartable", Transport: config.TransportHTTP, URL: r.url(), TerminateOnClose: true,
				Enabled: true, LoadTools: true, MaxRetries: 2}
			eng, _, _ := engineFor(t, srv)

			for _, tc := range []struct {
				tool     string
				wantText string
				wantKind fault.Kind
			}{
				{"slow", "", ""},
				{"slow-write", "", fault.Connection},
			} {
				var restarted atomic.Bool
				done := make(chan struct{})
				go func() {
					defer close(done)
					select {
					case <-r.started:
						r.restart()
						restarted.Store(true)
					case <-time.After(20 * time.Second):
					}
				}()
				got, err := callText(t, eng, tc.tool)
				<-done
				if !restarted.Load() {
					t.Fatalf("%s never reached the server: %q %v", tc.tool, got, err)
				}
				r.mu.Lock()
				gen := fmt.Sprint(r.gen)
				r.mu.Unlock()
				switch {
				case tc.wantKind == "" && (err != nil || got != gen):
					t.Errorf("%s (read-only) across a restart: got %q %v, want the new server's answer %s", tc.tool, got, err, gen)
				case tc.wantKind != "" && fault.KindOf(err) != tc.wantKind:
					t.Errorf("%s (not read-only) across a restart: got %q, %s %v; want a %s error", tc.tool, got, fault.KindOf(err), err, tc.wantKind)
				}
				// Drain the start of a retried call.
				for len(r.started) > 0 {
					<-r.started
				}
			}
		})
	}
}

// TestStreamableRestartWithServerEverything: the TypeScript SDK's
// reference server, restarted on its port, answers 400 "No valid session
// ID provided" for the old session (not the specification's 404).
// Switchboard starts a new session all the same, at once: a read-only call
// after the restart works without a failure, and one that is not safe to
// repeat is a connection error marked as never delivered, never a protocol
// error, which the engine sends again on the new session. (A proxy in front refuses the standalone event stream, so that
// the calls, not that stream, are the first to meet the old session.)
func TestStreamableRestartWithServerEverything(t *testing.T) {
	t.Parallel()
	ev := testpeer.StartRestartableEverything(t, "streamableHttp")
	target, err := url.Parse(ev.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	rp.ErrorLog = log.New(io.Discard, "", 0) // it answers 502 while the server restarts
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Error(w, "no standalone stream here", http.StatusMethodNotAllowed)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	srv := config.Server{Name: "restartable", Transport: config.TransportHTTP, URL: proxy.URL + target.Path, TerminateOnClose: true,
		Enabled: true, LoadTools: true, MaxRetries: 2, ConnectTimeout: 20 * time.Second}
	eng, pool, states := engineFor(t, srv)
	call := func(tool string, args map[string]any) (string, error) {
		res, err := eng.Call(context.Background(), toolcall.Request{Server: "restartable", Tool: tool, Arguments: args, Source: "test"})
		if err != nil {
			return "", err
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	hello := map[string]any{"message": "hello"}
	if got, err := call("echo", hello); err != nil || !strings.Contains(got, "hello") {
		t.Fatalf("echo: got %q %v", got, err)
	}

	ev.Restart()
	if got, err := call("echo", hello); err != nil || !strings.Contains(got, "hello") {
		t.Fatalf("echo (read-only) after the restart: got %q %v, want it answered on a new session", got, err)
	}
	if seen, errs := states.snapshot(); len(errs) > 0 {
		t.Errorf("states %v, errors %q: want a new session without a failure", seen, errs)
	}

	old, err := pool.Client("restartable")
	if err != nil {
		t.Fatal(err)
	}
	ev.Restart()
	_, err = old.CallTool(context.Background(), &mcp.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}}, nil)
	if k := fault.KindOf(err); k != fault.Connection || !upstream.NotDelivered(err) ||
		!strings.Contains(fmt.Sprint(err), "no longer has this session (HTTP 400: Bad Request: No valid session ID provided)") {
		t.Errorf("a call not safe to repeat after a restart: got %s %v (not delivered: %v), want a connection error quoting the server, marked not delivered",
			k, err, upstream.NotDelivered(err))
	}
	waitFor(t, 20*time.Second, "a new session", func() bool {
		c, err := pool.Client("restartable")
		return err == nil && c != old
	})
	if got, err := call("toggle-simulated-logging", nil); err != nil || got == "" {
		t.Errorf("the next call on the new session: got %q %v", got, err)
	}
	// Through the engine, such a call is sent again on the new session.
	ev.Restart()
	if got, err := call("toggle-simulated-logging", nil); err != nil || got == "" {
		t.Errorf("a call not safe to repeat, never processed by the restarted server: got %q %v, want it sent again on a new session", got, err)
	}
}

// TestStreamableRefusedIsAConnectionError: a call while nothing listens
// is a connection error that says so and was never delivered (the SDK
// wraps it as a JSON-RPC "rejected by transport" error, which had made it
// a protocol error), and the supervisor checks the server at once rather
// than at the next ping an hour later.
func TestStreamableRefusedIsAConnectionError(t *testing.T) {
	t.Parallel()
	r := newRestartable(t, false, false) // no connection the old server closed is reused
	r.mu.Lock()
	r.noStream = true // else the SDK's reconnecting event stream would notice, too
	r.mu.Unlock()
	r.restart()
	srv := config.Server{Name: "restartable", Transport: config.TransportHTTP, URL: r.url(), TerminateOnClose: true, Enabled: true}
	s := upstream.NewSupervisor(upstream.SupervisorOptions{Server: srv,
		Health: config.Health{PingInterval: time.Hour, PingTimeout: 2 * time.Second, Backoff: []time.Duration{time.Hour}, MaxFailures: 3}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, 10*time.Second, "connected", func() bool { _, err := s.Client(); return err == nil })
	c, _ := s.Client()

	r.stop()
	_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "write"}, nil)
	if k := fault.KindOf(err); k != fault.Connection || !strings.Contains(err.Error(), "connection refused by "+r.addr) || !upstream.NotDelivered(err) {
		t.Errorf("a call while nothing listens: got %s %v (not delivered: %v), want a connection error saying the connection was refused, not delivered",
			k, err, upstream.NotDelivered(err))
	}
	waitFor(t, 10*time.Second, "the supervisor to notice", func() bool { return s.Snapshot().State == upstream.StateError })
	if snap := s.Snapshot(); !strings.Contains(snap.LastError, "pinging restartable: connection refused by "+r.addr) {
		t.Errorf("last error: got %q, want the ping made at once to say the connection was refused", snap.LastError)
	}
}

// TestPingRetriesADroppedConnection: a ping whose connection the server
// drops (reset, as a restarting server or a proxy dropping idle
// connections does) is sent once more on a new connection, and the
// server is not declared failed for it.
func TestPingRetriesADroppedConnection(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "dropper", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var drops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"ping"`)) && drops.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.(*net.TCPConn).SetLinger(0) // a reset, not an orderly close
			_ = conn.Close()
			return
		}
		h.ServeHTTP(w, req)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := upstream.Dial(ctx, config.Server{Name: "dropper", Transport: config.TransportHTTP, URL: srv.URL, Enabled: true}, upstream.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatalf("a ping whose connection was reset once: %v, want it sent again and answered", err)
	}
	if n := drops.Load(); n != 2 {
		t.Errorf("the server saw %d pings, want 2 (the dropped one and its retry)", n)
	}
}
