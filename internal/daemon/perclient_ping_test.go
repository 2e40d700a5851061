package daemon

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// pingPeer is a go-sdk server that counts the pings it is sent (refusing
// them while refuse is set), pings its client from its tool
// "ping-client" (the result says how the client answered), and keeps the
// session of the last call of "remember", to ping that client outside a
// call.
type pingPeer struct {
	pinged atomic.Int64
	refuse atomic.Bool

	mu   sync.Mutex
	last *mcp.ServerSession
}

const pingRefusal = "not answering pings now"

func (p *pingPeer) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "pinger", Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				p.pinged.Add(1)
				if p.refuse.Load() {
					return nil, &jsonrpc.Error{Code: -32001, Message: pingRefusal}
				}
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "ping-client", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := "answered"
			if err := req.Session.Ping(ctx, nil); err != nil {
				text = "failed: " + err.Error()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "remember", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.mu.Lock()
			p.last = req.Session
			p.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	return s
}

func (p *pingPeer) remembered() *mcp.ServerSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// pingView is a config whose default view is server alone, prefix: never,
// with a session of its own per client.
func pingView(url string, fastPath bool) *config.Config {
	srv := httpUpstream("pinger", url)
	srv.Session, srv.NoIdentityMeta = config.SessionPerClient, true
	cfg := testConfig(srv)
	cfg.Gateway.DisableFastPath = !fastPath
	cfg.Gateway.Views = []config.View{{Name: config.DefaultViewName, Servers: []string{"pinger"}, Prefix: config.PrefixNever}}
	return cfg
}

// pingOutcome is what one client saw of pings both ways.
type pingOutcome struct {
	ServerAsked   int64  // pings the server got for the client's one ping
	Refused       string // the client's ping while the server refuses
	DuringCall    string // the server's ping of the client during a call
	ClientAsked   int64  // pings the client got, both of the server's included
	OutsideACall  error  // the server's ping of the client outside a call
	ServerAskedOK bool   // the client's ping succeeded
}

// TestPrefixNeverPerClientPings (issue 17): on a prefix: never view of
// one per_client server, pings travel as directly. A client's ping is
// answered by the server on the client's own upstream session (the
// server's error reaches the client as the server gave it), and the
// server's ping of its client reaches the client — during a call on the
// call's stream, outside one on the client's standalone stream — and
// the server gets the client's answer. go-sdk clients over streamable
// HTTP (lean path and SDK path), legacy SSE and serve --stdio, and the
// TypeScript SDK's client, each compared with the same client directly.
func TestPrefixNeverPerClientPings(t *testing.T) {
	peer := &pingPeer{}
	url := serveHTTP(t, peer.server(), nil)
	lean, sdkPath := start(t, pingView(url, true)), start(t, pingView(url, false))
	waitReady(t, lean)
	waitReady(t, sdkPath)

	t.Run("go-sdk client", func(t *testing.T) {
		sides := []struct {
			name string
			tr   func() mcp.Transport
		}{
			{"directly", func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }},
			{"streamable HTTP, lean path", func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: lean.url + "/mcp"} }},
			{"streamable HTTP, SDK path", func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: sdkPath.url + "/mcp"} }},
			{"legacy SSE", func() mcp.Transport { return &mcp.SSEClientTransport{Endpoint: lean.url + "/sse"} }},
			{"serve --stdio", func() mcp.Transport { return serveStdio(t, lean) }},
		}
		var want pingOutcome
		for i, s := range sides {
			got := pingWithGoClient(t, peer, s.tr())
			if i == 0 {
				want = got
				if !got.ServerAskedOK || got.ServerAsked != 1 || got.DuringCall != "answered" || got.ClientAsked != 2 || got.OutsideACall != nil {
					t.Fatalf("directly: %+v; want the server asked once, the client asked twice, each answered", got)
				}
				if !strings.Contains(got.Refused, pingRefusal) {
					t.Fatalf("directly, the refused ping: %q; want the server's %q", got.Refused, pingRefusal)
				}
				continue
			}
			if got != want {
				t.Errorf("%s: %+v\ndirectly: %+v", s.name, got, want)
			}
		}
	})

	t.Run("client with no stream open", func(t *testing.T) {
		// A client that opened no standalone stream is pinged during a
		// call on the call's own stream (there is no other), and cannot
		// be pinged outside a call: the server gets an error, as
		// directly.
		for _, side := range []struct{ name, url string }{
			{"directly", url},
			{"streamable HTTP, lean path", lean.url + "/mcp"},
			{"streamable HTTP, SDK path", sdkPath.url + "/mcp"},
		} {
			s := newRawSession(t, side.url, nil)
			var asked []string
			msgs := s.exchange(`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"ping-client","arguments":{}}}`,
				func(method string, _ map[string]any) any {
					asked = append(asked, method)
					return map[string]any{}
				})
			res, _ := msgs[len(msgs)-1]["result"].(map[string]any)
			if got := answerText(res); got != "answered" || !slices.Equal(asked, []string{"ping"}) {
				t.Errorf("%s: the server's ping during a call: asked %v on the call's stream, the server saw %q; want one ping there, answered", side.name, asked, got)
			}
			readAll(t, s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{}}}`, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := peer.remembered().Ping(ctx, nil)
			late := ctx.Err()
			cancel()
			if err == nil || late != nil {
				t.Errorf("%s: the server's ping of a client with no stream open: %v; want an error at once", side.name, err)
			}
		}
	})

	t.Run("TypeScript client", func(t *testing.T) {
		targets := []struct {
			name   string
			target testpeer.TSTarget
		}{
			{"directly", testpeer.TSTarget{Transport: "http", URL: url}},
			{"streamable HTTP, lean path", testpeer.TSTarget{Transport: "http", URL: lean.url + "/mcp"}},
			{"streamable HTTP, SDK path", testpeer.TSTarget{Transport: "http", URL: sdkPath.url + "/mcp"}},
			{"legacy SSE", testpeer.TSTarget{Transport: "sse", URL: lean.url + "/sse"}},
		}
		for _, tg := range targets {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			before := peer.pinged.Load()
			lines, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
				Target: tg.target,
				Steps:  []testpeer.TSStep{{"op": "ping"}, {"op": "call", "name": "ping-client"}},
			})
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			if len(lines) != 4 || !lines[1].OK() || !lines[2].OK() {
				t.Fatalf("%s: %v", tg.name, lines)
			}
			if n := peer.pinged.Load() - before; n != 1 {
				t.Errorf("%s: the server was pinged %d times for the client's one ping; want 1, as directly", tg.name, n)
			}
			if got := lines[2].Text(); got != "answered" {
				t.Errorf("%s: the server's ping of the client: %q; want %q, as directly", tg.name, got, "answered")
			}
		}
	})
}

// pingProtocol is protocol 2025-11-25, which has ping (2026-07-28, the
// go-sdk client's default, has none).
var pingProtocol = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// pingWithGoClient connects a go-sdk client (protocol 2025-11-25, which
// has ping) over tr and pings both ways.
func pingWithGoClient(t *testing.T, peer *pingPeer, tr mcp.Transport) pingOutcome {
	t.Helper()
	var asked atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				asked.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, pingProtocol)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	var out pingOutcome
	before := peer.pinged.Load()
	out.ServerAskedOK = cs.Ping(ctx, nil) == nil
	out.ServerAsked = peer.pinged.Load() - before
	peer.refuse.Store(true)
	err = cs.Ping(ctx, nil)
	peer.refuse.Store(false)
	if err == nil {
		out.Refused = "answered"
	} else {
		out.Refused = err.Error()
	}
	out.DuringCall = textOf(call(t, cs, "ping-client", map[string]any{}))
	call(t, cs, "remember", map[string]any{})
	ss := peer.remembered()
	// Outside a call the ping goes on the client's standalone stream,
	// which the client opens after initialize: wait for it.
	waitFor(t, "the server's ping of its client outside a call answered", func() bool {
		out.OutsideACall = ss.Ping(ctx, nil)
		return out.OutsideACall == nil
	})
	out.ClientAsked = asked.Load()
	return out
}

// TestPrefixNeverPerClientPingUnreachable: a client's ping on a view
// that is its per_client server, once the server cannot be reached, gets
// an error saying so — never a success the server did not give.
func TestPrefixNeverPerClientPingUnreachable(t *testing.T) {
	peer := &pingPeer{}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return peer.server() }, nil))
	t.Cleanup(hs.Close)
	r := start(t, pingView(hs.URL, true))
	waitReady(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp"}, pingProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping while the server is up: %v", err)
	}
	hs.CloseClientConnections()
	hs.Close()
	err = cs.Ping(ctx, nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError || !strings.Contains(werr.Message, "pinger") {
		t.Fatalf("ping once the server is gone: %v; want a JSON-RPC internal error naming the server", err)
	}
}
