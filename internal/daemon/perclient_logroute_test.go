//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; clients and servers use it today.

package daemon

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file checks where a log message the gateway's shared upstream
// session sends goes where the transport does not say which call it
// belongs to (legacy SSE, WebSocket: one stream). Of a per_client or
// per_user server it reaches no client: not a call a client makes on its
// own upstream session — that session's server never saw the client
// there — nor, outside any call, a client that set a level: each client
// has (or will have) its own session of that server, and directly what a
// server logs on another of its sessions never comes on a client's
// streams. Of a shared server it goes, as a message outside any call, to
// the clients that set a level (TestSharedSessionRequestsStayOffOwnedCalls
// checks the same of the shared session's requests).

// sharedLog is the data of the log message sessionLogger sends on the
// gateway's shared session; markerLog that of the one it sends after it
// on each other session of the server but the caller's.
const (
	sharedLog = "logged on the shared session"
	markerLog = "marker on a client's own session"
)

// sessionLogger is a go-sdk server whose tool "logother" logs sharedLog
// at info, outside any request, on the first of the server's sessions to
// send it a message — through a gateway, its shared session, opened for
// the catalog before any client's — then pings that session, and then
// logs markerLog the same way on every other session of the server but
// the caller's (through a gateway with per_client or per_user, a
// client's own); it first waits until each of those sessions has set a
// log level (the go-sdk drops a message for a session that set none),
// and returns "logged on the shared session, marked N".
//
// Once the ping is answered, the client of the shared session has
// handled sharedLog: the go-sdk's client reads a session's messages in
// order, on one goroutine, and queues every request and notification
// for one handling goroutine (v1.8.0 internal/jsonrpc2/conn.go:
// readIncoming, acceptRequest, handleAsync), which starts the next only
// when the handler of the one before has returned or released it;
// ClientSession.handle releases requests (jsonrpc2.Async), never
// notifications, and callLoggingHandler calls the LoggingMessageHandler
// (the gateway's Log sink) in place, so that handler has returned before
// the ping's begins.
type sessionLogger struct {
	*mcp.Server
	mu      sync.Mutex
	order   []*mcp.ServerSession // as each sent its first message
	leveled map[*mcp.ServerSession]bool
	changed chan struct{} // closed, and replaced, as a message comes
}

func newSessionLogger() *sessionLogger {
	l := &sessionLogger{leveled: map[*mcp.ServerSession]bool{}, changed: make(chan struct{})}
	// A session logs outside any request only at the level it set:
	// before protocol 2026-07-28, where a client sends one with each
	// request instead, and the SDK's server drops a message outside a
	// request for a session that set none (a per_user session, which does
	// not take its client's version, would negotiate it).
	sessionful := slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })
	l.Server = mcp.NewServer(&mcp.Implementation{Name: "logs-other", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: sessionful})
	l.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				l.mu.Lock()
				if !slices.Contains(l.order, ss) {
					l.order = append(l.order, ss)
				}
				if method == "logging/setLevel" && err == nil {
					l.leveled[ss] = true
				}
				close(l.changed)
				l.changed = make(chan struct{})
				l.mu.Unlock()
			}
			return res, err
		}
	})
	mcp.AddTool(l.Server, &mcp.Tool{Name: "logother"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		// Not with the call's context, whose values would tie the
		// messages to the call.
		octx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		var shared *mcp.ServerSession
		var others []*mcp.ServerSession
		for {
			l.mu.Lock()
			ready := len(l.order) > 0 && l.leveled[l.order[0]]
			others = others[:0]
			for i, ss := range l.order {
				if i > 0 && ss != req.Session {
					others = append(others, ss)
					ready = ready && l.leveled[ss]
				}
			}
			if ready {
				shared = l.order[0]
			}
			wait := l.changed
			l.mu.Unlock()
			if ready {
				break
			}
			select {
			case <-wait:
			case <-octx.Done():
				return nil, nil, fmt.Errorf("the server's sessions but the caller's did not all set a log level: %w", octx.Err())
			}
		}
		if err := shared.Log(octx, &mcp.LoggingMessageParams{Level: "info", Data: sharedLog}); err != nil {
			return nil, nil, fmt.Errorf("logging on the shared session: %w", err)
		}
		if err := shared.Ping(octx, nil); err != nil {
			return nil, nil, fmt.Errorf("pinging the shared session: %w", err)
		}
		for _, o := range others {
			if err := o.Log(octx, &mcp.LoggingMessageParams{Level: "info", Data: markerLog}); err != nil {
				return nil, nil, fmt.Errorf("logging the marker: %w", err)
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("logged on the shared session, marked %d", len(others))}}}, nil, nil
	})
	return l
}

// waitFirst waits until the server has a session.
func (l *sessionLogger) waitFirst(t *testing.T) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		l.mu.Lock()
		n, wait := len(l.order), l.changed
		l.mu.Unlock()
		if n > 0 {
			return
		}
		select {
		case <-wait:
		case <-deadline:
			t.Fatal("the gateway opened no session of the server within 20s")
		}
	}
}

// TestSharedSessionLogsStayOffOwnedCalls: a log message the shared
// upstream session sends over legacy SSE or WebSocket, outside any
// request, while a client's call runs on its own per_client or per_user
// session, does not come on that call's stream (the client set a log
// level, so the call would take a message of its server's), nor on the
// standalone stream of a client (another user's) that set a level and
// made no call — directly neither would see what the server logged on
// another session. Of a shared server the message reaches that client's
// standalone stream, as one outside any call (the caller, which set no
// level, takes none). With fast_path on and off.
//
// The absence is proved by the marker, which the server sends on the
// watching client's own session after the shared session's ping is
// answered, by which time the gateway has handled sharedLog (see
// sessionLogger). Gateway.log hands a message outside any call to the
// client sessions it goes to on one queue (g.logTail: each hand-off
// starts once the one before has sent all it had), and the marker, of
// the watcher's own session outside its calls, goes through that queue
// after anything sharedLog would have put in it; each is sent with
// ServerSession.Log (or, per_client, a notification through the same
// session), and the go-sdk's jsonrpc2 Connection.Notify calls the
// transport's Write in place, whose streamableServerConn.Write writes
// and flushes a message sent with a context of no request on the
// session's standalone stream (stream.deliverLocked, writeEvent: under
// the stream's lock) before it returns (v1.8.0 mcp/streamable.go). So a
// sharedLog sent to the watcher would be on its standalone stream, one
// HTTP response read in order, before the marker.
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
	modes := []config.SessionMode{config.SessionPerClient, config.SessionPerUser, config.SessionShared}
	setLevel := func(s *rawSession) {
		if resp := readAll(t, s.post(`{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"debug"}}`, nil)); !strings.Contains(resp, `"result"`) {
			t.Fatalf("logging/setLevel: %s", resp)
		}
	}
	// Two users, so that the watcher's per_user session is not the
	// caller's.
	ada := http.Header{"Authorization": {"Bearer ada-secret"}}
	bo := http.Header{"Authorization": {"Bearer bo-secret"}}
	for _, fast := range []bool{true, false} {
		var servers []config.Server
		var views []config.View
		loggers := map[string]*sessionLogger{}
		for _, tr := range transports {
			for _, mode := range modes {
				name := tr.name + "-" + string(mode)
				l := newSessionLogger()
				loggers[name] = l
				s := httpUpstream(name, tr.serve(l.Server))
				s.Transport, s.TerminateOnClose = tr.transport, false
				s.Session, s.NoIdentityMeta, s.RequestTimeout = mode, true, 30*time.Second
				servers = append(servers, s)
				views = append(views, config.View{Name: name, Servers: []string{name}, Prefix: config.PrefixNever})
			}
		}
		cfg := testConfig(servers...)
		cfg.Gateway.DisableFastPath = !fast
		cfg.Gateway.Views = views
		cfg.Gateway.Tokens = []config.Token{{Name: "ada", User: "ada", Secret: "ada-secret"}, {Name: "bo", User: "bo", Secret: "bo-secret"}}
		r := start(t, cfg)
		for _, view := range views {
			where := fmt.Sprintf("fast_path %v, view %s", fast, view.Name)
			url := r.url + "/mcp/" + view.Name
			owned := !strings.HasSuffix(view.Name, string(config.SessionShared))
			loggers[view.Name].waitFirst(t) // the gateway's shared session is the server's first

			watcher := newRawSession(t, url, bo)
			watcher.waitListed("logother") // opens the watcher's own upstream session (per_client, per_user)
			setLevel(watcher)
			events := watcher.openStandalone()
			caller := newRawSession(t, url, ada)
			caller.waitListed("logother") // likewise the caller's
			if owned {
				setLevel(caller)
			}
			msgs := caller.exchangeID(`{"jsonrpc":"2.0","id":"A","method":"tools/call","params":{"name":"logother","arguments":{}}}`, `"A"`, answerAll)
			res, rerr := answerTo(t, msgs, `"A"`)
			want := "logged on the shared session, marked 0"
			if owned {
				want = "logged on the shared session, marked 1" // the watcher's own session
			}
			if got := answerText(res); rerr != nil || got != want {
				t.Fatalf("%s: tools/call logother: %v %v; want %q", where, res, rerr, want)
			}
			if !owned {
				if !events.waitFor(sharedLog, 20*time.Second) {
					t.Errorf("%s: a client that set a level did not get the shared server's log message outside any call on its standalone stream within 20s:\n%s", where, events)
				}
				continue
			}
			for _, m := range msgs {
				if m["method"] == "notifications/message" {
					t.Errorf("%s: the caller's call stream carries the shared session's log message %v; directly a client never sees what its server logs on another session", where, m["params"])
				}
			}
			if !events.waitFor(markerLog, 20*time.Second) {
				t.Fatalf("%s: the watcher's own session's marker did not reach its standalone stream within 20s:\n%s", where, events)
			}
			if strings.Contains(events.String(), sharedLog) {
				t.Errorf("%s: a client that set a level and made no call got the shared session's log message on its standalone stream; directly it would never see what its server logged on another session:\n%s", where, events)
			}
		}
	}
}
