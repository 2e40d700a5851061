package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file sends a notification to one client session: notifySession.
// The go-sdk cannot: its ServerSession sends only the methods it knows
// (its sending handler refuses any other: notifications/tasks/status),
// and a Server's own notifications (list_changed) go to every session. So
// the gateway writes the message on the session's stream itself:
//
//   - a session served over one connection (serve --stdio, a legacy SSE
//     stream) through that connection, which the gateway wraps anyway
//     (taskConn, tasks_conn.go): the connection's Write is safe beside
//     the SDK's;
//   - a streamable-HTTP session on its standalone event stream (the
//     client's GET), when one is open: the gateway holds the stream's
//     response writer and writes whole events between the SDK's (the SDK
//     writes each event at once). With no standalone stream open, the
//     session cannot be reached outside a request, and notifySession
//     reports false.
//
// A stateless gateway has no sessions to notify.

// sessionStreams holds the streams notifySession writes on.
type sessionStreams struct {
	conns      sync.Map // *mcp.ServerSession -> *taskConn
	standalone sync.Map // Mcp-Session-Id -> *standaloneStream
	posts      sync.Map // request key -> *postStream (elicitasgiven.go)
}

// notifySession sends the notification method with params to the client
// of ss alone, on its session's own stream, and reports whether it went
// out.
func (g *Gateway) notifySession(ss *mcp.ServerSession, method string, params any) bool {
	msg, err := notification(method, params)
	if err != nil {
		return false
	}
	if c, ok := g.streams.conns.Load(ss); ok {
		return c.(*taskConn).notify(msg)
	}
	if id := ss.ID(); id != "" {
		if s, ok := g.streams.standalone.Load(id); ok {
			return s.(*standaloneStream).event(msg)
		}
	}
	return false
}

// notifyCall sends the notification method with params to c's client on
// c's own stream — a call's or a task request's, as the server's SDK
// would send what it sends on the request's stream — and reports whether
// it went out (not once the request has its answer).
func (g *Gateway) notifyCall(c *clientCall, method string, params any) bool {
	msg, err := notification(method, params)
	if err != nil {
		return false
	}
	switch {
	case c.stream != nil: // a request the gateway answers itself
		return c.stream.write(msg)
	case c.post != nil: // a call the SDK answers over streamable HTTP
		return c.post.event(msg)
	case c.ss != nil: // a session over one connection: its one stream
		if conn, ok := g.streams.conns.Load(c.ss); ok {
			return conn.(*taskConn).notify(msg)
		}
	}
	return false
}

// notification is the JSON-RPC notification method with params.
func notification(method string, params any) ([]byte, error) {
	return marshalNoEscape(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
}

// standaloneStream is the response writer of a streamable-HTTP session's
// standalone stream (GET) while the SDK serves it: the SDK's events and
// the gateway's go through it one whole event at a time.
type standaloneStream struct {
	lockedWriter
	g   *Gateway
	sid string

	begun bool // the SDK answered with an event stream
	done  bool // the SDK's handler returned: nothing more
}

// lockedWriter is a response that the SDK's handler and the gateway both
// write (a call's stream, a session's standalone stream): each write and
// flush holds mu, which the wrapping stream's own state shares.
type lockedWriter struct {
	http.ResponseWriter
	mu sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// Flush passes on flushes (event streams need them).
func (w *lockedWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *lockedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// openStandalone wraps w, the response to GET of session sid, so that
// notifySession can write on it once the SDK answers with an event
// stream (not when it refuses the request: another user's, say) until
// the returned function is called (when the SDK's handler returns).
func (g *Gateway) openStandalone(sid string, w http.ResponseWriter) (http.ResponseWriter, func()) {
	s := &standaloneStream{lockedWriter: lockedWriter{ResponseWriter: w}, g: g, sid: sid}
	return s, func() {
		g.streams.standalone.CompareAndDelete(sid, s)
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
	}
}

func (s *standaloneStream) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.begun && !s.done && code == http.StatusOK && strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
		s.begun = true
		s.g.streams.standalone.Store(s.sid, s)
	}
	s.ResponseWriter.WriteHeader(code)
}

// event writes msg as one event, if the stream is open.
func (s *standaloneStream) event(msg json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.begun || s.done {
		return false
	}
	b := make([]byte, 0, len(eventPrefix)+len(msg)+2)
	b = append(b, eventPrefix...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	if _, err := s.ResponseWriter.Write(b); err != nil {
		return false
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return true
}
