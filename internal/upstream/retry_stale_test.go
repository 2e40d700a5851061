package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// staleGate is a streamable-HTTP server that restarts in place (a new
// go-sdk server that knows none of the old sessions) and, after a
// restart, behaves as a proxy in front of a restarting server may: the
// first call on the old session has its connection closed unanswered,
// and a ping on the old session is answered (404) only once a call on
// that session arrives, or after holdFor. It counts the calls that
// arrive on a session the current server never issued.
type staleGate struct {
	hs      *httptest.Server
	holdFor time.Duration

	mu       sync.Mutex
	gen      int
	handler  http.Handler
	sessions map[string]bool // issued by the current generation
	dropped  bool            // the first stale call of this generation was dropped
	release  chan struct{}   // closed when a stale call arrives

	staleCalls atomic.Int32
}

func newStaleGate(t *testing.T) *staleGate {
	g := &staleGate{holdFor: time.Second}
	g.restart()
	g.hs = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.hs.Close)
	return g
}

func (g *staleGate) url() string { return g.hs.URL + "/mcp" }

func (g *staleGate) restart() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen++
	gen := g.gen
	s := mcp.NewServer(&mcp.Implementation{Name: "stale-gate", Version: fmt.Sprint(gen)}, nil)
	s.AddTool(&mcp.Tool{Name: "gen", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(gen)}}}, nil
		})
	g.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	g.sessions = map[string]bool{}
	g.dropped = false
	g.release = make(chan struct{})
}

func (g *staleGate) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.Error(w, "no standalone stream", http.StatusMethodNotAllowed) // only requests meet the restart
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct{ Method string }
	_ = json.Unmarshal(body, &msg)
	sid := r.Header.Get("Mcp-Session-Id")
	g.mu.Lock()
	h, release := g.handler, g.release
	stale := sid != "" && !g.sessions[sid]
	drop := stale && msg.Method == "tools/call" && !g.dropped
	if drop {
		g.dropped = true
	}
	g.mu.Unlock()
	switch {
	case drop:
		// The connection closes before an answer.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	case stale && msg.Method == "tools/call":
		g.staleCalls.Add(1)
		g.mu.Lock()
		select {
		case <-g.release:
		default:
			close(g.release)
		}
		g.mu.Unlock()
	case stale && msg.Method == "ping":
		select {
		case <-release:
		case <-time.After(g.holdFor):
		case <-r.Context().Done():
		}
	}
	rec := &sessionRecorder{ResponseWriter: w}
	h.ServeHTTP(rec, r)
	if id := rec.Header().Get("Mcp-Session-Id"); id != "" {
		g.mu.Lock()
		if g.handler == h {
			g.sessions[id] = true
		}
		g.mu.Unlock()
	}
}

// sessionRecorder lets serve read the session ID the server issues.
type sessionRecorder struct{ http.ResponseWriter }

func (s *sessionRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestRetryWaitsForTheRenewedSession: a read-only call whose connection
// closed unanswered after the server restarted is retried only once the
// supervisor has checked the connection and started a new session: the
// retry never meets the old session again, so one retry is enough.
func TestRetryWaitsForTheRenewedSession(t *testing.T) {
	g := newStaleGate(t)
	srv := config.Server{Name: "restartable", Transport: config.TransportHTTP, URL: g.url(), TerminateOnClose: true,
		Enabled: true, LoadTools: true, MaxRetries: 1}
	eng, _, _ := engineFor(t, srv)
	for i := range 2 { // two restarts in quick succession
		g.restart()
		res, err := eng.Call(context.Background(), toolcall.Request{Server: "restartable", Tool: "gen", Source: "test"})
		if err != nil {
			t.Fatalf("call after restart %d: %v; want it retried once on the new session", i+1, err)
		}
		if got, want := res.Content[0].(*mcp.TextContent).Text, fmt.Sprint(i+2); got != want || res.Retries != 1 {
			t.Errorf("call after restart %d: got %q after %d retries, want %q after 1", i+1, got, res.Retries, want)
		}
		if n := g.staleCalls.Load(); n != 0 {
			t.Errorf("after restart %d: %d calls were sent again on the old session, want none", i+1, n)
		}
	}
}
