package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server's sampling, elicitation or roots request may carry a
// progressToken in its _meta, under which its client reports progress on
// the request while it works on the answer (notifications/progress).
// The gateway passes the request on to a client with the server's token
// as it is; while the request waits for that client's answer, the token
// of that client session leads back to the upstream session that asked,
// and the client's progress under it reaches the server as the client
// sent it. Only the client session the request went to is heard: another
// client's progress under a like token is nobody's here, as directly.
// The token still leads back for a little while after the answer
// (askProgressLinger): a client that reports progress and then answers
// sends two messages, which the gateway may read in either order — the
// answer is taken off as it comes, the progress is queued for the SDK's
// handler — and directly the server would hear both.

// askProgress maps a client session's progress tokens to the upstream
// sessions whose requests to it carried them, while those wait.
type askProgress struct {
	mu sync.Mutex
	m  map[askProgressKey][]*askProgressRoute // newest last
}

// askProgressKey is a client session and a progress token as JSON (a
// string and a number of equal text are different tokens).
type askProgressKey struct {
	ss    *mcp.ServerSession
	token string
}

// askProgressRoute is where a client's progress under a token goes.
type askProgressRoute struct {
	send func(context.Context, *mcp.ProgressNotificationParams) error
	// answered is when the request had its answer (zero while it waits).
	answered time.Time
}

// askProgressLinger is how long after a request's answer its client's
// progress under its token still reaches the server.
const askProgressLinger = 10 * time.Second

// live reports whether progress under r's token still goes to r at now.
func (r *askProgressRoute) live(now time.Time) bool {
	return r.answered.IsZero() || now.Sub(r.answered) < askProgressLinger
}

// maxProgressWait bounds passing a client's progress on to a server.
const maxProgressWait = 10 * time.Second

// progressKey returns the key of token for client session ss.
func progressKey(ss *mcp.ServerSession, token any) (askProgressKey, bool) {
	if token == nil {
		return askProgressKey{}, false
	}
	b, err := json.Marshal(token)
	if err != nil {
		return askProgressKey{}, false
	}
	return askProgressKey{ss: ss, token: string(b)}, true
}

// expect routes the progress client session ss reports under the token
// in meta — the _meta of a request an upstream sent with ctx, which is
// passed on to ss — to that upstream session, until stop. A request
// without a token, or one that does not come from an upstream session,
// sets up nothing.
func (a *askProgress) expect(ctx context.Context, ss *mcp.ServerSession, meta mcp.Meta) (stop func()) {
	send, ok := upstream.ProgressToAsker(ctx)
	if !ok || ss == nil {
		return func() {}
	}
	key, ok := progressKey(ss, meta["progressToken"])
	if !ok {
		return func() {}
	}
	r := &askProgressRoute{send: send}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prune(time.Now())
	if a.m == nil {
		a.m = map[askProgressKey][]*askProgressRoute{}
	}
	a.m[key] = append(a.m[key], r)
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		r.answered = time.Now() // forgotten by a later prune
	}
}

// prune forgets the routes whose linger is over. Called with a.mu held.
func (a *askProgress) prune(now time.Time) {
	for key, rs := range a.m {
		rs = slices.DeleteFunc(rs, func(r *askProgressRoute) bool { return !r.live(now) })
		if len(rs) == 0 {
			delete(a.m, key)
		} else {
			a.m[key] = rs
		}
	}
}

// route returns where client session ss's progress under token goes:
// the newest of the requests sent to ss that carried it, waiting or
// answered within askProgressLinger.
func (a *askProgress) route(ss *mcp.ServerSession, token any) *askProgressRoute {
	key, ok := progressKey(ss, token)
	if !ok {
		return nil
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := a.m[key]
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].live(now) {
			return rs[i]
		}
	}
	return nil
}

// clientProgress is the view servers' handler of a client's
// notifications/progress: progress on a request an upstream sent that
// client goes to that upstream session, as the client sent it; anything
// else is dropped, as a server drops progress on no request of its.
func (g *Gateway) clientProgress(ctx context.Context, req *mcp.ProgressNotificationServerRequest) {
	if req == nil || req.Params == nil {
		return
	}
	r := g.askProgress.route(req.Session, req.Params.ProgressToken)
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxProgressWait)
	defer cancel()
	if err := r.send(ctx, req.Params); err != nil {
		g.logger.Debug("passing a client's progress on to the server that asked failed", logKeyErr, err)
	}
}
