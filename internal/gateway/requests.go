package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"sync"
)

// In stateless mode a client has no session in which a
// notifications/cancelled could find its call by its id alone: the
// gateway finds it among the calls in flight of the same caller (token
// user and host), by its JSON-RPC id; and dropping the request cancels it
// too. The gateway's own path (fastpath.go) runs a call on the request's
// context; a call the SDK dispatches does not, so the gateway tags each
// stateless request with a private header, which the SDK hands the tool
// handler (CallToolRequest.Extra.Header), and cancels the calls made under
// that tag when the request's context ends before they do, or when a
// notifications/cancelled names its id.

// requestKeyHeader carries the tag. A client's own value is always
// removed first.
const requestKeyHeader = "X-Switchboard-Request-Key"

// requestCalls maps request tags to the calls running under them.
type requestCalls struct {
	mu sync.Mutex
	m  map[string]*requestEntry
}

type requestEntry struct {
	caller  requestCaller                    // who sent the request, and its id
	rawID   json.RawMessage                  // the request's id as the client sent it
	gone    bool                             // the request ended, or was cancelled
	revoked bool                             // cancelled by the client's notifications/cancelled
	cancels map[*context.CancelFunc]struct{} // the calls running under it
}

// requestCaller identifies a request for notifications/cancelled: its
// session, or in stateless mode the token's user ("" without tokens) and
// the client's host; and the request's JSON-RPC id as it was sent.
type requestCaller struct {
	session, user, host, id string
}

// begin tags r, a request of caller with the JSON-RPC id id (as sent),
// and returns the tagged request and
// the function to call when it has been served. Calls joined to the tag
// are cancelled when r's context ends first (the client went away), or
// by cancel.
func (rc *requestCalls) begin(r *http.Request, caller requestCaller, id json.RawMessage) (*http.Request, func()) {
	key := rand.Text()
	e := &requestEntry{caller: caller, rawID: id, cancels: map[*context.CancelFunc]struct{}{}}
	rc.mu.Lock()
	if rc.m == nil {
		rc.m = map[string]*requestEntry{}
	}
	rc.m[key] = e
	rc.mu.Unlock()
	r = r.Clone(r.Context())
	r.Header.Set(requestKeyHeader, key)
	stop := context.AfterFunc(r.Context(), func() {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		e.cancelLocked()
	})
	return r, func() {
		stop()
		rc.mu.Lock()
		delete(rc.m, key)
		rc.mu.Unlock()
	}
}

// cancelLocked ends the calls under e; rc.mu is held.
func (e *requestEntry) cancelLocked() {
	e.gone = true
	for c := range e.cancels {
		(*c)()
	}
}

// cancel ends the calls of the requests in flight that caller sent with
// its id (a notifications/cancelled in stateless mode), and reports how
// many requests it found.
func (rc *requestCalls) cancel(caller requestCaller) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, e := range rc.m {
		if e.caller == caller && caller.id != "" {
			e.revoked = true
			e.cancelLocked()
			n++
		}
	}
	return n
}

// id returns the JSON-RPC id, as the client sent it, of the request
// tagged key (nil for an unknown key).
func (rc *requestCalls) id(key string) json.RawMessage {
	if key == "" {
		return nil
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if e := rc.m[key]; e != nil {
		return e.rawID
	}
	return nil
}

// revoked reports whether the client cancelled the request tagged key.
func (rc *requestCalls) revoked(key string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e := rc.m[key]
	return e != nil && e.revoked
}

// quietWriter is the response of a tools/call the SDK answers: once the
// client has cancelled the request, nothing more is written, for the
// specification has a cancelled request go unanswered (the SDK answers
// it; go-sdk issue 1259), as the gateway's own path leaves it.
type quietWriter struct {
	http.ResponseWriter
	rc  *requestCalls
	key string
}

func (w *quietWriter) Write(p []byte) (int, error) {
	if w.rc.revoked(w.key) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes on flushes (event streams need them).
func (w *quietWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *quietWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// join returns ctx cancelled when the request tagged key (from a tool
// handler's request headers) goes away or is cancelled, and the function
// that ends the call's membership. An empty or unknown key leaves ctx as
// it is.
func (rc *requestCalls) join(ctx context.Context, key string) (context.Context, func()) {
	if key == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	rc.mu.Lock()
	e := rc.m[key]
	switch {
	case e == nil:
		rc.mu.Unlock()
		return ctx, cancel
	case e.gone:
		rc.mu.Unlock()
		cancel()
		return ctx, cancel
	}
	e.cancels[&cancel] = struct{}{}
	rc.mu.Unlock()
	return ctx, func() {
		rc.mu.Lock()
		delete(e.cancels, &cancel)
		rc.mu.Unlock()
		cancel()
	}
}
