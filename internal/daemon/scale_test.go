package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The scale-out deployment of docs/scaling.md: replicas of serve with the
// same configuration, sharing one PostgreSQL store, stateless, behind a
// load balancer that sends each request wherever it likes.

const (
	scaleToken = "s3cret-alice"
	scaleUser  = "alice"
	scaleView  = "team"
)

// scaleConfig returns the configuration every replica runs: one server, a
// view of it, a token, stateless, argument values in the history. Each
// call returns a new *config.Config, as each replica loads its own copy of
// the same file.
func scaleConfig(srv config.Server, dsn string) *config.Config {
	cfg := testConfig(srv)
	cfg.Gateway.Stateless = true
	cfg.Gateway.Views = []config.View{{Name: scaleView, Servers: []string{srv.Name}, Prefix: config.PrefixAlways}}
	cfg.Gateway.Tokens = []config.Token{{Name: "alice-laptop", User: scaleUser, Secret: scaleToken, Views: []string{scaleView}}}
	cfg.History.Store = dsn
	cfg.History.RecordValues = true
	return cfg
}

// openPostgres opens a store on dsn, closed when the test ends — after the
// daemons that use it, whose cleanups are registered later.
func openPostgres(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("store.Open(%s): %v", dsn, err)
	}
	if _, ok := st.(*store.Postgres); !ok {
		t.Fatalf("store.Open(%s): got %T, want *store.Postgres", dsn, st)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startReplica runs a daemon for cfg on st, a store it shares with other
// replicas, until the test ends. Like start, but the store is the
// caller's; the replica's state directory (control socket, stop flag) is
// its own. Reload re-reads cfg.
func startReplica(t *testing.T, cfg *config.Config, st store.Store) *running {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbd") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d, err := New(Options{Config: cfg, Store: st, StateDir: dir, Version: "test",
		Load: func() (*config.Config, error) { return cfg, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, url: "http://" + d.Addr(), stateDir: dir, store: st, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// ctl returns a client of the replica's control socket, as the CLI on
// the replica's host uses it.
func (r *running) ctl(t *testing.T) *control.Client {
	c := control.Dial(control.SocketPath(r.stateDir))
	t.Cleanup(c.Close)
	return c
}

// waitReady polls the replica's /readyz, as a load balancer's health check
// does, until it answers 200.
func waitReady(t *testing.T, r *running) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(r.url + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("%s %s", resp.Status, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz: %v", r.url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hop is one request the round robin sent.
type hop struct {
	host, httpMethod, rpcMethod string
	// sessionSent and sessionGot are the Mcp-Session-Id headers of the
	// request and the response.
	sessionSent, sessionGot string
	status                  int
}

// roundRobin is a load balancer without affinity: it sends each request
// to the next replica in turn, whatever the request, and keeps a log.
type roundRobin struct {
	hosts []string
	base  http.RoundTripper

	mu   sync.Mutex
	next int
	log  []hop
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	h := hop{httpMethod: r.Method, sessionSent: r.Header.Get("Mcp-Session-Id")}
	r = r.Clone(r.Context())
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		h.rpcMethod = msg.Method
	}
	rr.mu.Lock()
	h.host = rr.hosts[rr.next%len(rr.hosts)]
	rr.next++
	rr.mu.Unlock()
	r.URL.Host, r.Host = h.host, h.host
	resp, err := rr.base.RoundTrip(r)
	if err == nil {
		h.status, h.sessionGot = resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	rr.mu.Lock()
	rr.log = append(rr.log, h)
	rr.mu.Unlock()
	return resp, err
}

func (rr *roundRobin) hops() []hop {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return slices.Clone(rr.log)
}

// rpcResult is a JSON-RPC response.
type rpcResult struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// notes are the methods of the notifications that came before the
	// response on its stream.
	notes []string
}

// rpc POSTs one JSON-RPC request to url with the test token and no
// session — one request on its own, as a load balancer sees it — and
// returns the response, read from JSON or from the SSE stream. version,
// if set, is sent as the Mcp-Protocol-Version header.
func rpc(t *testing.T, url, version, method string, params any) rpcResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+scaleToken)
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s %s: %v", url, method, err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("POST %s %s: got session id %q, want none from a stateless replica", url, method, sid)
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s %s: got %s %q, want 200", url, method, resp.Status, raw)
	}
	data := raw
	var notes []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = nil
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			d, ok := strings.CutPrefix(sc.Text(), "data: ")
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if !ok || json.Unmarshal([]byte(d), &msg) != nil {
				continue
			}
			if string(msg.ID) == "7" && msg.Method == "" {
				data = []byte(d)
			} else {
				notes = append(notes, msg.Method)
			}
		}
	}
	var res rpcResult
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("POST %s %s: no JSON-RPC response in %q: %v", url, method, raw, err)
	}
	res.notes = notes
	return res
}

// callRaw calls a tool with rpc and returns the tool's result.
func callRaw(t *testing.T, url, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res := rpc(t, url, "", "tools/call", map[string]any{"name": tool, "arguments": args})
	if res.Error != nil {
		t.Fatalf("tools/call %s at %s: JSON-RPC error %d %s", tool, url, res.Error.Code, res.Error.Message)
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(res.Result, &out); err != nil {
		t.Fatalf("tools/call %s at %s: %v in %s", tool, url, err, res.Result)
	}
	return &out
}

// rawTools lists a replica's tools with one request on its own.
func rawTools(t *testing.T, r *running) []string {
	t.Helper()
	var list mcp.ListToolsResult
	res := rpc(t, r.url+"/mcp/"+scaleView, "", "tools/list", map[string]any{})
	if err := json.Unmarshal(res.Result, &list); err != nil {
		t.Fatalf("tools/list at %s: %v in %s", r.url, err, res.Result)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// waitMetric polls a replica's /metrics (which wants a token when tokens
// are configured) until the sample (name and labels, as exposed) has the
// value want.
func waitMetric(t *testing.T, r *running, sample string, want int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := "0" // absent until counted
		req, _ := http.NewRequest(http.MethodGet, r.url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+scaleToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s/metrics: %v", r.url, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			t.Fatalf("GET %s/metrics: got %s, want 200", r.url, resp.Status)
		}
		var family []string
		name, _, _ := strings.Cut(sample, "{")
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
				got = v
			}
			if strings.HasPrefix(sc.Text(), name) {
				family = append(family, sc.Text())
			}
		}
		resp.Body.Close()
		if got == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/metrics: got %s %s, want %d; the family:\n%s", r.url, sample, got, want, strings.Join(family, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapshotOf returns a replica's health of one server.
func snapshotOf(t *testing.T, r *running, server string) upstream.Snapshot {
	t.Helper()
	for _, s := range r.d.Pool().Snapshots() {
		if s.Server == server {
			return s
		}
	}
	t.Fatalf("%s has no server %s", r.url, server)
	return upstream.Snapshot{}
}

// waitSnapshot polls a replica's health of server until ok accepts it.
func waitSnapshot(t *testing.T, r *running, server, what string, ok func(upstream.Snapshot) bool) upstream.Snapshot {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := snapshotOf(t, r, server)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waiting for %s: %s is %+v", r.url, what, server, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState polls the shared server state until ok accepts it.
func waitState(t *testing.T, st store.Store, server, what string, ok func(upstream.Record) bool) upstream.Record {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rec, err := st.LoadState(context.Background(), server)
		if err != nil {
			t.Fatalf("LoadState(%s): %v", server, err)
		}
		if ok(rec) {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: the stored state of %s is %+v", what, server, rec)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScaleOutStatelessReplicas runs two replicas on one PostgreSQL store
// and checks what docs/scaling.md says of them: any replica answers any
// request, the history is one, the stop switch is per replica, and a
// server disabled on one replica is disabled for a replica that starts
// later but not for one already running.
func TestScaleOutStatelessReplicas(t *testing.T) {
	admin := testpg.Shared(t)
	dsn := testpg.Database(t, admin)
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		t.Fatalf("%s must be a postgres:// URL for this test (history.store takes only that form); got a key=value DSN", testpg.EnvDSN)
	}
	srv := okServer(t, "alpha")
	// One store per replica, as each replica process opens its own; the
	// third is for the replica that starts late.
	stA, stB, stC := openPostgres(t, dsn), openPostgres(t, dsn), openPostgres(t, dsn)
	before := runtime.NumGoroutine()
	a := startReplica(t, scaleConfig(srv, dsn), stA)
	b := startReplica(t, scaleConfig(srv, dsn), stB)
	waitReady(t, a)
	waitReady(t, b)
	// Ready means ready to serve: each replica lists alpha's tools at once.
	for _, r := range []*running{a, b} {
		if names := rawTools(t, r); !slices.Contains(names, "alpha__echo") {
			t.Fatalf("tools/list at %s once /readyz said ready: got %v, want alpha__echo listed", r.url, names)
		}
	}
	ctx := context.Background()

	// A go-sdk client behind a round-robin balancer: every request, the
	// handshake included, goes to the other replica than the one before.
	// (The v1.8 client opens with server/discover, the sessionless
	// protocol, where a stateless server allows it.)
	rr := &roundRobin{
		hosts: []string{strings.TrimPrefix(a.url, "http://"), strings.TrimPrefix(b.url, "http://")},
		base:  headerTransport{http.Header{"Authorization": {"Bearer " + scaleToken}}, http.DefaultTransport},
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "scale-client", Version: "1"}, nil)
	connectCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	cs, err := c.Connect(connectCtx, &mcp.StreamableClientTransport{
		Endpoint: "http://replicas.invalid/mcp/" + scaleView, MaxRetries: -1, HTTPClient: &http.Client{Transport: rr},
	}, nil)
	cancel()
	if err != nil {
		t.Fatalf("connecting through the round robin: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	waitTools(t, cs, "alpha's tools through either replica", has("alpha__echo"))
	const calls = 6
	var want []string
	for i := range calls {
		msg := fmt.Sprintf("call-%d", i)
		want = append(want, msg)
		if got := textOf(call(t, cs, "alpha__echo", map[string]any{"message": msg})); got != msg {
			t.Errorf("alpha__echo %d: got %q, want %q", i, got, msg)
		}
	}

	// Where the requests went: alternately to each replica, none with a
	// session, and each replica ran the calls it was sent.
	perHost := map[string]int64{}
	for i, h := range rr.hops() {
		if h.sessionSent != "" || h.sessionGot != "" {
			t.Errorf("request %d (%s %s): Mcp-Session-Id sent %q, got %q; want none in stateless mode",
				i, h.httpMethod, h.rpcMethod, h.sessionSent, h.sessionGot)
		}
		if h.httpMethod == http.MethodPost && h.status != http.StatusOK && h.status != http.StatusAccepted {
			t.Errorf("request %d (%s %s) to %s: got status %d", i, h.httpMethod, h.rpcMethod, h.host, h.status)
		}
		if h.rpcMethod == "tools/call" {
			perHost[h.host]++
		}
	}
	for _, r := range []*running{a, b} {
		host := strings.TrimPrefix(r.url, "http://")
		if perHost[host] == 0 {
			t.Errorf("no tools/call went to %s; the round robin sent %v", host, perHost)
		}
		waitMetric(t, r, `switchboard_calls_total{server="alpha",source="gateway",status="success",tool="echo"}`, perHost[host])
	}
	if t.Failed() {
		t.Logf("requests: %+v", rr.hops())
	}

	// A request on its own, no initialize and no session, to each replica.
	for _, r := range []*running{a, b} {
		if got := textOf(callRaw(t, r.url+"/mcp/"+scaleView, "alpha__echo", map[string]any{"message": "raw"})); got != "raw" {
			t.Errorf("raw tools/call at %s: got %q, want %q", r.url, got, "raw")
		}
	}
	// A client of an older protocol version initializes on one replica
	// and calls on the other.
	const oldVersion = "2025-06-18"
	if res := rpc(t, a.url+"/mcp/"+scaleView, "", "initialize", map[string]any{"protocolVersion": oldVersion,
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "old", "version": "1"}}); res.Error != nil {
		t.Errorf("initialize (%s) at A: %+v", oldVersion, res.Error)
	}
	res := rpc(t, b.url+"/mcp/"+scaleView, oldVersion, "tools/call", map[string]any{"name": "alpha__echo", "arguments": map[string]any{"message": "old"}})
	var old mcp.CallToolResult
	if res.Error != nil || json.Unmarshal(res.Result, &old) != nil || textOf(&old) != "old" {
		t.Errorf("tools/call (%s) at B after initialize at A: got %s %+v, want %q", oldVersion, res.Result, res.Error, "old")
	}
	want = append(want, "old", "raw", "raw")

	// Progress still reaches a stateless client, on the call's own stream.
	res = rpc(t, b.url+"/mcp/"+scaleView, "", "tools/call", map[string]any{"name": "alpha__progress",
		"arguments": map[string]any{"steps": 3}, "_meta": map[string]any{"progressToken": "p1"}})
	if n := strings.Count(strings.Join(res.notes, " "), "notifications/progress"); res.Error != nil || n < 2 {
		t.Errorf("alpha__progress at B: got %d progress notifications (%v) and error %+v, want at least 2 and no error", n, res.notes, res.Error)
	}
	slices.Sort(want)

	// One history: either store — and either replica's control API, which
	// `switchboard history` uses — returns the calls of both replicas.
	type summary struct{ Source, Identity, Server, Tool, Status, Message string }
	summarize := func(recs []store.CallRecord) []summary {
		var out []summary
		for _, rec := range recs {
			var args struct{ Message string }
			_ = json.Unmarshal(rec.Args, &args)
			out = append(out, summary{rec.Source, rec.Identity, rec.Server, rec.Tool, rec.Status, args.Message})
		}
		slices.SortFunc(out, func(x, y summary) int { return strings.Compare(x.Message, y.Message) })
		return out
	}
	var wantHistory []summary
	for _, m := range want {
		wantHistory = append(wantHistory, summary{"gateway", scaleUser, "alpha", "echo", "success", m})
	}
	filter := store.CallFilter{Tool: "echo"}
	a.waitRecords(t, filter, func(recs []store.CallRecord) bool { return len(recs) >= len(want) })
	for _, r := range []*running{a, b} {
		recs, err := r.store.Calls(ctx, filter)
		if err != nil {
			t.Fatalf("%s: Calls: %v", r.url, err)
		}
		if diff := cmp.Diff(wantHistory, summarize(recs)); diff != "" {
			t.Errorf("history in %s's store (-want +got):\n%s", r.url, diff)
		}
		recs, err = r.ctl(t).History(ctx, filter)
		if err != nil {
			t.Fatalf("%s: history through the control API: %v", r.url, err)
		}
		if diff := cmp.Diff(wantHistory, summarize(recs)); diff != "" {
			t.Errorf("history through %s's control API (-want +got):\n%s", r.url, diff)
		}
	}

	// The stop switch is per replica: stopping A leaves B serving.
	if _, err := a.ctl(t).Stop(ctx); err != nil {
		t.Fatalf("stopping A: %v", err)
	}
	if res := callRaw(t, a.url+"/mcp/"+scaleView, "alpha__echo", map[string]any{"message": "x"}); !res.IsError {
		t.Errorf("a call on stopped A: got %q, want an error", textOf(res))
	}
	if res := callRaw(t, b.url+"/mcp/"+scaleView, "alpha__echo", map[string]any{"message": "x"}); res.IsError {
		t.Errorf("a call on B while A is stopped: got error %q, want success", textOf(res))
	}
	if _, err := a.ctl(t).Resume(ctx); err != nil {
		t.Fatalf("resuming A: %v", err)
	}

	// Disabling on A (`switchboard servers disable alpha` on A's host)
	// writes the shared record; B, already running, does not read it back:
	// not now, not on a reload that leaves alpha unchanged.
	if _, err := a.ctl(t).ServerAction(ctx, "disable", "alpha"); err != nil {
		t.Fatalf("disabling alpha on A: %v", err)
	}
	waitSnapshot(t, a, "alpha", "alpha disabled on A", func(s upstream.Snapshot) bool {
		return !s.Enabled && s.State == upstream.StateDisconnected
	})
	if rec := waitState(t, stB, "alpha", "the disable in the store", func(r upstream.Record) bool { return r.Disabled }); rec.Reason != "disabled by a user" {
		t.Errorf("stored reason: got %q, want %q", rec.Reason, "disabled by a user")
	}
	if _, err := b.d.Reload(ctx); err != nil {
		t.Fatalf("reloading B: %v", err)
	}
	if s := snapshotOf(t, b, "alpha"); !s.Enabled || s.State != upstream.StateConnected {
		t.Errorf("alpha on B after A disabled it: got enabled=%v state %s, want enabled and connected (B reads the record only when alpha's supervisor starts)", s.Enabled, s.State)
	}
	if res := callRaw(t, b.url+"/mcp/"+scaleView, "alpha__echo", map[string]any{"message": "still"}); res.IsError || textOf(res) != "still" {
		t.Errorf("alpha__echo on B after A disabled alpha: got isError=%v %q, want %q", res.IsError, textOf(res), "still")
	}

	// A replica that starts now (a new one, or B restarted) reads the
	// record and keeps alpha disabled.
	c3 := startReplica(t, scaleConfig(srv, dsn), stC)
	s := waitSnapshot(t, c3, "alpha", "alpha disabled on a new replica", func(s upstream.Snapshot) bool {
		return !s.Enabled && s.State == upstream.StateDisconnected
	})
	if s.DisabledReason != "disabled by a user" || s.LastConnectedAt.IsZero() {
		t.Errorf("alpha on the new replica: got reason %q, last connected %v; want the stored reason and time", s.DisabledReason, s.LastConnectedAt)
	}

	// A replica still serving alpha learns of the disable the next time
	// its connection to alpha fails or reconnects: it reads the stored
	// record before writing its own health, adopts the disable and never
	// overwrites it. Here alpha's process on B exits.
	_ = rpc(t, b.url+"/mcp/"+scaleView, "", "tools/call", map[string]any{"name": "alpha__crash", "arguments": map[string]any{}})
	waitSnapshot(t, b, "alpha", "B to adopt the disable", func(s upstream.Snapshot) bool {
		return !s.Enabled && s.DisabledReason == "disabled by a user"
	})
	if rec := waitState(t, stA, "alpha", "the disable to stay in the store", func(r upstream.Record) bool { return r.Disabled }); rec.Reason != "disabled by a user" {
		t.Errorf("stored reason after B's reconnect: got %q", rec.Reason)
	}
	if s := snapshotOf(t, a, "alpha"); s.Enabled {
		t.Errorf("alpha on A after B's reconnect: got enabled, want still disabled")
	}

	// Stopping the replicas leaves no goroutine and no server process.
	cs.Close()
	for _, r := range []*running{a, b, c3} {
		r.stop(t)
	}
	http.DefaultClient.CloseIdleConnections()
	waitGoroutines(t, before)
	waitNoChildren(t)
}

// waitNoChildren waits until this process has no child processes left
// but PostgreSQL (which the test's cleanup stops).
func waitNoChildren(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var left []string
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range stats {
			b, err := os.ReadFile(p)
			if err != nil {
				continue // gone meanwhile
			}
			// pid (comm) state ppid ...; comm may hold spaces.
			i := bytes.LastIndexByte(b, ')')
			if i < 0 {
				continue
			}
			comm := string(b[bytes.IndexByte(b, '(')+1 : i])
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) && comm != "postgres" {
				left = append(left, fmt.Sprintf("%s (%s, state %s)", filepath.Base(filepath.Dir(p)), comm, f[0]))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("child processes left after the replicas stopped: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScaleOutSessionsArePerReplica checks why stateful mode needs sticky
// routing: a session opened on one replica is unknown to another, which
// answers its requests with 404, and the client must initialize again.
func TestScaleOutSessionsArePerReplica(t *testing.T) {
	t.Parallel()
	srv := okServer(t, "alpha")
	a, b := start(t, testConfig(srv)), start(t, testConfig(srv))
	cs := a.connect(t, "/mcp", nil, nil)
	if cs.ID() == "" {
		t.Fatal("a stateful replica issued no session id")
	}
	send := func(r *running) int {
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
		req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s/mcp: %v", r.url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := send(a); got != http.StatusOK {
		t.Errorf("the session's request on its own replica: got %d, want 200", got)
	}
	if got := send(b); got != http.StatusNotFound {
		t.Errorf("the session's request on another replica: got %d, want 404", got)
	}
	// Initializing again on the other replica works.
	b.connect(t, "/mcp", nil, nil)
}
