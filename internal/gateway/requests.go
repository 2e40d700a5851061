package gateway

import (
	"context"
	"crypto/rand"
	"net/http"
	"sync"
)

// In stateless mode a client has no session in which a
// notifications/cancelled could find its call, so dropping the request is
// the only way to cancel it. The gateway's own path (fastpath.go) runs a
// call on the request's context; a call the SDK dispatches does not, so
// the gateway tags each stateless request with a private header, which
// the SDK hands the tool handler (CallToolRequest.Extra.Header), and
// cancels the calls made under that tag when the request's context ends
// before they do.

// requestKeyHeader carries the tag. A client's own value is always
// removed first.
const requestKeyHeader = "X-Switchboard-Request-Key"

// requestCalls maps request tags to the calls running under them.
type requestCalls struct {
	mu sync.Mutex
	m  map[string]*requestEntry
}

type requestEntry struct {
	gone    bool                             // the request ended
	cancels map[*context.CancelFunc]struct{} // the calls running under it
}

// begin tags r and returns the tagged request and the function to call
// when it has been served. Calls joined to the tag are cancelled when r's
// context ends first (the client went away).
func (rc *requestCalls) begin(r *http.Request) (*http.Request, func()) {
	key := rand.Text()
	rc.mu.Lock()
	if rc.m == nil {
		rc.m = map[string]*requestEntry{}
	}
	rc.m[key] = &requestEntry{cancels: map[*context.CancelFunc]struct{}{}}
	rc.mu.Unlock()
	r = r.Clone(r.Context())
	r.Header.Set(requestKeyHeader, key)
	stop := context.AfterFunc(r.Context(), func() {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if e := rc.m[key]; e != nil {
			e.gone = true
			for c := range e.cancels {
				(*c)()
			}
		}
	})
	return r, func() {
		stop()
		rc.mu.Lock()
		delete(rc.m, key)
		rc.mu.Unlock()
	}
}

// join returns ctx cancelled when the request tagged key (from a tool
// handler's request headers) goes away, and the function that ends the
// call's membership. An empty or unknown key leaves ctx as it is.
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
