//lint:file-ignore SA1019 the test asks for roots, elicitation and sampling, deprecated only from protocol 2026-07-28; clients and servers use them today.

package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// This file checks that a server on protocol 2026-07-28 that asks its
// client for roots, an elicitation and sampling in a result (multi
// round-trip requests: inputRequests, requestState, resultType) is, through
// a prefix: never view with session: per_client, asked of the client as
// directly: the incomplete result reaches the client as the server sent
// it, and the client's retried request (inputResponses, requestState) the
// server as the client sent it — for tools/call, prompts/get and
// resources/read, which 2026-07-28 lets carry input requests. A go-sdk
// client talks to a go-sdk server directly and through the gateway, over
// serve --stdio (where a client keeps a 2026-07-28 session with the
// gateway) and over streamable HTTP (where it negotiates 2025-11-25, and
// the server's SDK asks it with requests instead, which reach the client
// on the request's stream; with fast_path off nothing links a roots
// request to its call, so that case is left out), with fast_path on and
// off; what each side sees is compared.
// The TypeScript SDK's client (1.32) does not speak 2026-07-28.

// mrtrSeen is what an mrtrServer's handlers were asked, in order: the
// method, the input responses and the request state of each request.
type mrtrSeen struct {
	mu  sync.Mutex
	all []string
}

func (s *mrtrSeen) add(method string, responses mcp.InputResponseMap, state string) {
	b, _ := json.Marshal(responses)
	s.mu.Lock()
	s.all = append(s.all, fmt.Sprintf("%s responses=%s state=%q", method, canonicalJSON(b), state))
	s.mu.Unlock()
}

func (s *mrtrSeen) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.all...)
}

// canonicalJSON returns b with its object keys sorted (as decoded and
// encoded again), or b itself if it is not JSON.
func canonicalJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// mrtrAsks are the input requests an mrtrServer's handlers ask with.
func mrtrAsks() mcp.InputRequestMap {
	return mcp.InputRequestMap{
		"roots": &mcp.ListRootsParams{},
		"form": &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
		}},
		"model": &mcp.CreateMessageParams{MaxTokens: 32, SystemPrompt: "You write haiku.",
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "A haiku, please."}}}},
	}
}

// mrtrServer is a go-sdk server whose tool "ask", prompt "ask" and
// resource mrtr://ask ask their client for roots, an elicitation and
// sampling in their first result (with a request state and a _meta of
// their own), and answer with what the client gave when asked again.
func mrtrServer(seen *mrtrSeen) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	answer := func(responses mcp.InputResponseMap, state string) string {
		b, _ := json.Marshal(responses)
		return fmt.Sprintf("state %q, answers %s", state, canonicalJSON(b))
	}
	meta := mcp.Meta{"round": "first"}
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			seen.add("tools/call", req.Params.InputResponses, req.Params.RequestState)
			if req.Params.InputResponses == nil {
				return &mcp.CallToolResult{Meta: meta, InputRequests: mrtrAsks(), RequestState: "tool-round-1"}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer(req.Params.InputResponses, req.Params.RequestState)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "ask"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		seen.add("prompts/get", req.Params.InputResponses, req.Params.RequestState)
		if req.Params.InputResponses == nil {
			return &mcp.GetPromptResult{Meta: meta, InputRequests: mrtrAsks(), RequestState: "prompt-round-1"}, nil
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
			Content: &mcp.TextContent{Text: answer(req.Params.InputResponses, req.Params.RequestState)}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "mrtr://ask", Name: "ask"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		seen.add("resources/read", req.Params.InputResponses, req.Params.RequestState)
		if req.Params.InputResponses == nil {
			return &mcp.ReadResourceResult{Meta: meta, InputRequests: mrtrAsks(), RequestState: "resource-round-1"}, nil
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mrtr://ask",
			Text: answer(req.Params.InputResponses, req.Params.RequestState)}}}, nil
	})
	return s
}

// mrtrClient is a go-sdk client with roots of its own that answers an
// elicitation and sampling itself.
func mrtrClient() *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "the-client's-model",
				Content: &mcp.TextContent{Text: "switchboard hums"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///the/client/own", Name: "own"})
	return c
}

// exchangeWire records what a client reads: the server's requests
// (method and params) and the results of the client's tools/call,
// prompts/get and resources/read (method and result), in order, with
// their JSON in a canonical form and without ids (the gateway numbers its
// own requests).
type exchangeWire struct {
	mu      sync.Mutex
	pending map[string]string // request id -> method
	seen    []string
}

func (w *exchangeWire) add(s string) {
	w.mu.Lock()
	w.seen = append(w.seen, s)
	w.mu.Unlock()
}

// get returns what the client read. The server's SDK asks a client of
// protocol 2025-11-25 for a result's input requests all at once (each
// request on a goroutine of its own), so the requests between two
// results are sorted.
func (w *exchangeWire) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := append([]string(nil), w.seen...)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], "request ") {
			j++
		}
		slices.Sort(out[i:j])
		i = j + 1
	}
	return out
}

// wrote notes the client's tools/call, prompts/get and resources/read,
// whose results read records.
func (w *exchangeWire) wrote(m jsonrpc.Message) {
	if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
		switch r.Method {
		case "tools/call", "prompts/get", "resources/read":
			w.mu.Lock()
			if w.pending == nil {
				w.pending = map[string]string{}
			}
			w.pending[fmt.Sprint(r.ID.Raw())] = r.Method
			w.mu.Unlock()
		}
	}
}

// read records m, a message the client read.
func (w *exchangeWire) read(m jsonrpc.Message) {
	switch r := m.(type) {
	case *jsonrpc.Request:
		if r.IsCall() && r.Method != "ping" {
			w.add("request " + r.Method + " " + canonicalJSON(r.Params))
		}
	case *jsonrpc.Response:
		w.mu.Lock()
		method, ok := w.pending[fmt.Sprint(r.ID.Raw())]
		w.mu.Unlock()
		if ok {
			if r.Error != nil {
				w.add("error of " + method + " " + r.Error.Error())
			} else {
				w.add("result of " + method + " " + canonicalJSON(r.Result))
			}
		}
	}
}

// mrtrRun is one run of a client: what it got back from each request,
// what it read, and what the server was asked.
type mrtrRun struct {
	version string // the protocol version the client negotiated
	got     []string
	read    []string
	server  []string
}

// compare reports how got, a run through the gateway over transport,
// differs from r, the same client's run directly.
func (r mrtrRun) compare(t *testing.T, transport string, got mrtrRun) {
	t.Helper()
	if got.version != r.version {
		t.Errorf("%s: the client negotiated %s, directly %s", transport, got.version, r.version)
	}
	for _, d := range []struct{ what, diff string }{
		{"what the client got", cmp.Diff(r.got, got.got)},
		{"what the client read", cmp.Diff(r.read, got.read)},
		{"what the server was asked", cmp.Diff(r.server, got.server)},
	} {
		if d.diff != "" {
			t.Errorf("%s: %s directly (-) and through the view (+):\n%s", transport, d.what, d.diff)
		}
	}
}

// runMRTR connects mrtrClient over t (recording what it reads), calls
// tool ask, gets prompt ask and reads mrtr://ask, and returns what it saw
// and what seen recorded of the server meanwhile.
func runMRTR(t *testing.T, tr mcp.Transport, seen *mrtrSeen) mrtrRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var w exchangeWire
	cs, err := mrtrClient().Connect(ctx, recordingTransport{tr, w.wrote, w.read}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	var run mrtrRun
	run.version = cs.InitializeResult().ProtocolVersion
	text := func(what string, v any, err error) {
		if err != nil {
			run.got = append(run.got, what+": error "+err.Error())
			return
		}
		b, _ := json.Marshal(v)
		run.got = append(run.got, what+": "+canonicalJSON(b))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	text("tools/call", res, err)
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ask"})
	text("prompts/get", pr, err)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mrtr://ask"})
	text("resources/read", rr, err)
	run.read, run.server = w.get(), seen.get()
	return run
}

// TestPerClientMultiRoundTripIsTheServers: through a prefix: never view
// with session: per_client, a server's input requests in a result reach
// the client as the server sent them, and the client's own answers (its
// roots, not the gateway's) reach the server as the client sent them —
// on serve --stdio (2026-07-28), fast_path on and off, and with fast_path
// on over streamable HTTP (2025-11-25, where the server's SDK asks with
// requests).
func TestPerClientMultiRoundTripIsTheServers(t *testing.T) {
	t.Parallel()
	// Directly: over an in-memory pipe (2026-07-28), and over streamable
	// HTTP to a server with sessions (2025-11-25), as through the gateway.
	var direct, directHTTP mrtrSeen
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mrtrServer(&direct).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	want := runMRTR(t, ct, &direct)
	if want.version != "2026-07-28" {
		t.Fatalf("the client negotiated %s directly, want 2026-07-28 (the case this test is about)", want.version)
	}
	wantHTTP := runMRTR(t, &mcp.StreamableClientTransport{Endpoint: serveHTTP(t, mrtrServer(&directHTTP), nil)}, &directHTTP)
	if testing.Verbose() {
		t.Logf("directly, 2026-07-28: the client read %q; the server was asked %q", want.read, want.server)
		t.Logf("directly, streamable HTTP (%s): the client read %q; the server was asked %q", wantHTTP.version, wantHTTP.read, wantHTTP.server)
	}

	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_path=%v", fast), func(t *testing.T) {
			t.Parallel()
			// The stdio client's server is stateless, so that its own
			// upstream session negotiates 2026-07-28 as the client does;
			// the HTTP client's has sessions, as directly.
			var stdioSeen, httpSeen mrtrSeen
			stdioSrv := httpUpstream("mrtr", serveHTTP(t, mrtrServer(&stdioSeen), &mcp.StreamableHTTPOptions{Stateless: true}))
			httpSrv := httpUpstream("mrtrs", serveHTTP(t, mrtrServer(&httpSeen), nil))
			for _, s := range []*config.Server{&stdioSrv, &httpSrv} {
				s.Session = config.SessionPerClient
				s.NoIdentityMeta = true
			}
			cfg := testConfig(stdioSrv, httpSrv)
			cfg.Gateway.DisableFastPath = !fast
			cfg.Gateway.Views = []config.View{
				{Name: config.DefaultViewName, Servers: []string{"mrtr"}, Prefix: config.PrefixNever},
				{Name: "mrtrs", Servers: []string{"mrtrs"}, Prefix: config.PrefixNever},
			}
			r := start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r.d.waitFirstAttempts(ctx)

			// Only the client's own sessions' requests count: the shared
			// sessions asked nothing.
			ct, st := mcp.NewInMemoryTransports()
			stdioCtx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = r.d.gw.ServeStdio(stdioCtx, st)
			}()
			defer func() {
				stop()
				<-done
			}()
			got := runMRTR(t, ct, &stdioSeen)
			want.compare(t, "serve --stdio", got)
			// The history records the server's input-required result as
			// such, and the call the client made again as a call of its own.
			recs := r.waitRecords(t, store.CallFilter{Server: "mrtr", Tool: "ask"}, func(rs []store.CallRecord) bool { return len(rs) == 2 })
			if got := []string{recs[1].Status, recs[0].Status}; !slices.Equal(got, []string{"input_required", "success"}) {
				t.Errorf("history of mrtr/ask: statuses %q (oldest first), want input_required, then success", got)
			}

			if !fast {
				// With fast_path off the go-sdk's client reads the call's
				// stream, and nothing links the server's requests to the
				// call: its roots/list goes to the client's standalone
				// stream (docs/gateway.md), which may not be open yet.
				return
			}
			gotHTTP := runMRTR(t, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp/mrtrs"}, &httpSeen)
			wantHTTP.compare(t, "streamable HTTP", gotHTTP)
		})
	}
}
