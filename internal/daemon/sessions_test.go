package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// halfOpen sends initialize on /mcp and nothing more, returning the
// response's status, body and session id.
func halfOpen(t *testing.T, url string, h http.Header) (int, string, string) {
	t.Helper()
	s := &rawSession{t: t, url: url, header: h}
	resp := s.post(initializeBody("raw"), nil)
	body := readAll(t, resp)
	return resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id")
}

var sessionsGauge = regexp.MustCompile(`(?m)^switchboard_gateway_sessions\{view="default"\} (\d+)$`)

// gatewaySessions reads switchboard_gateway_sessions of the default view
// (with the gateway's first token, if it has any).
func gatewaySessions(t *testing.T, r *running) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.url+"/metrics", nil)
	if toks := r.d.cfg.Gateway.Tokens; len(toks) > 0 {
		req.Header.Set("Authorization", "Bearer "+toks[0].Secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	m := sessionsGauge.FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// waitSessions waits until the sessions gauge reads want.
func waitSessions(t *testing.T, r *running, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := gatewaySessions(t, r)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("switchboard_gateway_sessions: got %d, want %d", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openSSE opens an SSE stream on /sse with header h and returns the
// response (its endpoint event read) and the session's message endpoint.
func openSSE(t *testing.T, base string, h http.Header) (*http.Response, string) {
	t.Helper()
	// Bounded, so that a stream the gateway never ends fails the test.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		return resp, ""
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the SSE stream's endpoint event: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			resp.Body = struct {
				io.Reader
				io.Closer
			}{br, resp.Body}
			return resp, data
		}
	}
}

// rpcError decodes a JSON-RPC error answer.
func rpcError(t *testing.T, body string) (id json.RawMessage, code int, msg string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON-RPC answer: %q: %v", body, err)
	}
	return m.ID, m.Error.Code, m.Error.Message
}

// TestGatewayHalfOpenSessionsReaped: sessions that never finish their
// handshake — streamable-HTTP initialize without notifications/initialized,
// SSE streams that never post — are counted while they last and closed
// after gateway.handshake_timeout: the sessions gauge and the goroutines
// come back down, and a finished session is left alone.
func TestGatewayHalfOpenSessionsReaped(t *testing.T) {
	cfg := testConfig(okServer(t, "alpha"))
	cfg.Gateway.HandshakeTimeout = 2 * time.Second
	r := start(t, cfg)
	done := r.connect(t, "/mcp", nil, nil) // a session that finished its handshake
	waitTools(t, done, "alpha", has("alpha__echo"))
	// Each round opens n half-open streamable-HTTP sessions and 5 SSE
	// streams that never post, and waits until they are gone.
	round := func() {
		t.Helper()
		const n = 40
		var ids []string
		opened := time.Now()
		for range n {
			code, body, id := halfOpen(t, r.url+"/mcp", nil)
			if code != http.StatusOK || id == "" {
				t.Fatalf("initialize: got %d %s", code, body)
			}
			ids = append(ids, id)
		}
		var streams []*http.Response
		for range 5 {
			resp, endpoint := openSSE(t, r.url, nil)
			if endpoint == "" {
				t.Fatalf("GET /sse: got %d", resp.StatusCode)
			}
			streams = append(streams, resp)
		}
		if got := gatewaySessions(t, r); time.Since(opened) < cfg.Gateway.HandshakeTimeout && got != 1+n+5 {
			t.Errorf("sessions gauge with %d half-open sessions open: got %d, want %d", n+5, got, 1+n+5)
		}
		waitSessions(t, r, 1)
		for _, resp := range streams {
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Errorf("an SSE stream that never posted: %v, want it ended by the gateway", err)
			}
			resp.Body.Close()
		}
		for _, id := range ids[:3] {
			s := &rawSession{t: t, url: r.url + "/mcp", id: id}
			resp := s.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil)
			if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
				t.Errorf("a reaped session: got %d, want 404", resp.StatusCode)
			}
		}
		http.DefaultClient.CloseIdleConnections() // the test's own keep-alive connections
	}
	// The first round settles what the daemon starts once (the
	// upstream's listeners); the second must leave no goroutine behind.
	round()
	before := runtime.NumGoroutine()
	round()
	waitGoroutines(t, before)
	if got := textOf(call(t, done, "alpha__echo", map[string]any{"message": "still here"})); got != "still here" {
		t.Errorf("the session that finished its handshake: got %q", got)
	}
}

// TestGatewaySessionLimits: past gateway.max_sessions_per_user a user's
// new session gets HTTP 429 and a JSON-RPC error naming the key, another
// user still gets theirs, past gateway.max_sessions anyone's gets 503
// (SSE streams too), and closing a session (DELETE) frees its slot.
func TestGatewaySessionLimits(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{{Name: "a", User: "alice", Secret: "alice-token"}, {Name: "b", User: "bob", Secret: "bob-token"}}
	cfg.Gateway.MaxSessionsPerUser = 3
	cfg.Gateway.MaxSessions = 5
	cfg.Gateway.HandshakeTimeout = 0 // half-open sessions stay (the reaping is tested above)
	r := start(t, cfg)
	alice := http.Header{"Authorization": {"Bearer alice-token"}}
	bob := http.Header{"Authorization": {"Bearer bob-token"}}

	// Half-open sessions count as much as finished ones.
	aliceIDs := []string{newRawSession(t, r.url+"/mcp", alice).id}
	for range 2 {
		code, body, id := halfOpen(t, r.url+"/mcp", alice)
		if code != http.StatusOK {
			t.Fatalf("alice's initialize: got %d %s", code, body)
		}
		aliceIDs = append(aliceIDs, id)
	}
	code, body, id := halfOpen(t, r.url+"/mcp", alice)
	if code != http.StatusTooManyRequests || id != "" {
		t.Errorf("alice's 4th session: got %d (session %q), want 429 and none", code, id)
	}
	if rid, rcode, msg := rpcError(t, body); string(rid) != "1" || rcode != -32000 || !strings.Contains(msg, "gateway.max_sessions_per_user") || !strings.Contains(msg, `"alice"`) {
		t.Errorf("alice's 4th session: got id %s code %d %q, want id 1, -32000 naming gateway.max_sessions_per_user", rid, rcode, msg)
	}

	// Bob is not held up by alice's cap: his sessions open until the total.
	bobSession := newRawSession(t, r.url+"/mcp", bob)
	if code, body, _ := halfOpen(t, r.url+"/mcp", bob); code != http.StatusOK {
		t.Fatalf("bob's 2nd session beside alice's 3: got %d %s", code, body)
	}
	code, body, _ = halfOpen(t, r.url+"/mcp", bob)
	if code != http.StatusServiceUnavailable {
		t.Errorf("a 6th session: got %d %s, want 503", code, body)
	}
	if _, rcode, msg := rpcError(t, body); rcode != -32000 || !strings.Contains(msg, "gateway.max_sessions") || strings.Contains(msg, "per_user") {
		t.Errorf("a 6th session: got code %d %q, want -32000 naming gateway.max_sessions", rcode, msg)
	}
	resp, endpoint := openSSE(t, r.url, bob)
	if resp.StatusCode != http.StatusServiceUnavailable || endpoint != "" {
		t.Errorf("an SSE stream past the total: got %d, want 503", resp.StatusCode)
	} else if _, rcode, msg := rpcError(t, readAll(t, resp)); rcode != -32000 || !strings.Contains(msg, "gateway.max_sessions") {
		t.Errorf("an SSE stream past the total: got code %d %q", rcode, msg)
	}
	waitSessions(t, r, 5)

	// Closing sessions frees their slots: one of alice's, then one of bob's.
	s := &rawSession{t: t, url: r.url + "/mcp", id: aliceIDs[1], header: alice}
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header = alice.Clone()
	req.Header.Set("Mcp-Session-Id", s.id)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, dresp)
	if dresp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: got %d", dresp.StatusCode)
	}
	waitSessions(t, r, 4)
	if code, body, _ := halfOpen(t, r.url+"/mcp", alice); code != http.StatusOK {
		t.Errorf("alice after closing one of hers: got %d %s, want a session", code, body)
	}
	req, _ = http.NewRequest(http.MethodDelete, r.url+"/mcp", nil)
	req.Header = bob.Clone()
	req.Header.Set("Mcp-Session-Id", bobSession.id)
	dresp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, dresp); dresp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE of bob's session: got %d %s", dresp.StatusCode, body)
	}
	waitSessions(t, r, 4)
	resp, endpoint = openSSE(t, r.url, bob)
	if endpoint == "" {
		t.Fatalf("bob's SSE stream after closing a session: got %d", resp.StatusCode)
	}
	waitSessions(t, r, 5)
	resp.Body.Close() // the stream's end ends its session
	waitSessions(t, r, 4)
}

// TestGatewaySSEIdleOut: an SSE session that finished its handshake but
// posts nothing for gateway.session_timeout is closed (its stream ends),
// as a streamable-HTTP one is.
func TestGatewaySSEIdleOut(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.SessionTimeout = 500 * time.Millisecond
	r := start(t, cfg)
	c := mcp.NewClient(&mcp.Implementation{Name: "sse", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: r.url + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "alpha over SSE", has("alpha__echo"))
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("an idle SSE session was never closed")
	}
	waitSessions(t, r, 0)
}
