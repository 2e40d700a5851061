package gateway_test

// Black-box tests of the gateway through its public surface only: New,
// Run, Handler, Guard, ServeStdio and SessionCount, wired to a real pool of
// real stdio servers (this test binary, see internal/testserver), a real
// catalog and a real engine, as the daemon wires them, and spoken to by the
// go-sdk's client and by raw HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// rig is a gateway wired as the daemon wires it, served over HTTP on
// 127.0.0.1.
type rig struct {
	gw   *gateway.Gateway
	pool *upstream.Pool
	cat  *catalog.Catalog
	eng  *toolcall.Engine
	srv  *httptest.Server
}

// newRig starts a gateway for a configuration whose servers are test
// server modes (name → mode) and whose other top-level keys are extra
// (YAML). It waits until every server is connected and listed.
func newRig(t testing.TB, servers map[string]string, extra string) *rig {
	t.Helper()
	exe := testserver.Command(t)
	var b strings.Builder
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\n", exe)
	b.WriteString("defaults:\n  health:\n    ping_interval: 1h\n")
	b.WriteString(extra)
	b.WriteString("servers:\n")
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    env: %s\n", n, exe, testserver.EnvYAML(servers[n]))
	}
	cfg, err := config.Parse("switchboard.yaml", []byte(b.String()), config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("config:\n%s\n%v", b.String(), err)
	}

	r := &rig{}
	r.pool, err = upstream.NewPool(upstream.PoolOptions{
		Config: cfg,
		OnConnect: func(c *upstream.Client) {
			r.cat.Connected(c.Server().Name)
			r.gw.Connected(c)
			r.gw.Notify()
		},
		Events: func(server string) upstream.Events {
			return upstream.Events{
				ToolsChanged:    func() { r.cat.Invalidate(server, catalog.KindTools) },
				ResourceUpdated: func(ctx context.Context, uri string) { r.gw.Events(server).ResourceUpdated(ctx, uri) },
				//lint:ignore SA1019 forwarded to gateway clients.
				Log: func(ctx context.Context, p *mcp.LoggingMessageParams) { r.gw.Events(server).Log(ctx, p) },
			}
		},
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.LeanCalls = func() bool { return !cfg.Gateway.DisableFastPath }
			o.Requests = upstream.ClientRequests{
				//lint:ignore SA1019 roots are forwarded to gateway clients.
				ListRoots: func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
					return r.gw.Requests(server).ListRoots(ctx, p)
				},
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.cat = catalog.New(catalog.Options{Source: r.pool, Servers: cfg.Servers, TTL: cfg.Defaults.DiscoveryTTL,
		OnChange: func(string, catalog.Kind) { r.gw.Notify() }})
	r.eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: r.pool, Catalog: r.cat})
	if err != nil {
		t.Fatal(err)
	}
	r.gw, err = gateway.New(gateway.Options{Config: cfg, Catalog: r.cat, Engine: r.eng, Upstreams: r.pool, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{r.pool.Run, r.cat.Run, r.gw.Run} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = run(ctx) }()
	}
	r.srv = httptest.NewServer(r.gw.Guard(r.gw.Handler(), true))
	t.Cleanup(func() {
		r.srv.Close()
		r.eng.Shutdown()
		cancel()
		wg.Wait()
	})
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	for _, n := range names {
		if _, err := r.pool.WaitConnected(wctx, n, 30*time.Second); err != nil {
			t.Fatalf("server %s: %v", n, err)
		}
	}
	if err := r.cat.RefreshAll(wctx); err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return r
}

// connect opens a go-sdk client session on path (e.g. "/mcp/github").
func (r *rig) connect(t *testing.T, path string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "blackbox", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: r.srv.URL + path}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", path, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolNames lists the tools a session sees, sorted.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// resultText is the text of a result's first content.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("got a result without content: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("got %T content, want text", res.Content[0])
	}
	return tc.Text
}

// TestViewsListAndCall checks what a client of each kind of view sees and
// that a call through it reaches the right server, on the gateway's own
// call path and on the SDK's.
func TestViewsListAndCall(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			r := newRig(t, map[string]string{"alpha": "ok", "beta": "ok"}, fmt.Sprintf(`gateway:
  fast_path: %v
  views:
    - name: solo
      servers: [beta]
      prefix: never
      include: ["echo", "add"]
      rename: {add: plus}
`, fast))
			all := r.connect(t, "/mcp", nil)
			names := toolNames(t, all)
			for _, want := range []string{"alpha__echo", "beta__echo", "alpha__add"} {
				if !slices.Contains(names, want) {
					t.Errorf("default view: %q missing from %v", want, names)
				}
			}
			res, err := all.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"message": "hi alpha"}})
			if err != nil || res.IsError {
				t.Fatalf("alpha__echo: %v %+v", err, res)
			}
			if got := resultText(t, res); got != "hi alpha" {
				t.Errorf("alpha__echo: got %q, want the message back", got)
			}

			solo := r.connect(t, "/mcp/solo", nil)
			if got, want := toolNames(t, solo), []string{"echo", "plus"}; !slices.Equal(got, want) {
				t.Errorf("view solo: got tools %v, want %v", got, want)
			}
			if got := solo.InitializeResult().ServerInfo.Name; got != "testserver" {
				t.Errorf("a prefix: never view of one server: got serverInfo %q, want the server's own (testserver)", got)
			}
			res, err = solo.CallTool(context.Background(), &mcp.CallToolParams{Name: "plus", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil || res.IsError {
				t.Fatalf("plus: %v %+v", err, res)
			}
			if got := resultText(t, res); got != "5" {
				t.Errorf("plus (renamed add): got %q, want 5", got)
			}
			// A tool the view leaves out is refused with the JSON-RPC
			// error the specification prescribes, not forwarded.
			_, err = solo.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 0}})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(werr.Message, `"slow" is not part of view "solo"`) {
				t.Errorf("a tool outside the view: got %v, want JSON-RPC -32602 saying it is not part of the view", err)
			}
			if got := r.gw.SessionCount(); got < 2 {
				t.Errorf("SessionCount: got %d with two clients connected", got)
			}
		})
	}
}

// TestNarrowingByQuery checks that a client may narrow a view when it
// connects but never widen it.
func TestNarrowingByQuery(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok", "beta": "ok"}, "gateway:\n  views:\n    - name: a-only\n      servers: [alpha]\n")
	cs := r.connect(t, "/mcp?servers=beta&tools=beta__e*", nil)
	if got, want := toolNames(t, cs), []string{"beta__echo"}; !slices.Equal(got, want) {
		t.Errorf("narrowed to beta__e*: got %v, want %v", got, want)
	}
	for path, want := range map[string]int{
		"/mcp/a-only?servers=beta": http.StatusForbidden, // a server of another view: widening
		"/mcp?servers=nosuch":      http.StatusBadRequest,
		"/mcp/nosuch":              http.StatusNotFound,
	} {
		resp := post(t, r.srv.URL+path, nil, initializeBody)
		if resp.StatusCode != want {
			t.Errorf("POST %s: got HTTP %d, want %d", path, resp.StatusCode, want)
		}
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends one JSON-RPC body as a streamable-HTTP client would.
func post(t *testing.T, url string, header http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// rpcError reads the JSON-RPC error of a response, as JSON or as the
// first event of an event stream.
func rpcError(t *testing.T, resp *http.Response) (code int, message string, id json.RawMessage) {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(data, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = data[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	var msg struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil || msg.Error == nil {
		t.Fatalf("HTTP %d: got %q, want a JSON-RPC error", resp.StatusCode, data)
	}
	return msg.Error.Code, msg.Error.Message, msg.ID
}

// TestProtocolErrors checks that every malformed request gets a JSON-RPC
// error with the specification's code, and the request's id back exactly.
func TestProtocolErrors(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	withSession := rawSession(t, r.srv.URL+"/mcp")
	tests := []struct {
		name   string
		header http.Header
		body   string
		code   int
		id     string
	}{
		{"not JSON", withSession, `{"jsonrpc":`, -32700, "null"},
		{"fractional id", withSession, `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, "null"},
		{"id beyond 2^53", withSession, `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`, -32600, "null"},
		{"not JSON-RPC 2.0", withSession, `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`, -32600, "7"},
		{"unknown method", withSession, `{"jsonrpc":"2.0","id":"x-1","method":"tools/frobnicate"}`, -32601, `"x-1"`},
		{"no session", nil, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, -32600, "3"},
		{"unknown session", http.Header{"Mcp-Session-Id": {"no-such-session"}}, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, -32001, "4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg, id := rpcError(t, post(t, r.srv.URL+"/mcp", tt.header, tt.body))
			if code != tt.code {
				t.Errorf("got code %d (%s), want %d", code, msg, tt.code)
			}
			if string(id) != tt.id {
				t.Errorf("got id %s, want %s", id, tt.id)
			}
		})
	}
}

// TestHostAndOriginChecks checks the DNS-rebinding and cross-origin
// refusals of the gateway's guard.
func TestHostAndOriginChecks(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	tests := []struct {
		name       string
		host       string
		origin     string
		wantStatus int
	}{
		{"loopback", "", "", http.StatusOK},
		{"rebinding name", "evil.example", "", http.StatusForbidden},
		{"foreign origin", "", "https://evil.example", http.StatusForbidden},
		{"own origin, other scheme", "", "https://" + strings.TrimPrefix(r.srv.URL, "http://"), http.StatusForbidden},
		{"own origin", "", r.srv.URL, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/mcp", strings.NewReader(initializeBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("got HTTP %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
}

// TestProgressKeepsTheClientsToken checks, on the wire, that progress from
// the server reaches the client on the call's own event stream under the
// token the client sent, every notification before the result.
func TestProgressKeepsTheClientsToken(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	session := rawSession(t, r.srv.URL+"/mcp")
	resp := post(t, r.srv.URL+"/mcp", session, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"alpha__progress","arguments":{"steps":3},"_meta":{"progressToken":"client-token-42"}}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call with a progress token: got Content-Type %q, want an event stream", ct)
	}
	var order []string
	for _, msg := range events(t, resp) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken any `json:"progressToken"`
			} `json:"params"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatalf("event %s: %v", msg, err)
		}
		switch {
		case m.Method == "notifications/progress":
			if m.Params.ProgressToken != "client-token-42" {
				t.Errorf("got progress token %v, want the client's", m.Params.ProgressToken)
			}
			order = append(order, "progress")
		case string(m.ID) == "5":
			order = append(order, "result")
		default:
			order = append(order, string(msg))
		}
	}
	if want := []string{"progress", "progress", "progress", "result"}; !slices.Equal(order, want) {
		t.Errorf("got messages %q on the call's stream, want %q", order, want)
	}
}

// rawSession initializes a session by hand and returns the header that
// names it.
func rawSession(t *testing.T, url string) http.Header {
	t.Helper()
	resp := post(t, url, nil, initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, sid)
	}
	h := http.Header{"Mcp-Session-Id": {sid}}
	if resp := post(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d, want 202", resp.StatusCode)
	}
	return h
}

// events reads an event stream to its end and returns each event's data.
func events(t *testing.T, resp *http.Response) []json.RawMessage {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, line := range strings.Split(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, json.RawMessage(d))
		}
	}
	return out
}

// TestStatelessGateway checks that a stateless gateway answers without
// sessions: any request stands alone.
func TestStatelessGateway(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "gateway:\n  stateless: true\n")
	resp := post(t, r.srv.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"message":"no session"}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call without a session: HTTP %d", resp.StatusCode)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a stateless gateway gave a session id %q", sid)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"no session"`)) || !bytes.Contains(data, []byte(`"id":9`)) {
		t.Errorf("got %s, want the echo answered to id 9", data)
	}
}

// TestPromptsAndResourcesRouted checks that prompts and resources of two
// servers are listed and routed back to their owners: prompt names are
// prefixed, and the second server's copy of the same URI is readable under
// its switchboard:// name.
func TestPromptsAndResourcesRouted(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok", "beta": "ok"}, "")
	cs := r.connect(t, "/mcp", nil)
	ctx := context.Background()
	for _, name := range []string{"alpha__greet", "beta__greet"} {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			t.Fatalf("prompts/get %s: %v", name, err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
			t.Errorf("prompts/get %s: got %+v", name, res.Messages)
		}
	}
	var uris []string
	for res, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		uris = append(uris, res.URI)
	}
	slices.Sort(uris)
	if len(uris) != 2 || uris[1] != "test://readme" || !strings.HasPrefix(uris[0], "switchboard://beta/") {
		t.Fatalf("resources/list: got %v, want test://readme and beta's copy under switchboard://beta/", uris)
	}
	for _, uri := range uris {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != "read me" {
			t.Errorf("resources/read %s: got %+v", uri, res.Contents)
		}
	}
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "gamma__greet"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32602 {
		t.Errorf("prompts/get of a prompt no server has: got %v, want JSON-RPC -32602", err)
	}
}

// TestServeStdio checks the gateway served over a stdio-like transport (as
// `serve --stdio` does): the same view, the same calls.
func TestServeStdio(t *testing.T) {
	r := newRig(t, map[string]string{"alpha": "ok"}, "")
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.gw.ServeStdio(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__add", Arguments: map[string]any{"a": 40, "b": 2}})
	if err != nil || res.IsError || resultText(t, res) != "42" {
		t.Fatalf("alpha__add over stdio: %v %+v", err, res)
	}
	_ = cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after its client left and its context ended")
	}
}
