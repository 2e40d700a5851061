package gateway

import (
	"crypto/rand"
	"fmt"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// sseHandler serves the legacy SSE transport of one view as the SDK's
// SSEHandler does — a GET opens a stream and its session, whose messages
// are posted to ?sessionid=ID — over the SDK's own SSEServerTransport.
// It exists because the SDK's handler connects each session's transport
// itself, which leaves no way to wrap it: the gateway wraps it so that
// the session takes tasks (tasks_conn.go), and names the session itself
// (serveSSE's session is known by that id from the start).
type sseHandler struct {
	g         *Gateway
	serverFor func(*http.Request) *viewServer

	mu       sync.Mutex
	sessions map[string]*sseSession
}

// sseSession is one open SSE stream.
type sseSession struct {
	t  *mcp.SSEServerTransport
	tt *taskTransport
}

func newSSEHandler(g *Gateway, serverFor func(*http.Request) *viewServer) *sseHandler {
	return &sseHandler{g: g, serverFor: serverFor, sessions: map[string]*sseSession{}}
}

// session returns the open session id, or nil.
func (h *sseHandler) session(id string) *sseSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if !jsonContent(r) {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
			return
		}
		id := r.URL.Query().Get("sessionid")
		if id == "" {
			http.Error(w, "sessionid must be provided", http.StatusBadRequest)
			return
		}
		s := h.session(id)
		if s == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		s.t.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	vs := h.serverFor(r)
	if vs == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	id := rand.Text()
	endpoint, err := r.URL.Parse("?sessionid=" + id)
	if err != nil {
		http.Error(w, "internal error: failed to create endpoint", http.StatusInternalServerError)
		return
	}
	if cs := sessionOf(r.Context()); cs != nil {
		h.g.setSSEID(cs, id)
	}
	t := &mcp.SSEServerTransport{Endpoint: endpoint.RequestURI(), Response: w, MaxRequestBodyBytes: config.MaxMaxRequestBytes}
	s := &sseSession{t: t, tt: h.g.newTaskTransport(t, vs, id)}
	h.mu.Lock()
	h.sessions[id] = s
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	ss, err := vs.srv.Connect(r.Context(), s.tt, nil)
	if err != nil {
		http.Error(w, fmt.Sprintf("connection failed: %v", err), http.StatusInternalServerError)
		return
	}
	s.tt.attach(ss)
	defer ss.Close() // the session ends with the stream's request
	select {
	case <-r.Context().Done():
	case <-s.tt.closedChan():
	}
}

// task answers m, posted to the SSE session id, when it is a task request
// the session's connection answers (tasks_conn.go), and reports whether
// it took it; its answer comes on the session's stream.
func (h *sseHandler) task(id string, r *http.Request, m *message) bool {
	if m.batch || !m.isCall() || !isTaskMessage(m.method, m.Params) || !jsonContent(r) {
		return false
	}
	s := h.session(id)
	if s == nil {
		return false
	}
	s.tt.conn.serve(m)
	return true
}

// jsonContent reports whether r's body is declared as JSON.
func jsonContent(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}
