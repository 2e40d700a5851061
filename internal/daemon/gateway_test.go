package daemon

//lint:file-ignore SA1019 the tests exercise sampling, deprecated only from protocol 2026-07-28.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestGatewayAggregatesAndForwards(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha"), okHTTPServer(t, "beta")))
	cs := r.connect(t, "/mcp", nil, nil)
	ctx := context.Background()
	waitTools(t, cs, "both servers' tools", has("alpha__echo", "beta__echo", "alpha__late", "beta__late"))

	if got := textOf(call(t, cs, "alpha__echo", map[string]any{"message": "hi"})); got != "hi" {
		t.Errorf("alpha__echo: got %q, want %q", got, "hi")
	}
	img := call(t, cs, "beta__image", map[string]any{})
	if ic, ok := img.Content[0].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || len(ic.Data) == 0 {
		t.Errorf("beta__image: got %#v, want the PNG unchanged", img.Content[0])
	}
	if res := call(t, cs, "alpha__fail", map[string]any{}); !res.IsError || textOf(res) != "the gizmo is broken" {
		t.Errorf("alpha__fail: got isError=%v %q, want the tool's own error unchanged", res.IsError, textOf(res))
	}
	if typ := errorType(t, call(t, cs, "alpha__add", map[string]any{"a": "one", "b": 2})); typ != "validation_error" {
		t.Errorf("bad arguments: got error_type %q, want validation_error", typ)
	}

	// Prompts and resources are routed to their servers.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta__greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	if got := pr.Messages[0].Content.(*mcp.TextContent).Text; got != "Hello, Ada" {
		t.Errorf("prompt: got %q", got)
	}
	// Both servers list test://readme: the first keeps the URI, the
	// second is exposed under switchboard://beta/….
	rl, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, res := range rl.Resources {
		uris = append(uris, res.URI)
	}
	slices.Sort(uris)
	want := []string{"switchboard://beta/test:%2F%2Freadme", "test://readme"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("resource URIs (-want +got):\n%s", diff)
	}
	for _, u := range uris {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		if err != nil {
			t.Fatalf("resources/read %s: %v", u, err)
		}
		if rr.Contents[0].Text != "read me" || rr.Contents[0].URI != u {
			t.Errorf("resources/read %s: got %+v", u, rr.Contents[0])
		}
	}

	// History records the gateway calls.
	r.waitRecords(t, store.CallFilter{Source: "gateway"}, func(recs []store.CallRecord) bool { return len(recs) >= 4 })
}

func TestGatewayProgressAndCancellation(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okServer(t, "alpha")))
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	cs := r.connect(t, "/mcp", nil, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
	})
	waitTools(t, cs, "alpha's tools", has("alpha__progress", "alpha__slow"))

	params := &mcp.CallToolParams{Name: "alpha__progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || textOf(res) != "3 steps" {
		t.Fatalf("alpha__progress: %v %v", res, err)
	}
	var got []float64
	deadline := time.After(5 * time.Second)
	for len(got) < 3 {
		select {
		case p := <-progress:
			if p.ProgressToken != "tok-1" {
				t.Errorf("progress token: got %v, want the client's own tok-1", p.ProgressToken)
			}
			got = append(got, p.Progress)
		case <-deadline:
			t.Fatalf("got progress %v, want 3 notifications", got)
		}
	}

	// Cancelling the client's request cancels the upstream call.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	mark, started := slowMark(t)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"seconds": 30, "mark": mark}})
		errc <- err
	}()
	started()
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a cancelled call returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling did not end the call")
	}
	r.waitRecords(t, store.CallFilter{Tool: "slow"}, func(recs []store.CallRecord) bool {
		return len(recs) == 1 && recs[0].Status == "cancelled"
	})
	snap := snapshot(t, r, "alpha")
	if !strings.Contains(snap.Stderr, "slow: cancelled") {
		t.Errorf("the upstream never saw the cancellation; its stderr: %q", snap.Stderr)
	}
}

func snapshot(t *testing.T, r *running, server string) upstream.Snapshot {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, s := range r.d.Pool().Snapshots() {
			if s.Server == server && (strings.Contains(s.Stderr, "cancelled") || time.Now().After(deadline)) {
				return s
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGatewayIdentityReachesUpstream(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{{Name: "alice-laptop", User: "alice", Secret: "s3cret-alice"}}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", http.Header{"Authorization": {"Bearer s3cret-alice"}}, nil)
	waitTools(t, cs, "whoami", has("alpha__whoami"))
	// A client cannot claim to be someone else: the token decides.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__whoami", Arguments: map[string]any{},
		Meta: mcp.Meta{"user_id": "mallory"}})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &meta); err != nil {
		t.Fatalf("whoami: %q: %v", textOf(res), err)
	}
	if meta["user_id"] != "alice" || meta["session_id"] != cs.ID() {
		t.Errorf("upstream _meta: got %v, want user_id alice and session_id %s", meta, cs.ID())
	}
	r.waitRecords(t, store.CallFilter{Identity: "alice"}, func(recs []store.CallRecord) bool { return len(recs) == 1 })
}

// post sends an initialize request and returns the status and body.
func post(t *testing.T, url string, h http.Header) (int, string) {
	t.Helper()
	return postBody(t, url, strings.NewReader(initializeBody("t")), h)
}

// initializeBody is an initialize request from a client named name.
func initializeBody(name string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
}

// postBody posts body as an MCP request and returns the status and the
// start of the answer. A body that is no *strings.Reader (or the like) is
// sent without a length, chunked.
func postBody(t *testing.T, url string, body io.Reader, h http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header[k] = v
	}
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

func TestGatewayAuthMatrix(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"), okHTTPServer(t, "beta"))
	cfg.Gateway.Views = []config.View{
		{Name: "a", Servers: []string{"alpha"}, Prefix: config.PrefixAlways},
		{Name: "b", Servers: []string{"beta"}, Prefix: config.PrefixAlways},
	}
	cfg.Gateway.Tokens = []config.Token{
		{Name: "alice", User: "alice", Secret: "alice-token", Views: []string{"a"}},
		{Name: "bob", User: "bob", Secret: "bob-token"},
	}
	r := start(t, cfg)
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	tests := []struct {
		name   string
		path   string
		header http.Header
		want   int
		body   string
	}{
		{"no token", "/mcp/a", nil, 401, "requires a bearer token"},
		{"wrong token", "/mcp/a", bearer("nope"), 401, "not valid"},
		{"token for another view", "/mcp/b", bearer("alice-token"), 403, `may not use view \"b\"`},
		{"granted view", "/mcp/a", bearer("alice-token"), 200, ""},
		{"narrowing widens", "/mcp/a?servers=beta", bearer("alice-token"), 403, "never widen"},
		{"narrowing to an unknown server", "/mcp?servers=gamma", bearer("bob-token"), 400, "not a configured server"},
		{"unknown view", "/mcp/zzz", bearer("bob-token"), 404, "no view named"},
		{"foreign origin", "/mcp/a", http.Header{"Authorization": {"Bearer alice-token"}, "Origin": {"https://evil.example"}}, 403, "origin"},
		{"rebinding host", "/mcp/a", http.Header{"Authorization": {"Bearer alice-token"}, "Host": {"evil.example:7777"}}, 403, "Host header"},
		{"same origin", "/mcp/a", http.Header{"Authorization": {"Bearer alice-token"}, "Origin": {r.url}}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, r.url+tt.path, tt.header)
			if status != tt.want || !strings.Contains(body, tt.body) {
				t.Errorf("got %d %q, want %d containing %q", status, body, tt.want, tt.body)
			}
		})
	}

	// A tool outside the view is neither listed nor callable.
	alice := r.connect(t, "/mcp/a", bearer("alice-token"), nil)
	names := waitTools(t, alice, "alpha's tools", has("alpha__echo"))
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "beta__") }) {
		t.Errorf("view a lists beta's tools: %v", names)
	}
	if res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"message": "x"}}); err == nil && !res.IsError {
		t.Errorf("calling a tool outside the view succeeded: %q", textOf(res))
	}
	// A session belongs to the user who created it.
	{
		body := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`
		req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp/a", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", alice.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Authorization", "Bearer bob-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("bob's token on alice's session: got 200, want it refused")
		}
	}
	// Narrowing by query: bob sees only beta's echo.
	bob := r.connect(t, "/mcp?servers=beta&tools=beta__echo", bearer("bob-token"), nil)
	if got := waitTools(t, bob, "beta__echo", has("beta__echo")); !slices.Equal(got, []string{"beta__echo"}) {
		t.Errorf("narrowed tools: got %v, want [beta__echo]", got)
	}
}

func TestGatewayViewPrefixNeverLooksLikeTheServer(t *testing.T) {
	t.Parallel()
	srv := okHTTPServer(t, "alpha")
	cfg := testConfig(srv)
	cfg.Gateway.Views = []config.View{{Name: "solo", Servers: []string{"alpha"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp/solo", nil, nil)
	waitTools(t, cs, "the late tool", has("late", "echo"))

	direct, err := upstream.Dial(context.Background(), srv, upstream.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	ctx := context.Background()
	var dt []*mcp.Tool
	deadline := time.Now().Add(10 * time.Second)
	for {
		if dt, err = direct.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(dt, func(tl *mcp.Tool) bool { return tl.Name == "late" }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	gt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	compareJSON(t, "tools/list", dt, gt.Tools)
	dp, err := direct.ListPrompts(ctx)
	if err != nil || len(dp) == 0 {
		t.Fatalf("prompts/list directly: %d prompts, %v; the comparison needs some", len(dp), err)
	}
	gp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	compareJSON(t, "prompts/list", dp, gp.Prompts)
	dr, err := direct.ListResources(ctx)
	if err != nil || len(dr) == 0 {
		t.Fatalf("resources/list directly: %d resources, %v; the comparison needs some", len(dr), err)
	}
	gr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	compareJSON(t, "resources/list", dr, gr.Resources)
}

// compareJSON compares two lists by their JSON, sorted by name.
func compareJSON[T any](t *testing.T, what string, want, got []T) {
	t.Helper()
	norm := func(v []T) []map[string]any {
		b, _ := json.Marshal(v)
		var out []map[string]any
		_ = json.Unmarshal(b, &out)
		slices.SortFunc(out, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
		return out
	}
	if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
		t.Errorf("%s through the gateway differs from the server's own (-server +gateway):\n%s", what, diff)
	}
}

func TestGatewayIdentityInUpstreamHeaders(t *testing.T) {
	t.Parallel()
	// An HTTP upstream whose tool reports the headers of the request that
	// carried the call.
	up := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "headers", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := req.Extra.Header
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: h.Get("X-User-ID") + "|" + h.Get("X-Session")}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	srv := config.Server{Name: "remote", Transport: config.TransportHTTP, URL: hs.URL, Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true,
		Headers: map[string]string{"X-User-ID": config.IdentityUser, "X-Session": "s=" + config.IdentitySession}}
	cfg := testConfig(srv)
	cfg.Gateway.Tokens = []config.Token{{Name: "carol", User: "carol", Secret: "carol-token"}}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", http.Header{"Authorization": {"Bearer carol-token"}}, nil)
	waitTools(t, cs, "remote__headers", has("remote__headers"))
	if got, want := textOf(call(t, cs, "remote__headers", map[string]any{})), "carol|s="+cs.ID(); got != want {
		t.Errorf("headers the upstream saw: got %q, want %q", got, want)
	}
}

// rawSession speaks streamable HTTP by hand, to check the wire.
type rawSession struct {
	t      *testing.T
	url    string
	id     string
	header http.Header
}

func (s *rawSession) post(body string, extra http.Header) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newRawSession(t *testing.T, url string, h http.Header) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, header: h}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	readAll(t, resp)
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: no session id (status %d)", resp.StatusCode)
	}
	if resp := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: got %d", resp.StatusCode)
	}
	return s
}

// sseData returns the data of each event of an event stream, decoded.
func sseData(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestGatewayFastPathWire checks the gateway's own answer to a plain
// tools/call (a JSON response, like the SDK's but without an event
// stream) and that everything else still reaches the SDK.
func TestGatewayFastPathWire(t *testing.T) {
	t.Parallel()
	// One daemon is both gateways: it starts with fast_path: false, whose
	// answers are the SDK's, to compare with; a reload turns the fast
	// path on, and a last one shortens session_timeout for the last step
	// (the session must live through every step before it, however
	// loaded the machine). The upstream is in the test's process: the
	// point is the gateway's wire, and a child of the test binary could
	// take longer than its connect timeout to start at a load of 40.
	cfg := testConfig(httpUpstream("alpha", testserver.OKHTTP(t)))
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-token"}, {Name: "b", User: "bob", Secret: "bob-token"}}
	cfg.Gateway.DisableFastPath = true
	fastCfg := *cfg
	fastCfg.Gateway.DisableFastPath = false
	idleCfg := fastCfg
	idleCfg.Gateway.SessionTimeout = 300 * time.Millisecond
	var next atomic.Pointer[config.Config]
	r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { return next.Load(), nil } })
	reload := func(c config.Config) {
		t.Helper()
		next.Store(&c)
		if _, err := r.d.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	alice := http.Header{"Authorization": {"Bearer alice-token"}}
	cs := r.connect(t, "/mcp", alice, nil)
	waitTools(t, cs, "alpha", has("alpha__whoami", "alpha__echo", "alpha__progress"))
	cs.Close()

	// The SDK's answers: a call, and a call with progress.
	ss := newRawSession(t, r.url+"/mcp", alice)
	resp := ss.post(`{"jsonrpc":"2.0","id":"x-7","method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"fast"}}}`, nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("fast_path: false: got %s, want the SDK's event stream", ct)
	}
	slowEvents := sseData(t, readAll(t, resp))
	if len(slowEvents) != 1 {
		t.Fatalf("fast_path: false: got events %v, want the response alone", slowEvents)
	}
	progressCall := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha__progress","arguments":{"steps":2},"_meta":{"progressToken":"p"}}}`
	sdkEvents := sseData(t, readAll(t, ss.post(progressCall, nil)))

	reload(fastCfg)
	s := newRawSession(t, r.url+"/mcp", alice)
	// The session is registered when the SDK has handled
	// notifications/initialized (asynchronously); until then calls take
	// the SDK's path, which is correct too.
	var fast string
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp := s.post(`{"jsonrpc":"2.0","id":"x-7","method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"fast"}}}`, nil)
		fast = readAll(t, resp)
		if resp.Header.Get("Content-Type") == "application/json" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plain tools/call: got %s %s, want the gateway's own JSON answer", resp.Header.Get("Content-Type"), fast)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The same call on the SDK's path gives the same JSON-RPC response,
	// and so does a call with progress.
	var a, b map[string]any
	if err := json.Unmarshal([]byte(fast), &a); err != nil {
		t.Fatalf("fast answer %q: %v", fast, err)
	}
	b = slowEvents[0]
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("the fast path's answer differs from the SDK's (-sdk +fast):\n%s", diff)
	}
	// The identity is the token's, the session the client's.
	body := readAll(t, s.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"alpha__whoami","arguments":{},"_meta":{"user_id":"mallory"}}}`, nil))
	if !strings.Contains(body, `\"user_id\":\"alice\"`) || !strings.Contains(body, s.id) {
		t.Errorf("whoami on the fast path: got %s, want user alice and session %s", body, s.id)
	}
	// With a progress token the answer is an event stream: the progress
	// notifications under the client's token, then the response, as the
	// SDK sends them.
	resp = s.post(progressCall, nil)
	body = readAll(t, resp)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || strings.Count(body, "notifications/progress") != 2 || !strings.Contains(body, "2 steps") {
		t.Errorf("tools/call with progress: got %s %s", ct, body)
	}
	fastEvents := sseData(t, body)
	if diff := cmp.Diff(sdkEvents, fastEvents); diff != "" {
		t.Errorf("tools/call with progress: the fast path's events differ from the SDK's (-sdk +fast):\n%s", diff)
	}
	// Another user's token on this session, and an unknown session, are
	// refused as the SDK refuses them.
	if resp := s.post(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"x"}}}`, http.Header{"Authorization": {"Bearer bob-token"}}); resp.StatusCode == http.StatusOK {
		t.Errorf("bob on alice's session: got %d %s", resp.StatusCode, readAll(t, resp))
	}
	other := &rawSession{t: t, url: r.url + "/mcp", id: "no-such-session", header: alice}
	if resp := other.post(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"x"}}}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session: got %d, want 404", resp.StatusCode)
	}
	// An unknown tool gets the SDK's JSON-RPC error.
	if body := readAll(t, s.post(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, nil)); !strings.Contains(body, `"error"`) || !strings.Contains(body, "nope") {
		t.Errorf("unknown tool: got %s", body)
	}
	// notifications/cancelled on another request cancels a call the
	// gateway runs itself.
	done := make(chan string, 1)
	mark, started := slowMark(t)
	go func() {
		done <- readAll(t, s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"alpha__slow","arguments":{"seconds":30,"mark":%q}}}`, mark), nil))
	}()
	started()
	if resp := s.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"changed my mind"}}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: got %d", resp.StatusCode)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	r.waitRecords(t, store.CallFilter{Tool: "slow"}, func(recs []store.CallRecord) bool {
		return len(recs) == 1 && recs[0].Status == "cancelled"
	})

	// A session nobody uses is closed after session_timeout, even though
	// the SDK never saw its fast-path requests. (The janitor takes the
	// reloaded timeout at its next round, within handshake_timeout/2.)
	reload(idleCfg)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp := s.post(`{"jsonrpc":"2.0","id":13,"method":"ping"}`, nil)
		readAll(t, resp)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle session was never closed")
		}
		time.Sleep(time.Second) // idle for longer than the timeout
	}
}

// TestGatewaySSESessionsBelongToTheirUser: with tokens, a post to an SSE
// session with another user's token is refused.
func TestGatewaySSESessionsBelongToTheirUser(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-token"}, {Name: "b", User: "bob", Secret: "bob-token"}}
	r := start(t, cfg)
	// Open alice's SSE stream by hand, to learn her session id.
	postAs := openSSEAs(t, r.url, "alice-token")
	if got := postAs("bob-token"); got != http.StatusForbidden {
		t.Errorf("bob posting to alice's SSE session: got %d, want 403", got)
	}
	if got := postAs("alice-token"); got != http.StatusAccepted {
		t.Errorf("alice posting to her own SSE session: got %d, want 202", got)
	}
	// And a real SSE client with a token works end to end.
	c := mcp.NewClient(&mcp.Implementation{Name: "sse", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: r.url + "/sse",
		HTTPClient: &http.Client{Transport: headerTransport{http.Header{"Authorization": {"Bearer bob-token"}}, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "alpha over SSE", has("alpha__whoami"))
	if got := textOf(call(t, cs, "alpha__whoami", map[string]any{})); !strings.Contains(got, `"user_id":"bob"`) {
		t.Errorf("whoami over SSE as bob: got %s", got)
	}
}

// TestGatewaySamplingAsksTheCaller runs two clients' calls to the same
// HTTP upstream at once; each call makes the upstream ask for sampling,
// and each must be answered by the client whose call it is, never by the
// other (which would see a prompt of someone else's call). One call has a
// progress token, so it enters through the SDK's server, the other the
// gateway's lean path; both reach the upstream on the lean path.
func TestGatewaySamplingAsksTheCaller(t *testing.T) {
	t.Parallel()
	// The upstream's tool waits until both calls are in, then samples.
	var arrived sync.WaitGroup
	arrived.Add(2)
	up := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			arrived.Done()
			arrived.Wait()
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "who is asking?"}}}})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	srv := config.Server{Name: "remote", Transport: config.TransportHTTP, URL: hs.URL, Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
	r := start(t, testConfig(srv))

	client := func(name string) *mcp.ClientSession {
		return r.connect(t, "/mcp", nil, &mcp.ClientOptions{
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: name}}, nil
			},
		})
	}
	alice, bob := client("alice"), client("bob")
	waitTools(t, alice, "remote__ask", has("remote__ask"))
	waitTools(t, bob, "remote__ask", has("remote__ask"))

	var wg sync.WaitGroup
	got := map[string]string{}
	var mu sync.Mutex
	for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		wg.Go(func() {
			p := &mcp.CallToolParams{Name: "remote__ask", Arguments: map[string]any{}}
			if name == "bob" {
				p.SetProgressToken("bob-progress")
			}
			res, err := cs.CallTool(context.Background(), p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				got[name] = "error: " + err.Error()
				return
			}
			got[name] = textOf(res)
		})
	}
	wg.Wait()
	if got["alice"] != "alice" || got["bob"] != "bob" {
		t.Errorf("sampling answers: got alice's call %q and bob's %q, want each answered by its own client", got["alice"], got["bob"])
	}
}

// TestGatewaySamplingNeverAsksAnotherClient: when the client whose call
// caused a sampling request cannot sample, the upstream gets an error; a
// client that can, with a call in progress too, is not asked instead.
func TestGatewaySamplingNeverAsksAnotherClient(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	up.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "secret"}}}})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	srv := config.Server{Name: "remote", Transport: config.TransportHTTP, URL: hs.URL, Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
	r := start(t, testConfig(srv))

	var asked atomic.Int32
	sampler := r.connect(t, "/mcp", nil, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "x"}}, nil
		},
	})
	plain := r.connect(t, "/mcp", nil, nil) // declares no sampling
	waitTools(t, sampler, "remote__wait", has("remote__wait", "remote__ask"))

	// The sampler has a call in progress to the same server ...
	waiting := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := sampler.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__wait", Arguments: map[string]any{}})
		waiting <- res
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the sampler's call never reached the upstream")
	}
	// ... when the plain client's call asks for sampling.
	res := call(t, plain, "remote__ask", map[string]any{})
	close(release)
	if !res.IsError || !strings.Contains(textOf(res), "sampling failed") {
		t.Errorf("the plain client's call: got %q, want the upstream told sampling failed", textOf(res))
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the other client was asked to sample %d time(s) for a call not its own", n)
	}
	if res := <-waiting; res == nil || textOf(res) != "released" {
		t.Errorf("the sampler's own call: got %v", res)
	}
}

// TestGatewayStatelessCallEndsWhenTheClientGoesAway: in stateless mode a
// client cannot send notifications/cancelled to the call (there is no
// session to find it in), but dropping the request still cancels the
// call, up to the upstream: a plain call, which the gateway answers
// itself, and one with a progress token, which the SDK dispatches.
func TestGatewayStatelessCallEndsWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	up := mcp.NewServer(&mcp.Implementation{Name: "hang", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil
			}
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	srv := config.Server{Name: "remote", Transport: config.TransportHTTP, URL: hs.URL, Enabled: true, LoadTools: true,
		RequestTimeout: time.Minute, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
	cfg := testConfig(srv)
	cfg.Gateway.Stateless = true
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "remote__hang", has("remote__hang"))

	for i, meta := range []string{"", `,"_meta":{"progressToken":"p1"}`} {
		name := map[int]string{0: "plain", 1: "with a progress token"}[i]
		t.Run(name, func(t *testing.T) {
			ctx, drop := context.WithCancel(context.Background())
			defer drop()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remote__hang","arguments":{}%s}}`, 7+i, meta)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("X-Switchboard-Request-Key", "forged") // ignored
			errc := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body) // the event stream, until dropped
					resp.Body.Close()
				}
				errc <- err
			}()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the upstream")
			}
			drop()
			<-errc
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream's call was not cancelled after the client went away")
			}
			recs := r.waitRecords(t, store.CallFilter{Tool: "hang"}, func(rs []store.CallRecord) bool { return len(rs) == i+1 })
			if recs[0].Status != "cancelled" {
				t.Errorf("history: got status %q, want cancelled", recs[0].Status)
			}
		})
	}
}

// TestGatewayRequestSizeLimit: a body over gateway.max_request_bytes gets
// 413 with what to do, whether it gives its length or not; one under it
// is served.
func TestGatewayRequestSizeLimit(t *testing.T) {
	t.Parallel()
	// The limit applies before any server is asked: the daemons have
	// none (a child each cost more CPU than the requests).
	cfg := testConfig()
	cfg.Gateway.MaxRequestBytes = 64 << 10
	r := start(t, cfg)
	body := initializeBody(strings.Repeat("x", 100<<10))
	for _, chunked := range []bool{false, true} {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // no length known: sent chunked
		}
		code, b := postBody(t, r.url+"/mcp", rd, nil)
		if code != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked %v: got %d %s, want 413", chunked, code, b)
		}
		if !strings.Contains(b, "gateway.max_request_bytes") || !json.Valid([]byte(b)) {
			t.Errorf("chunked %v: got %s, want the structured error naming gateway.max_request_bytes", chunked, b)
		}
	}
	// A chunked body longer than what the lean path reads first and over
	// the limit gets the same structured error, not the SDK's plain text.
	cfg2 := testConfig()
	cfg2.Gateway.MaxRequestBytes = 2 << 20
	r3 := start(t, cfg2)
	huge := io.MultiReader(strings.NewReader(initializeBody(strings.Repeat("z", 3<<20))))
	if code, b := postBody(t, r3.url+"/mcp", huge, nil); code != http.StatusRequestEntityTooLarge || !strings.Contains(b, "gateway.max_request_bytes") || !json.Valid([]byte(b)) {
		t.Errorf("a 3 MiB chunked body over a 2 MiB limit: got %d %s, want 413 with the structured error", code, b)
	}
	if code, b := post(t, r.url+"/mcp", nil); code != http.StatusOK {
		t.Errorf("a small initialize: got %d %s, want 200", code, b)
	}

	// Under the default limit, a body without a length that is longer
	// than what the lean path reads first reaches the SDK whole.
	r2 := start(t, testConfig())
	big := io.MultiReader(strings.NewReader(initializeBody(strings.Repeat("y", 2<<20))))
	if code, b := postBody(t, r2.url+"/mcp", big, nil); code != http.StatusOK {
		t.Errorf("a 2 MiB chunked initialize: got %d %s, want 200", code, b)
	}
}

// openSSEAs opens an SSE stream with token by hand and returns a function
// that posts an initialize to its session's message endpoint with another
// token, answering the HTTP status: what session binding is tested with.
func openSSEAs(t *testing.T, base, token string) (postAs func(token string) int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	buf := make([]byte, 4096)
	n, err := resp.Body.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(buf[:n]), "data: ")
	if i < 0 {
		t.Fatalf("no endpoint event: %q", buf[:n])
	}
	endpoint := strings.TrimSpace(strings.SplitN(string(buf[i+6:n]), "\n", 2)[0])
	return func(token string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, base+endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}
