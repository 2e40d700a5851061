//lint:file-ignore SA1019 the tests exercise logging and sampling, deprecated only from protocol 2026-07-28.

package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
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
	t.Parallel()
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
// stdio. Race-built as the tests are, it would sleep the race detector's
// second at exit: the daemon passes a server only the environment its
// configuration names, so the setting for test children is named here.
func conformanceUpstream(t *testing.T, name string) config.Server {
	return config.Server{Name: name, Transport: config.TransportStdio, Command: testpeer.ConformanceCommand(t), Enabled: true,
		Env:       map[string]string{"GORACE": testserver.RaceEnv},
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
	t.Parallel()
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

// clientCaps is what the raw clients below declare: what editors declare.
const clientCaps = `{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`

// newCapableSession opens a raw streamable-HTTP session whose client
// declares caps, and that opens no standalone event stream (as most
// clients do not before their first call): anything the gateway sends it
// must come on a request's own stream.
func newCapableSession(t *testing.T, url, caps string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	readAll(t, resp)
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: no session id (status %d)", resp.StatusCode)
	}
	if resp := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: got %d", resp.StatusCode)
	}
	return s
}

// waitListed waits until the session's tools/list has name.
func (s *rawSession) waitListed(name string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		body := readAll(s.t, s.post(`{"jsonrpc":"2.0","id":"list","method":"tools/list","params":{}}`, nil))
		if strings.Contains(body, `"name":"`+name+`"`) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("tools/list never listed %s: %s", name, body)
		}
		time.Sleep(50 * time.Millisecond) // polling the gateway's catalog: nothing to wait on
	}
}

// exchange posts a request (id "c-1") and reads its answer, as an event
// stream or JSON, to the end: every message the client sees on it, with
// the ids of the gateway's own requests replaced by "<id>" (the SDK and
// the lean path number them differently). answer gives the client's
// result for each request it gets, which it posts back.
func (s *rawSession) exchange(body string, answer func(method string, params map[string]any) any) []map[string]any {
	s.t.Helper()
	return s.exchangeID(body, `"c-1"`, answer)
}

// exchangeUntil is exchange up to the message last accepts.
func (s *rawSession) exchangeUntil(body string, last func(map[string]any) bool, answer func(method string, params map[string]any) any) []map[string]any {
	s.t.Helper()
	resp := s.post(body, nil)
	defer resp.Body.Close()
	var lines []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		lines = []string{"data: " + readAll(s.t, resp)}
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	next := func() (string, bool) {
		if len(lines) > 0 {
			l := lines[0]
			lines = lines[1:]
			return l, true
		}
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	for {
		line, ok := next()
		if !ok {
			s.t.Fatalf("the stream ended before the answer (%v); saw %v", sc.Err(), out)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			s.t.Fatalf("event data %q: %v", data, err)
		}
		id, hasID := m["id"]
		method, _ := m["method"].(string)
		switch {
		case hasID && method != "":
			params, _ := m["params"].(map[string]any)
			res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": answer(method, params)})
			if resp := s.post(string(res), nil); resp.StatusCode != http.StatusAccepted {
				s.t.Fatalf("posting the answer to %s: HTTP %d: %s", method, resp.StatusCode, readAll(s.t, resp))
			}
			m["id"] = "<id>"
		case last(m):
			return append(out, m)
		}
		out = append(out, m)
	}
}

// answerAll answers sampling, elicitation and roots requests as a client
// would.
func answerAll(method string, params map[string]any) any {
	switch method {
	case "sampling/createMessage":
		return map[string]any{"role": "assistant", "model": "test-model", "content": map[string]any{"type": "text", "text": "pong"}}
	case "elicitation/create":
		return map[string]any{"action": "accept", "content": map[string]any{"username": "ada"}}
	case "roots/list":
		return map[string]any{"roots": []any{map[string]any{"uri": "file:///work", "name": "work"}}}
	}
	return map[string]any{}
}

// TestGatewayCallStreamCarriesWhatTheServerSends: an upstream's sampling
// and elicitation requests and its log messages during a call reach the
// client on the call's own stream, before the call's result — as they do
// when the client talks to the server directly — whether the gateway
// answers the call itself (fast_path) or through the SDK, and whether the
// upstream is on stdio or streamable HTTP. The client opens no standalone
// stream, so anything sent there instead is lost (the upstream's request
// fails). Both paths give the client the same messages.
func TestGatewayCallStreamCarriesWhatTheServerSends(t *testing.T) {
	t.Parallel()
	// A stdio server is the daemon's own child; one HTTP server serves
	// the daemons of both paths.
	var httpURL string
	upstreams := map[string]func(t *testing.T) config.Server{
		"stdio": func(t *testing.T) config.Server { return conformanceUpstream(t, "conf") },
		"http": func(t *testing.T) config.Server {
			if httpURL == "" {
				httpURL = testpeer.StartConformance(t, false)
			}
			return httpUpstream("conf", httpURL)
		},
	}
	for _, up := range []string{"stdio", "http"} {
		t.Run(up, func(t *testing.T) {
			seen := map[bool]map[string][]map[string]any{}
			// One daemon serves both paths: it starts with the fast
			// path, and a reload turns it off (the gateway and the
			// upstream's lean path read fast_path at each call), so
			// the stdio server is started once.
			cfg := testConfig(upstreams[up](t))
			sdkCfg := *cfg
			sdkCfg.Gateway.DisableFastPath = true
			r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { c := sdkCfg; return &c, nil } })
			for _, fast := range []bool{true, false} {
				if !fast {
					if _, err := r.d.Reload(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				s := newCapableSession(t, r.url+"/mcp", clientCaps)
				s.waitListed("conf__test_tool_with_logging")
				if resp := s.post(`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"info"}}`, nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("logging/setLevel: HTTP %d", resp.StatusCode)
				}
				seen[fast] = map[string][]map[string]any{}
				cases := []struct{ name, args string }{
					{"test_sampling", `{"prompt":"ping"}`},
					{"test_elicitation", `{"message":"go on?"}`},
					{"test_tool_with_logging", `{}`},
				}
				if up == "stdio" {
					// The gateway's connection negotiates 2026-07-28 over
					// stdio, on which a server cannot ask its client
					// during a call (the tools say so): logs only.
					cases = cases[2:]
				}
				for _, c := range cases {
					msgs := s.exchange(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"conf__`+c.name+`","arguments":`+c.args+`}}`, answerAll)
					seen[fast][c.name] = msgs
					b, _ := json.Marshal(msgs)
					text := string(b)
					var want []string
					switch c.name {
					case "test_sampling":
						want = []string{`"method":"sampling/createMessage"`, `"text":"ping"`, `LLM response: pong`}
					case "test_elicitation":
						want = []string{`"method":"elicitation/create"`, `"message":"go on?"`, `action=accept, content=map[username:ada]`}
					case "test_tool_with_logging":
						want = []string{`"data":"Tool execution started"`, `"data":"Tool processing data"`, `"data":"Tool execution completed"`, `Tool with logging executed successfully`}
					}
					for _, w := range want {
						if !strings.Contains(text, w) {
							t.Errorf("fast_path %v, %s: the call's stream lacks %s: %s", fast, c.name, w, text)
						}
					}
					if strings.Contains(text, "io.modelcontextprotocol/") || strings.Contains(text, `"resultType"`) {
						t.Errorf("fast_path %v, %s: the client got _meta of the gateway's hop to the server: %s", fast, c.name, text)
					}
					if res, _ := msgs[len(msgs)-1]["result"].(map[string]any); res == nil || res["isError"] == true {
						t.Errorf("fast_path %v, %s: the call failed: %s", fast, c.name, text)
					}
				}
			}
			for name, msgs := range seen[true] {
				a, _ := json.Marshal(msgs)
				b, _ := json.Marshal(seen[false][name])
				if string(a) != string(b) {
					t.Errorf("%s: the client saw\n  fast path: %s\n  SDK path:  %s", name, a, b)
				}
			}
		})
	}
}

// TestGatewayStatelessCancelByID: in stateless mode a client cancels a
// call with notifications/cancelled on a request of its own (it has no
// session to send it in); the gateway finds the call among those in flight
// by its id — only among the caller's own: another user's cancellation
// with the same id leaves it running. Both with the lean path and through
// the SDK.
func TestGatewayStatelessCancelByID(t *testing.T) {
	t.Parallel()
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	release := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "hang", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, ctx.Err()
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "finished"}}}, nil
			}
		})
	url := serveHTTP(t, up, nil)
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "SDK path"}[fast], func(t *testing.T) {
			cfg := testConfig(httpUpstream("remote", url))
			cfg.Gateway.Stateless = true
			cfg.Gateway.DisableFastPath = !fast
			cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-token"}, {Name: "b", User: "bob", Secret: "bob-token"}}
			r := start(t, cfg)
			alice := http.Header{"Authorization": {"Bearer alice-token"}}
			bob := http.Header{"Authorization": {"Bearer bob-token"}}
			cs := r.connect(t, "/mcp", alice, nil)
			waitTools(t, cs, "remote__hang", has("remote__hang"))

			// call posts a call with id 9 as alice and returns its answer.
			call := func() <-chan string {
				out := make(chan string, 1)
				req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"remote__hang","arguments":{}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", alice.Get("Authorization"))
				go func() {
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						out <- err.Error()
						return
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					out <- string(b)
				}()
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatal("the call never reached the upstream")
				}
				return out
			}
			cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"changed my mind"}}`

			// Bob's cancellation names alice's id: it is not his call.
			answer := call()
			if status, body := postBody(t, r.url+"/mcp", strings.NewReader(cancel), bob); status != http.StatusAccepted {
				t.Fatalf("bob's notifications/cancelled: HTTP %d: %s", status, body)
			}
			release <- struct{}{}
			if body := <-answer; !strings.Contains(body, "finished") {
				t.Errorf("alice's call after bob's cancellation: got %q, want it finished", body)
			}

			// Alice's own cancellation ends it.
			answer = call()
			if status, body := postBody(t, r.url+"/mcp", strings.NewReader(cancel), alice); status != http.StatusAccepted {
				t.Fatalf("alice's notifications/cancelled: HTTP %d: %s", status, body)
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream's call was not cancelled")
			}
			if body := <-answer; strings.Contains(body, "finished") {
				t.Errorf("alice's cancelled call: got %q, want no result", body)
			}
			recs := r.waitRecords(t, store.CallFilter{Tool: "hang"}, func(rs []store.CallRecord) bool { return len(rs) == 2 })
			if recs[0].Status != "cancelled" {
				t.Errorf("history: got status %q for the cancelled call, want cancelled", recs[0].Status)
			}
		})
	}
}

// TestGatewayStatelessLogsOnTheCallStream: in stateless mode a client has
// no session, so no standalone stream: a log message the upstream sends
// during its call is kept only if it goes on the call's own stream, at
// the level the SDK gives such a request ("info"), as when the client
// talks to the server directly. Both with the lean path and through the
// SDK.
func TestGatewayStatelessLogsOnTheCallStream(t *testing.T) {
	t.Parallel()
	urls := map[bool]string{} // conformance servers by mode (stateless or not)
	for _, c := range []struct {
		name      string
		fast      bool
		stateless bool // the upstream's mode: without sessions it negotiates 2026-07-28
	}{
		{"fast path, upstream on 2026-07-28", true, true},
		{"SDK path, upstream on 2026-07-28", false, true},
		{"fast path, upstream with sessions", true, false},
		{"SDK path, upstream with sessions", false, false},
	} {
		fast := c.fast
		// One conformance server of each mode, for both paths: what is
		// compared is the gateway's path, not the server.
		url, ok := urls[c.stateless]
		if !ok {
			url = testpeer.StartConformance(t, c.stateless)
			urls[c.stateless] = url
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(httpUpstream("conf", url))
			cfg.Gateway.Stateless = true
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, cfg)
			s := &rawSession{t: t, url: r.url + "/mcp"}
			s.waitListed("conf__test_tool_with_logging")
			msgs := s.exchange(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"conf__test_tool_with_logging","arguments":{}}}`, answerAll)
			var logs []string
			for _, m := range msgs {
				if m["method"] == "notifications/message" {
					p, _ := m["params"].(map[string]any)
					logs = append(logs, fmt.Sprint(p["data"]))
				}
			}
			want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
			if strings.Join(logs, "|") != strings.Join(want, "|") {
				t.Errorf("log messages on the call's stream: got %q, want %q (all: %v)", logs, want, msgs)
			}
		})
	}
}

// TestGatewayPrefixNeverIntroducesItselfAsTheServer: a prefix: never view
// answers initialize as its server does — the server's name, title,
// version, icons and website, its instructions and the capabilities it
// declared — for a go-sdk client, compared with what the same client
// gets from the server directly.
func TestGatewayPrefixNeverIntroducesItselfAsTheServer(t *testing.T) {
	t.Parallel()
	up := mcp.NewServer(&mcp.Implementation{Name: "acme", Title: "Acme Tools", Version: "3.1.4", WebsiteURL: "https://acme.example",
		Icons: []mcp.Icon{{Source: "https://acme.example/icon.png", MIMEType: "image/png"}}},
		&mcp.ServerOptions{Instructions: "Use acme for anvils."})
	up.AddTool(&mcp.Tool{Name: "anvil", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped"}}}, nil
		})
	url := serveHTTP(t, up, nil)
	cfg := testConfig(httpUpstream("acme", url))
	cfg.Gateway.Views = []config.View{{Name: "acme", Servers: []string{"acme"}, Prefix: config.PrefixNever}}
	r := start(t, cfg)

	ctx := context.Background()
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	viaView := r.connect(t, "/mcp/acme", nil, nil)
	want, got := direct.InitializeResult(), viaView.InitializeResult()
	for _, c := range []struct {
		what      string
		want, got any
	}{
		{"serverInfo", want.ServerInfo, got.ServerInfo},
		{"instructions", want.Instructions, got.Instructions},
		{"capabilities", want.Capabilities, got.Capabilities},
	} {
		w, _ := json.Marshal(c.want)
		g, _ := json.Marshal(c.got)
		if string(w) != string(g) {
			t.Errorf("%s: through the view %s, directly %s", c.what, g, w)
		}
	}
	// A view of its own names still answers a call as the server does.
	waitTools(t, viaView, "anvil", has("anvil"))
	res, err := viaView.CallTool(ctx, &mcp.CallToolParams{Name: "anvil", Arguments: map[string]any{}})
	if err != nil || textOf(res) != "dropped" {
		t.Errorf("calling anvil through the view: %v, %v", res, err)
	}
}

// diffUpstream is a go-sdk server whose tools exercise what a server
// does during a call, and that records what it sees of each call: its
// arguments, _meta (the gateway's progress token as a mark) and whether
// it was cancelled.
type diffUpstream struct {
	srv     *mcp.Server
	mu      sync.Mutex
	seen    []string
	started chan struct{}
}

func newDiffUpstream() *diffUpstream {
	u := &diffUpstream{started: make(chan struct{}, 1)}
	u.srv = mcp.NewServer(&mcp.Implementation{Name: "diff", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add := func(name string, h func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error)) {
		u.srv.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			meta := map[string]any{}
			for k, v := range req.Params.Meta {
				switch k {
				case "progressToken":
					v = "<gateway's>"
				case "session_id":
					v = "<the client's session>"
				}
				meta[k] = v
			}
			b, _ := json.Marshal(map[string]any{"tool": name, "args": req.Params.Arguments, "meta": meta})
			u.mu.Lock()
			u.seen = append(u.seen, string(b))
			u.mu.Unlock()
			res, err := h(ctx, req)
			if ctx.Err() != nil {
				u.mu.Lock()
				u.seen = append(u.seen, name+": cancelled")
				u.mu.Unlock()
			}
			return res, err
		})
	}
	add("plain", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("plain"), nil })
	add("progress", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 3 {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3, Message: fmt.Sprint("step ", i+1)})
		}
		return text("3 steps"), nil
	})
	add("everything", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "diff", Data: "starting"})
		//lint:ignore SA1019 roots are what editors declare today.
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		sample, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "ping"}}}})
		if err != nil {
			return nil, err
		}
		el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"username": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "diff", Data: "done"})
		b, _ := json.Marshal([]any{roots, sample, el})
		return text(string(b)), nil
	})
	add("big", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strings.Repeat("0123456789abcdef", 1<<16)), nil
	})
	add("fails", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
	})
	add("refuses", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "not like that"}
	})
	add("hang", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		u.started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	add("asks-in-result", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, _ := json.Marshal(req.Params.InputResponses)
		return text(fmt.Sprintf("answers %s, state %q", b, req.Params.RequestState)), nil
	})
	// Not conforming: on a protocol before 2026-07-28 the server asks in
	// the result of asks-in-result's first call (inputRequests), as only
	// a 2026-07-28 server may.
	u.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || method != "tools/call" || p.Name != "asks-in-result" || p.InputResponses != nil {
				return next(ctx, method, req)
			}
			u.mu.Lock()
			u.seen = append(u.seen, "asks-in-result: asked in its result")
			u.mu.Unlock()
			return &mcp.CallToolResult{RequestState: "round-1", InputRequests: mcp.InputRequestMap{
				"roots": &mcp.ListRootsParams{},
				"name": &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"username": map[string]any{"type": "string"}}}},
			}}, nil
		}
	})
	return u
}

// take returns what the upstream has seen since the last take.
func (u *diffUpstream) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.seen
	u.seen = nil
	return out
}

// TestGatewayLeanPathsDiffer runs the same exchanges through a gateway
// with fast_path on (the gateway's and the upstream side's lean paths)
// and off (the SDK on both sides), for a client that declares roots,
// sampling and elicitation and opens no standalone stream, and compares
// what the client sees and what the upstream sees: they must be the same
// — ids of requests the gateway sends the client aside, which each path
// numbers its own way.
func TestGatewayLeanPathsDiffer(t *testing.T) {
	t.Parallel()
	type scenario struct {
		name, id, params string
		cancel           bool
	}
	scenarios := []scenario{
		{"plain call", `"s-1"`, `{"name":"diff__plain","arguments":{"a":1}}`, false},
		{"integer id", `42`, `{"name":"diff__plain","arguments":{}}`, false},
		{"negative id", `-7`, `{"name":"diff__plain","arguments":{}}`, false},
		{"largest exact id", `9007199254740991`, `{"name":"diff__plain","arguments":{}}`, false},
		{"string progress token", `"p-1"`, `{"name":"diff__progress","arguments":{},"_meta":{"progressToken":"tok"}}`, false},
		{"integer progress token", `"p-2"`, `{"name":"diff__progress","arguments":{},"_meta":{"progressToken":12}}`, false},
		{"client _meta", `"m-1"`, `{"name":"diff__plain","arguments":{},"_meta":{"trace":"t-9"}}`, false},
		{"server asks mid-call", `"e-1"`, `{"name":"diff__everything","arguments":{},"_meta":{"progressToken":"tok-e"}}`, false},
		{"large result", `"b-1"`, `{"name":"diff__big","arguments":{}}`, false},
		{"tool error", `"f-1"`, `{"name":"diff__fails","arguments":{}}`, false},
		{"protocol error", `"r-1"`, `{"name":"diff__refuses","arguments":{}}`, false},
		{"unknown tool", `"u-1"`, `{"name":"diff__nope","arguments":{}}`, false},
		{"bad arguments", `"a-1"`, `{"name":"diff__plain","arguments":[1]}`, false},
		{"cancelled", `"h-1"`, `{"name":"diff__hang","arguments":{}}`, true},
		{"input requests in a result before 2026-07-28", `"i-1"`, `{"name":"diff__asks-in-result","arguments":{}}`, false},
	}
	type observed struct{ client, upstream string }
	got := map[bool]map[string]observed{}
	for _, fast := range []bool{true, false} {
		u := newDiffUpstream()
		cfg := testConfig(httpUpstream("diff", serveHTTP(t, u.srv, nil)))
		// What is compared is the wire, not how long a call may take: on a
		// machine whose cores are starved (make test beside other work)
		// the 1 MiB result took longer than testConfig's 10 s through the
		// SDK path under -race, and one path answered with a timeout.
		cfg.Servers[0].RequestTimeout = 2 * time.Minute
		cfg.Gateway.DisableFastPath = !fast
		r := start(t, cfg)
		s := newCapableSession(t, r.url+"/mcp", clientCaps)
		s.waitListed("diff__hang")
		if resp := s.post(`{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"info"}}`, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("logging/setLevel: HTTP %d", resp.StatusCode)
		}
		u.take()
		got[fast] = map[string]observed{}
		for _, sc := range scenarios {
			body := `{"jsonrpc":"2.0","id":` + sc.id + `,"method":"tools/call","params":` + sc.params + `}`
			var msgs []map[string]any
			if sc.cancel {
				msgs = s.cancelled(body, sc.id, u.started)
			} else {
				msgs = s.exchangeID(body, sc.id, answerAll)
			}
			c, _ := json.Marshal(msgs)
			up := u.take()
			if sc.cancel {
				// The upstream hears of it a moment after the client.
				deadline := time.Now().Add(10 * time.Second)
				for !slices.Contains(up, "hang: cancelled") && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond) // the upstream's handler ends on its own goroutine
					up = append(up, u.take()...)
				}
			}
			got[fast][sc.name] = observed{string(c), strings.Join(up, "\n")}
		}
	}
	for _, sc := range scenarios {
		f, s := got[true][sc.name], got[false][sc.name]
		if f.client != s.client {
			t.Errorf("%s: the client saw\n  fast path: %.2000s\n  SDK path:  %.2000s", sc.name, f.client, s.client)
		}
		if f.upstream != s.upstream {
			t.Errorf("%s: the upstream saw\n  fast path: %s\n  SDK path:  %s", sc.name, f.upstream, s.upstream)
		}
	}
	if e := got[true]["server asks mid-call"].client; !strings.Contains(e, `file:///work`) || !strings.Contains(e, `pong`) || !strings.Contains(e, `ada`) {
		t.Errorf("server asks mid-call: the answers did not reach the server: %.2000s", e)
	}
	// The go-sdk's client answers input requests whatever the protocol
	// (roots from the configured roots: none), and asks again.
	if e := got[true]["input requests in a result before 2026-07-28"]; !strings.Contains(e.client, `elicitation/create`) ||
		!strings.Contains(e.client, `answers {\"name\":{\"action\":\"accept\",\"content\":{\"username\":\"ada\"}},\"roots\":{\"roots\":[]}}, state \"round-1\"`) ||
		strings.Contains(e.client, `inputRequests`) {
		t.Errorf("input requests in a result: the client saw %.2000s; want the elicitation asked and the answers sent again", e.client)
	}
}

// exchangeID is exchange for a request with the given id (raw JSON).
func (s *rawSession) exchangeID(body, id string, answer func(string, map[string]any) any) []map[string]any {
	s.t.Helper()
	return s.exchangeUntil(body, func(m map[string]any) bool {
		b, _ := json.Marshal(m["id"])
		_, isCall := m["method"]
		return !isCall && string(b) == id
	}, answer)
}

// cancelled posts a call, waits until the upstream has it (started), then
// cancels it with notifications/cancelled and reads its stream to the end.
func (s *rawSession) cancelled(body, id string, started <-chan struct{}) []map[string]any {
	s.t.Helper()
	// The answer's headers may come only with its first message: post
	// on the side.
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, string(b), err}
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		s.t.Fatal("the call never reached the upstream")
	}
	if r := s.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"enough"}}`, nil); r.StatusCode != http.StatusAccepted {
		s.t.Fatalf("notifications/cancelled: HTTP %d", r.StatusCode)
	}
	a := <-done
	if a.err != nil {
		s.t.Fatalf("the cancelled call: %v", a.err)
	}
	return append(sseData(s.t, a.body), map[string]any{"http-status": a.status})
}

// TestGatewayLogsOfACallStayWithIt: a log message an upstream sends during
// a client's call goes to that client only; one it sends outside any call
// goes to every client that set a level, at or above it.
func TestGatewayLogsOfACallStayWithIt(t *testing.T) {
	t.Parallel()
	after := make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "talky", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "work", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "talky", Data: "during the call"})
			ss := req.Session
			go func() {
				<-after
				_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Logger: "talky", Data: "outside any call"})
				_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "error", Logger: "talky", Data: "the end"})
			}()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	r := start(t, testConfig(httpUpstream("talky", serveHTTP(t, up, nil))))

	type client struct {
		cs   *mcp.ClientSession
		mu   sync.Mutex
		logs []string
		end  chan struct{}
	}
	connect := func(level mcp.LoggingLevel) *client {
		c := &client{end: make(chan struct{})}
		c.cs = r.connect(t, "/mcp", nil, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.logs = append(c.logs, fmt.Sprint(req.Params.Data))
				if req.Params.Data == "the end" {
					close(c.end)
				}
			},
		})
		if err := c.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	caller, other, picky := connect("info"), connect("info"), connect("error")
	waitTools(t, caller.cs, "talky__work", has("talky__work"))
	call(t, caller.cs, "talky__work", map[string]any{})
	close(after)
	want := map[*client][]string{
		caller: {"during the call", "outside any call", "the end"},
		other:  {"outside any call", "the end"},
		picky:  {"the end"},
	}
	for c, w := range want {
		select {
		case <-c.end:
		case <-time.After(10 * time.Second):
			t.Fatalf("a client never got the last log message")
		}
		c.mu.Lock()
		got := slices.Clone(c.logs)
		c.mu.Unlock()
		if !slices.Equal(got, w) {
			t.Errorf("log messages: got %q, want %q", got, w)
		}
	}
}
