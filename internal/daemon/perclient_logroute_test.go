//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file checks that a log message the gateway's shared upstream
// session sends where the transport does not say which call it belongs
// to (legacy SSE, WebSocket: one stream) does not reach a call a client
// makes on its own upstream session (per_client, per_user) — that
// session's server never saw the client there; directly, what a server
// logs on another of its sessions never comes on this client's streams —
// and goes, as a message outside any call, to the clients that set a
// level (TestSharedSessionRequestsStayOffOwnedCalls checks the same of
// the shared session's requests).

// sharedLog is the data of the log message otherLogger sends.
const sharedLog = "logged on the other session"

// otherLogger is a go-sdk server whose tool "logother" logs sharedLog at
// info on every other session the server has that set a log level —
// through a gateway, its shared session; it waits until one has —
// outside any request, then pings that session, and returns "logged on
// N". Once the ping is answered, the client of that session has handled
// the log message: the go-sdk's client reads a session's messages in
// order, on one goroutine, and queues every request and notification
// for one handling goroutine (v1.8.0 internal/jsonrpc2/conn.go:
// readIncoming, acceptRequest, handleAsync), which starts the next only
// when the handler of the one before has returned or released it;
// ClientSession.handle releases requests (jsonrpc2.Async), never
// notifications, and callLoggingHandler calls the LoggingMessageHandler
// (the gateway's Log sink) in place, so that handler has returned before
// the ping's begins.
func otherLogger() *mcp.Server {
	var mu sync.Mutex
	leveled := map[*mcp.ServerSession]bool{}
	changed := make(chan struct{}) // closed, and replaced, when a session sets a level
	s := mcp.NewServer(&mcp.Implementation{Name: "logs-other", Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && method == "logging/setLevel" && err == nil {
				mu.Lock()
				leveled[ss] = true
				close(changed)
				changed = make(chan struct{})
				mu.Unlock()
			}
			return res, err
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "logother"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		// Not with the call's context, whose values would tie the
		// messages to the call: this session's, not the other's.
		octx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		var others []*mcp.ServerSession
		for {
			mu.Lock()
			for ss := range leveled {
				if ss != req.Session {
					others = append(others, ss)
				}
			}
			wait := changed
			mu.Unlock()
			if len(others) > 0 {
				break
			}
			select {
			case <-wait:
			case <-octx.Done():
				return nil, nil, fmt.Errorf("no other session of the server set a log level: %w", octx.Err())
			}
		}
		for _, o := range others {
			if err := o.Log(octx, &mcp.LoggingMessageParams{Level: "info", Data: sharedLog}); err != nil {
				return nil, nil, fmt.Errorf("logging on the other session: %w", err)
			}
			if err := o.Ping(octx, nil); err != nil {
				return nil, nil, fmt.Errorf("pinging the other session: %w", err)
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("logged on %d", len(others))}}}, nil, nil
	})
	return s
}

// TestSharedSessionLogsStayOffOwnedCalls: a log message the shared
// upstream session sends over legacy SSE or WebSocket while a client's
// call runs on its own per_client or per_user session does not come on
// that call's stream (the client set a log level, so the call would
// take a message of its server's); a client that set a level and makes
// no call gets it on its standalone stream, as a message outside any
// call. With fast_path on and off.
func TestSharedSessionLogsStayOffOwnedCalls(t *testing.T) {
	t.Parallel()
	transports := []struct {
		name      string
		transport config.Transport
		serve     func(*mcp.Server) string
	}{
		{"sse", config.TransportSSE, func(s *mcp.Server) string {
			hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(hs.Close) // after the daemon's, which holds the stream open
			return hs.URL
		}},
		{"websocket", config.TransportWebSocket, func(s *mcp.Server) string {
			hs := httptest.NewServer(upstream.NewWebSocketHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(hs.Close)
			return "ws" + strings.TrimPrefix(hs.URL, "http")
		}},
	}
	setLevel := func(s *rawSession) {
		if resp := readAll(t, s.post(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}}`, nil)); !strings.Contains(resp, `"result"`) {
			t.Fatalf("logging/setLevel: %s", resp)
		}
	}
	for _, fast := range []bool{true, false} {
		var servers []config.Server
		var views []config.View
		for _, tr := range transports {
			for _, mode := range []config.SessionMode{config.SessionPerClient, config.SessionPerUser} {
				name := tr.name + "-" + string(mode)
				s := httpUpstream(name, tr.serve(otherLogger()))
				s.Transport, s.TerminateOnClose = tr.transport, false
				s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
				servers = append(servers, s)
				views = append(views, config.View{Name: name, Servers: []string{name}, Prefix: config.PrefixNever})
			}
		}
		cfg := testConfig(servers...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		r := start(t, cfg)
		for _, view := range views {
			where := fmt.Sprintf("fast_path %v, view %s", fast, view.Name)
			url := r.url + "/mcp/" + view.Name
			watcher := newCapableSession(t, url, clientCaps)
			setLevel(watcher)
			events := standalone(t, watcher)
			caller := newCapableSession(t, url, clientCaps)
			caller.waitListed("logother") // opens the caller's own upstream session
			setLevel(caller)
			msgs := caller.exchangeID(`{"jsonrpc":"2.0","id":"A","method":"tools/call","params":{"name":"logother","arguments":{}}}`, `"A"`, answerAll)
			res, rerr := answerTo(t, msgs, `"A"`)
			if rerr != nil || answerText(res) != "logged on 1" {
				t.Fatalf("%s: tools/call logother: %v %v; want the server to have logged on its one other session (the gateway's shared one)", where, res, rerr)
			}
			for _, m := range msgs {
				if m["method"] == "notifications/message" {
					t.Errorf("%s: the caller's call stream carries the shared session's log message %v; directly a client never sees what its server logs on another session", where, m["params"])
				}
			}
			deadline := time.After(20 * time.Second)
			for got := false; !got; {
				select {
				case m, ok := <-events:
					if !ok {
						t.Fatalf("%s: the watcher's standalone stream ended before the shared session's log message came", where)
					}
					p, _ := m["params"].(map[string]any)
					got = m["method"] == "notifications/message" && p["data"] == sharedLog
				case <-deadline:
					t.Fatalf("%s: a client that set a level and made no call did not get the shared session's log message on its standalone stream within 20s", where)
				}
			}
		}
	}
}
