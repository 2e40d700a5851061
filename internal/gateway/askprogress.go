package gateway

import (
	"context"
	"encoding/json"
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
	if a.m == nil {
		a.m = map[askProgressKey][]*askProgressRoute{}
	}
	a.m[key] = append(a.m[key], r)
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		rs := a.m[key]
		for i, x := range rs {
			if x == r {
				rs = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(a.m, key)
		} else {
			a.m[key] = rs
		}
	}
}

// route returns where client session ss's progress under token goes:
// the newest of the requests waiting on ss that carried it.
func (a *askProgress) route(ss *mcp.ServerSession, token any) *askProgressRoute {
	key, ok := progressKey(ss, token)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	rs := a.m[key]
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
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
