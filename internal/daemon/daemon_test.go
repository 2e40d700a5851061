package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	hung := testserver.Server(t, "hung", "hang")
	hung.ConnectTimeout = 500 * time.Millisecond
	r := start(t, testConfig(okHTTPServer(t, "alpha"), hung))
	if code, body := get(t, r.url+"/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Errorf("/healthz: got %d %q", code, body)
	}
	// A server that never answers keeps the daemon unready, and the
	// gateway serves the others meanwhile.
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__echo"))
	if got := textOf(call(t, cs, "alpha__echo", map[string]any{"message": "still here"})); got != "still here" {
		t.Errorf("echo beside a hung server: got %q", got)
	}
	code, body := get(t, r.url+"/readyz")
	var rd readiness
	if err := json.Unmarshal([]byte(body), &rd); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if code != http.StatusServiceUnavailable || rd.Ready || !slices.Equal(rd.Waiting, []string{"hung"}) || rd.Servers["alpha"] != "connected" {
		t.Errorf("/readyz: got %d %+v, want 503 waiting for hung", code, rd)
	}
	_, metrics := get(t, r.url+"/metrics")
	for _, want := range []string{
		`switchboard_calls_total{server="alpha",source="gateway",status="success",tool="echo"} 1`,
		`switchboard_upstream_up{server="alpha"} 1`,
		`switchboard_upstream_up{server="hung"} 0`,
		`switchboard_calls_in_flight 0`,
		`switchboard_gateway_sessions{view="default"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestFailureIsolation(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "crash")
	r := start(t, testConfig(okServer(t, "alpha"), okServer(t, "beta")))
	n := newNotifications()
	cs := r.connect(t, "/mcp", nil, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.add("tools") },
	})
	waitTools(t, cs, "both servers", has("alpha__crash", "beta__echo", "alpha__late", "beta__late"))

	// Kill the upstream mid-call: a typed error at once (crash is not
	// idempotent), the session survives, alpha's tools go and come back.
	if typ := errorType(t, call(t, cs, "alpha__crash", map[string]any{})); typ != "connection_error" {
		t.Errorf("upstream died mid-call: got error_type %q, want connection_error", typ)
	}
	if got := textOf(call(t, cs, "beta__echo", map[string]any{"message": "ok"})); got != "ok" {
		t.Errorf("the session did not survive: %q", got)
	}
	waitTools(t, cs, "alpha to come back", has("alpha__echo", "alpha__late"))
	if n.count("tools") == 0 {
		t.Error("no tools/list_changed reached the client while alpha went and came back")
	}

	// An idempotent tool whose server dies mid-call is retried once on
	// the new connection.
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "alpha__crash-once", map[string]any{"flag": flag})
	if res.IsError {
		t.Errorf("crash-once (idempotent) through the gateway: got error %q, want a retried success", textOf(res))
	}
	// A tool that is neither read-only nor idempotent is not retried.
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "alpha after the retry", has("alpha__crash-once-unsafe"))
	if typ := errorType(t, call(t, cs, "alpha__crash-once-unsafe", map[string]any{"flag": flag})); typ != "connection_error" {
		t.Errorf("crash-once-unsafe: got error_type %q, want connection_error", typ)
	}

	// While a server is unavailable its tools are not listed, and a call
	// to one says why (a connection error with the server's state and
	// what to do), not "unknown tool".
	sup, ok := r.d.Pool().Supervisor("alpha")
	if !ok {
		t.Fatal("no supervisor for alpha")
	}
	if err := sup.Disable(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "alpha's tools to go", func(names []string) bool { return !slices.Contains(names, "alpha__echo") })
	res = call(t, cs, "alpha__echo", map[string]any{"message": "x"})
	if typ := errorType(t, res); typ != "connection_error" || !strings.Contains(textOf(res), "server alpha is disabled") {
		t.Errorf("a call to a disabled server's tool: got %s, want a connection_error saying alpha is disabled", textOf(res))
	}
	if err := sup.Enable(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "alpha to come back after enable", has("alpha__echo"))
}

func TestSSEAndStdioEndpoints(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha")))
	c := mcp.NewClient(&mcp.Implementation{Name: "sse-client", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: r.url + "/sse"}, nil)
	if err != nil {
		t.Fatalf("connecting over SSE: %v", err)
	}
	defer cs.Close()
	waitTools(t, cs, "alpha over SSE", has("alpha__echo"))
	if got := textOf(call(t, cs, "alpha__echo", map[string]any{"message": "sse"})); got != "sse" {
		t.Errorf("echo over SSE: got %q", got)
	}

	// serve --stdio: one client on a pipe; the daemon stops when it leaves.
	dir, err := os.MkdirTemp("", "sbd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // after the store closes: cleanups run last first
	st := openStore(t, filepath.Join(dir, "db"))
	d, err := New(Options{Config: testConfig(okHTTPServer(t, "alpha")), Store: st, StateDir: dir, NoControl: true})
	if err != nil {
		t.Fatal(err)
	}
	ct, stt := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- d.RunStdio(context.Background(), stt) }()
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs2, "alpha over stdio", has("alpha__echo"))
	if got := textOf(call(t, cs2, "alpha__echo", map[string]any{"message": "pipe"})); got != "pipe" {
		t.Errorf("echo over stdio: got %q", got)
	}
	cs2.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stdio daemon did not stop when its client left")
	}
}

func TestShutdownDrainsCallsInFlight(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := testConfig(okServer(t, "alpha"))
	cfg.Gateway.ShutdownTimeout = 5 * time.Second
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "slow", has("alpha__slow"))
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	out := make(chan outcome, 1)
	mark, started := slowMark(t)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"seconds": 1, "mark": mark}})
		out <- outcome{res, err}
	}()
	started()
	r.stop(t)
	o := <-out
	if o.err != nil || textOf(o.res) != "done" {
		t.Errorf("a call in flight at shutdown: got %v %v, want it to finish with done", o.res, o.err)
	}
	// The socket is gone and so are the goroutines.
	if _, err := os.Stat(control.SocketPath(r.stateDir)); !os.IsNotExist(err) {
		t.Errorf("the control socket outlived the daemon: %v", err)
	}
	cs.Close()
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
}

func TestShutdownCancelsCallsPastTheDeadline(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okServer(t, "alpha"))
	cfg.Gateway.ShutdownTimeout = 200 * time.Millisecond
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "slow", has("alpha__slow"))
	mark, started := slowMark(t)
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"seconds": 60, "mark": mark}})
	}()
	started()
	startStop := time.Now()
	r.stop(t)
	if took := time.Since(startStop); took > 15*time.Second {
		t.Errorf("shutdown took %s with a 200ms deadline", took)
	}
	recs, err := r.store.Calls(context.Background(), store.CallFilter{Tool: "slow"})
	if err != nil || len(recs) != 1 || recs[0].Status != "cancelled" {
		t.Fatalf("history after shutdown: got %+v %v, want the slow call recorded as cancelled", recs, err)
	}
	// Cancelled by the shutdown, not by someone's switchboard stop.
	if msg := recs[0].ErrorMessage; !strings.Contains(msg, "shutting down") || strings.Contains(msg, "switchboard resume") {
		t.Errorf("the cancelled call's error: got %q, want it to say switchboard is shutting down", msg)
	}
}

// slowMark is a file for alpha__slow's "mark" argument, and a wait until
// the server has created it: the call has reached the server.
func slowMark(t *testing.T) (mark string, wait func()) {
	t.Helper()
	mark = filepath.Join(t.TempDir(), "slow-started")
	return mark, func() {
		t.Helper()
		waitFor(t, "the slow call to reach its server", func() bool { _, err := os.Stat(mark); return err == nil })
	}
}

func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before+2 {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d before, %d after shutdown:\n%s", before, n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeConfig writes a native config file of test servers.
func writeConfig(t *testing.T, path string, servers map[string]string, extra string) {
	t.Helper()
	exe := testserver.Command(t)
	var b strings.Builder
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\n", exe)
	b.WriteString("defaults:\n  health:\n    ping_interval: 1h\n    backoff: [20ms, 50ms, 100ms]\n")
	b.WriteString("gateway:\n  listen: 127.0.0.1:0\n")
	b.WriteString("servers:\n")
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		mode := strings.Fields(servers[n]) // the mode, then any KEY=value
		fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    env: %s\n", n, exe, testserver.EnvYAML(mode[0], mode[1:]...))
	}
	b.WriteString(extra)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReload(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok", "beta": "ok", "gamma": "ok"}, "")
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	load := func() (*config.Config, error) { return config.Load(path, config.Options{}) }
	r := start(t, cfg, func(o *Options) { o.Load = load })
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "three servers", has("alpha__echo", "beta__echo", "gamma__echo"))
	alphaBefore, err := r.d.Pool().Client("alpha")
	if err != nil {
		t.Fatal(err)
	}

	// A broken file leaves everything running as it was.
	if err := os.WriteFile(path, []byte("servers:\n  - name: x\n    transport: carrier-pigeon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "transport") {
		t.Errorf("reloading a broken file: got %v, want an error about the transport", err)
	}
	if got := textOf(call(t, cs, "gamma__echo", map[string]any{"message": "still"})); got != "still" {
		t.Errorf("after a refused reload: got %q", got)
	}

	// alpha unchanged, beta changed, gamma removed, delta added.
	writeConfig(t, path, map[string]string{"alpha": "ok", "beta": "ok EXTRA=changed", "delta": "ok"}, "")
	rep, err := r.d.Reload(context.Background())
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	want := control.ReloadReport{Source: path, Added: []string{"delta"}, Removed: []string{"gamma"}, Changed: []string{"beta"}, Unchanged: []string{"alpha"}}
	rep.Warnings = nil
	if fmt.Sprint(rep) != fmt.Sprint(want) {
		t.Errorf("reload report: got %+v, want %+v", rep, want)
	}
	waitTools(t, cs, "the new server set", func(n []string) bool {
		return has("alpha__echo", "beta__echo", "delta__echo")(n) && lacks("gamma__echo")(n)
	})
	if alphaAfter, err := r.d.Pool().Client("alpha"); err != nil || alphaAfter != alphaBefore {
		t.Errorf("the unchanged server was reconnected (%v)", err)
	}
	if got := textOf(call(t, cs, "delta__echo", map[string]any{"message": "new"})); got != "new" {
		t.Errorf("the added server: got %q", got)
	}
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gamma__echo", Arguments: map[string]any{"message": "x"}}); err == nil && !res.IsError {
		t.Errorf("the removed server still answers: %q", textOf(res))
	}
}

func TestReloadChangesAView(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	view := func(include, desc string) string {
		return fmt.Sprintf("  views:\n    - name: v\n      include: [%q]\n      descriptions: {%q: %q}\n", include, include, desc)
	}
	write := func(include, desc string) {
		writeConfig(t, path, map[string]string{"alpha": "ok"}, "")
		b, _ := os.ReadFile(path)
		s := strings.Replace(string(b), "gateway:\n  listen: 127.0.0.1:0\n", "gateway:\n  listen: 127.0.0.1:0\n"+view(include, desc), 1)
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("alpha__echo", "first")
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg, func(o *Options) {
		o.Load = func() (*config.Config, error) { return config.Load(path, config.Options{}) }
	})
	// A first client waits until the view is discovered; the client that
	// watches for list_changed connects after that. The view server's
	// creation sends one tools/list_changed of its own, 10 ms later (the
	// go-sdk gathers changes that long): on a loaded machine it can still
	// reach the watching client. There is only that one, so if it came it
	// is set aside, and the next one is the reload's.
	warm := r.connect(t, "/mcp/v", nil, nil)
	if got := waitTools(t, warm, "the view", has("alpha__echo")); !slices.Equal(got, []string{"alpha__echo"}) {
		t.Fatalf("view v: got %v", got)
	}
	n := newNotifications()
	cs := r.connect(t, "/mcp/v", nil, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.add("tools") },
	})
	if got := waitTools(t, cs, "the view", has("alpha__echo")); !slices.Equal(got, []string{"alpha__echo"}) {
		t.Fatalf("view v: got %v", got)
	}
	select {
	case <-n.ch: // the view's creation's (see above)
	default:
	}
	if got := n.count("tools"); got > 1 {
		t.Fatalf("the watching client got %d tools/list_changed before the reload, want at most the one of the view's creation; the test could not tell the reload's from them", got)
	}
	write("alpha__add", "adds")
	rep, err := r.d.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// No server changed; the report says what did.
	if !slices.Equal(rep.Blocks, []string{"gateway"}) || len(rep.Changed) != 0 {
		t.Errorf("reload report: got blocks %q and changed servers %q, want the gateway block and no server", rep.Blocks, rep.Changed)
	}
	waitTools(t, cs, "the changed view", func(names []string) bool { return slices.Equal(names, []string{"alpha__add"}) })
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Description != "adds" {
		t.Errorf("after reload: got %+v (%v), want alpha__add described as 'adds'", res, err)
	}
	select {
	case <-n.ch:
	case <-time.After(10 * time.Second):
		t.Error("the client got no tools/list_changed when its view changed")
	}
}

// TestHistoryReadShowsTheCallJustMade: the history is written in batches
// (every 100 ms), but a history read through the daemon writes what is
// recorded first, so `switchboard call …; switchboard history` shows the
// call.
func TestHistoryReadShowsTheCallJustMade(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha")))
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__echo"))
	c := control.Dial(control.SocketPath(r.stateDir))
	defer c.Close()
	for i := range 5 {
		msg := fmt.Sprintf("call %d", i)
		if got := textOf(call(t, cs, "alpha__echo", map[string]any{"message": msg})); got != msg {
			t.Fatalf("echo: got %q", got)
		}
		calls, err := c.History(context.Background(), store.CallFilter{Tool: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != i+1 {
			t.Fatalf("history read right after call %d: got %d calls, want %d", i, len(calls), i+1)
		}
	}
}
