package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestGatewayAggregatesAndForwards(t *testing.T) {
	r := start(t, testConfig(okServer(t, "alpha"), okServer(t, "beta")))
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
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"seconds": 30}})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond) // let the call reach the server
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
	cfg := testConfig(okServer(t, "alpha"))
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
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
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
	cfg := testConfig(okServer(t, "alpha"), okServer(t, "beta"))
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
	srv := okServer(t, "alpha")
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
	dp, _ := direct.ListPrompts(ctx)
	gp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	compareJSON(t, "prompts/list", dp, gp.Prompts)
	dr, _ := direct.ListResources(ctx)
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
	// An HTTP upstream whose tool reports the headers of the request that
	// carried the call.
	up := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "headers", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := req.Extra.Header
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: h.Get("X-User-ID") + "|" + h.Get("X-Session")}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer hs.Close()
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
