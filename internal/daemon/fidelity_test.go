package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// This file checks that a view is indistinguishable from its server
// (issue 17): what a client and an upstream each see through the gateway
// is what they see talking to each other directly.

// httpUpstream is the configuration of a streamable-HTTP server at url.
func httpUpstream(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true, LoadTools: true,
		LoadPrompts: true, LoadResources: true, RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
}

// serveHTTP serves s over streamable HTTP (stateful unless opts says
// otherwise) until the test ends, after the daemon has stopped.
func serveHTTP(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	// Closed after the daemon (cleanups run last first), whose session
	// holds the upstream's event stream open until it stops.
	t.Cleanup(hs.Close)
	return hs.URL
}

// connectStdio connects a go-sdk client (opts) to serve --stdio's end t.
func connectStdio(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// metaServer is a go-sdk server whose tool "meta" returns the _meta of
// the request that called it.
func metaServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "meta", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	return s
}

// TestGatewayStripsTheClientsProtocolMeta: a go-sdk client over serve
// --stdio negotiates protocol 2026-07-28, so every request it sends
// carries its protocol version, identity and capabilities in _meta. Those
// belong to its hop to the gateway: a go-sdk HTTP server on 2025-11-25
// refuses a call that carries them ("protocol version 2026-07-28 is not
// supported"). Forwarded without them, the call is answered, and the
// server sees what the client asked (its own _meta keys) and the caller's
// identity, nothing of the client's protocol.
func TestGatewayStripsTheClientsProtocolMeta(t *testing.T) {
	url := serveHTTP(t, metaServer(), nil)
	clientT := startStdio(t, testConfig(httpUpstream("remote", url)))
	cs := connectStdio(t, clientT, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client negotiated %s with serve --stdio, want 2026-07-28 (the case this test is about)", v)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote__meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"trace": "t-1"}})
	if err != nil {
		t.Fatalf("calling through the gateway: %v", err)
	}
	if res.IsError {
		t.Fatalf("the upstream refused the call: %s", textOf(res))
	}
	var seen map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &seen); err != nil {
		t.Fatalf("the upstream's _meta: %q: %v", textOf(res), err)
	}
	for k := range seen {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			t.Errorf("the upstream saw the client's %s: %v", k, seen)
		}
	}
	if seen["trace"] != "t-1" || seen["user_id"] == nil {
		t.Errorf("the upstream's _meta: got %v, want the client's trace and the caller's user_id", seen)
	}
}

// conformanceUpstream is the go-sdk's conformance everything-server over
// stdio.
func conformanceUpstream(t *testing.T, name string) config.Server {
	return config.Server{Name: name, Transport: config.TransportStdio, Command: testpeer.ConformanceCommand(t), Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true, RequestTimeout: 10 * time.Second, ConnectTimeout: 20 * time.Second}
}

// rpcAnswer is a JSON-RPC answer as a client reads it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// decodeAnswer reads the one JSON-RPC answer of a response, sent as JSON
// or as an event stream; the test fails (and gets a zero answer) if it is
// none.
func decodeAnswer(t *testing.T, what string, resp *http.Response) rpcAnswer {
	t.Helper()
	body := readAll(t, resp)
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		for line := range strings.SplitSeq(body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id"`) {
				body = data
			}
		}
	} else if !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: HTTP %d with Content-Type %q, want a JSON-RPC answer: %q", what, resp.StatusCode, ct, body)
		return rpcAnswer{}
	}
	var a rpcAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.JSONRPC != "2.0" {
		t.Errorf("%s: HTTP %d, not a JSON-RPC answer (%v): %q", what, resp.StatusCode, err, body)
		return rpcAnswer{}
	}
	return a
}

// TestGatewayProtocolErrorsAreJSONRPC: every error a client gets from the
// gateway's streamable-HTTP endpoint is a JSON-RPC error with the code the
// specification gives it, where the SDK's server would answer some of
// them in plain text or with code 0; and completion for a prompt the view
// does not have is an empty completion, as the server answers it.
func TestGatewayProtocolErrorsAreJSONRPC(t *testing.T) {
	r := start(t, testConfig(conformanceUpstream(t, "conf")))
	s := newRawSession(t, r.url+"/mcp", nil)
	noSession := &rawSession{t: t, url: r.url + "/mcp"}
	gone := &rawSession{t: t, url: r.url + "/mcp", id: "no-such-session"}

	for _, c := range []struct {
		name    string
		s       *rawSession
		body    string
		status  int
		code    int64
		id      string
		message string // a part of the message
	}{
		{"not JSON", s, `{"jsonrpc":"2.0",`, 400, -32700, "null", "Parse error"},
		{"no jsonrpc version", s, `{"id":1,"method":"tools/list"}`, 400, -32600, "1", `"jsonrpc": "2.0"`},
		{"tools/list without a session", noSession, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, -32600, "2", "Mcp-Session-Id"},
		{"unknown method", s, `{"jsonrpc":"2.0","id":3,"method":"tools/lisst"}`, 200, -32601, "3", "tools/lisst"},
		{"tools/call without params", s, `{"jsonrpc":"2.0","id":4,"method":"tools/call"}`, 200, -32602, "4", "needs params"},
		{"an id past 2^53", s, `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`, 400, -32600, "null", "2^53"},
		{"a fractional id", s, `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, 400, -32600, "null", "not an integer"},
		{"a notification with an id", s, `{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, 400, -32600, "5", "notification"},
		{"a session the gateway does not have", gone, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, 404, -32001, "6", "Session not found"},
		{"completion without a ref", s, `{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"argument":{"name":"a","value":""}}}`, 200, -32602, "7", "ref"},
	} {
		resp := c.s.post(c.body, nil)
		a := decodeAnswer(t, c.name, resp)
		if a.JSONRPC == "" {
			continue
		}
		if resp.StatusCode != c.status || a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id || !strings.Contains(a.Error.Message, c.message) {
			t.Errorf("%s: got HTTP %d, id %s, error %+v; want HTTP %d, id %s, code %d, a message with %q",
				c.name, resp.StatusCode, a.ID, a.Error, c.status, c.id, c.code, c.message)
		}
	}

	// Completion for a prompt the view does not have: what the server
	// answers for one it has no completions for.
	resp := s.post(`{"jsonrpc":"2.0","id":8,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"no-such-prompt"},"argument":{"name":"a","value":"x"}}}`, nil)
	a := decodeAnswer(t, "completion for an unknown prompt", resp)
	var res mcp.CompleteResult
	if a.Error != nil || json.Unmarshal(a.Result, &res) != nil || res.Completion.Values == nil || len(res.Completion.Values) != 0 {
		t.Errorf("completion for an unknown prompt: got error %+v, result %s; want an empty completion", a.Error, a.Result)
	}
	// An unknown notification is ignored, as JSON-RPC has it.
	if resp := s.post(`{"jsonrpc":"2.0","method":"notifications/whatever"}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Errorf("an unknown notification: got HTTP %d, want 202", resp.StatusCode)
	}
}
