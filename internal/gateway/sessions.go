package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// This file bounds the client sessions of the HTTP endpoints. A session
// is counted from the request that opens it — a streamable-HTTP POST
// without an Mcp-Session-Id (initialize), or an SSE stream's GET — not
// from notifications/initialized, so that a client that never finishes
// its handshake still counts. Past gateway.max_sessions (all users) or
// gateway.max_sessions_per_user (one identity) the request that would
// open another is answered with a JSON-RPC error (HTTP 503 or 429) that
// names the limit. The janitor closes a session that has not finished its
// handshake within gateway.handshake_timeout, and one with nothing open
// on it for gateway.session_timeout.
//
// The gateway hands the session to the SDK in the opening request's
// context (sessionKey): the SDK runs every handler of a session in the
// context it was connected with, so the session's initialize handling
// (attach) and its notifications/initialized (initialized) find it there.
// However a session ends — DELETE, a reap, an idle-out, the SSE stream's
// end, a reload that drops its view, shutdown — sessionClosed is called
// once for it.

// clientSession is one client session of the HTTP endpoints.
type clientSession struct {
	user    string // the identity it counts against
	view    string
	sse     bool
	created time.Time
	// cancel ends an SSE session's stream (and so the session).
	cancel context.CancelFunc

	// Set under the registry's lock.
	id    string // Mcp-Session-Id, or the SSE session id; "" until known
	ended bool

	ss atomic.Pointer[mcp.ServerSession] // the SDK's session, from its first message on

	vs          atomic.Pointer[viewServer] // set once its first message (initialize) is handled
	initialized atomic.Bool
	lastSeen    atomic.Int64 // unix nanoseconds, when the last request ended
	active      atomic.Int32 // requests (and streamable-HTTP streams) open on it
}

// sessionKey is the context key of the *clientSession a request opens.
type sessionKey struct{}

// sessionOf returns the client session ctx belongs to, if any.
func sessionOf(ctx context.Context) *clientSession {
	cs, _ := ctx.Value(sessionKey{}).(*clientSession)
	return cs
}

// sessionRegistry holds the open client sessions and their counts.
type sessionRegistry struct {
	m sync.Map // id -> *clientSession
	// users maps a session id to the user the SDK accepted a request of
	// on it: the SDK binds a session to the token user that created it
	// and refuses any other, so once it has accepted one of the user's
	// requests, the fast path may accept that user's too.
	users sync.Map // string -> string

	mu      sync.Mutex
	open    map[*clientSession]struct{}
	perUser map[string]int
}

// sessionLimitError is a session refused by a limit.
type sessionLimitError struct {
	key    string // the configuration key
	limit  int
	user   string // for the per-user limit
	status int
}

func (e *sessionLimitError) Error() string {
	if e.key == "gateway.max_sessions_per_user" {
		return fmt.Sprintf("Too many sessions: user %q already has %d client sessions open, the limit gateway.max_sessions_per_user sets; close sessions this user no longer needs (DELETE with their Mcp-Session-Id, or end the SSE stream) or raise gateway.max_sessions_per_user", e.user, e.limit)
	}
	return fmt.Sprintf("Too many sessions: the gateway already has %d client sessions open, the limit gateway.max_sessions sets; try again once sessions close, or raise gateway.max_sessions", e.limit)
}

// codeSessionLimit is the JSON-RPC code of a session refused by a limit
// (in the range JSON-RPC leaves to implementations' server errors).
const codeSessionLimit = -32000

// openSession counts a new session of user on view, or says which limit
// refuses it.
// cancel, for an SSE session, ends its stream.
func (g *Gateway) openSession(gw config.Gateway, user, view string, cancel context.CancelFunc) (*clientSession, *sessionLimitError) {
	r := &g.sess
	r.mu.Lock()
	if r.open == nil {
		r.open, r.perUser = map[*clientSession]struct{}{}, map[string]int{}
	}
	switch {
	case gw.MaxSessions > 0 && len(r.open) >= gw.MaxSessions:
		r.mu.Unlock()
		return nil, &sessionLimitError{key: "gateway.max_sessions", limit: gw.MaxSessions, status: http.StatusServiceUnavailable}
	case gw.MaxSessionsPerUser > 0 && r.perUser[user] >= gw.MaxSessionsPerUser:
		r.mu.Unlock()
		return nil, &sessionLimitError{key: "gateway.max_sessions_per_user", limit: gw.MaxSessionsPerUser, user: user, status: http.StatusTooManyRequests}
	}
	cs := &clientSession{user: user, view: view, sse: cancel != nil, cancel: cancel, created: time.Now()}
	cs.lastSeen.Store(cs.created.UnixNano())
	r.open[cs] = struct{}{}
	r.perUser[user]++
	r.mu.Unlock()
	if g.metrics != nil {
		g.metrics.SessionOpened(view)
	}
	return cs, nil
}

// refuseSession answers a request whose session a limit refused, and logs
// it (refusals.go: the first at once, then a count per interval).
func (g *Gateway) refuseSession(w http.ResponseWriter, r *http.Request, id []byte, view string, err *sessionLimitError) {
	g.refusals.refused(g.logger, time.Now(), err.key, clientAddr(r), view)
	writeRPCError(w, err.status, id, codeSessionLimit, err.Error())
}

// sessionMiddleware attaches a session of the HTTP endpoints to the
// SDK's session, and to vs (the view server whose SDK server handles it),
// when its first message is handled.
func (g *Gateway) sessionMiddleware(vs *viewServer) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if cs := sessionOf(ctx); cs != nil && cs.ss.Load() == nil {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					// Before attach makes the session known by its id:
					// the SDK takes requests once initialize is answered,
					// before it has handled notifications/initialized
					// (which it does after answering its POST), and the
					// gateway's own handling of them (a tools/call made
					// as a task, tools/list's task annotations) needs the
					// view server from then on.
					cs.vs.CompareAndSwap(nil, vs)
					g.attach(cs, ss)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// attach ties cs to the SDK's session ss when the session's first
// message is handled. A streamable-HTTP session is then known by its id,
// and watched until it ends.
func (g *Gateway) attach(cs *clientSession, ss *mcp.ServerSession) {
	r := &g.sess
	if cs.ss.Load() != nil {
		return
	}
	r.mu.Lock()
	if !cs.ss.CompareAndSwap(nil, ss) {
		r.mu.Unlock()
		return
	}
	if cs.ended {
		// The request that opened it ended without the session: it
		// is not counted, so it may not stay.
		r.mu.Unlock()
		_ = ss.Close()
		return
	}
	if !cs.sse {
		cs.id = ss.ID()
		if cs.id != "" {
			r.m.Store(cs.id, cs)
		}
	}
	r.mu.Unlock()
	if !cs.sse {
		// An SSE session ends with its stream's request (serveSSE).
		g.sessions.Go(func() {
			_ = ss.Wait()
			g.sessionClosed(cs)
		})
	}
}

// setSSEID records the id the SDK gave an SSE session.
func (g *Gateway) setSSEID(cs *clientSession, id string) {
	r := &g.sess
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs.ended || cs.id != "" {
		return
	}
	cs.id = id
	r.m.Store(id, cs)
}

// markInitialized records that cs finished its handshake.
func (g *Gateway) markInitialized(cs *clientSession, vs *viewServer) {
	cs.vs.Store(vs)
	cs.initialized.Store(true)
}

// sessionClosed is where every client session of the HTTP endpoints ends,
// once, however it ended: it frees the session's slot and forgets it.
func (g *Gateway) sessionClosed(cs *clientSession) {
	r := &g.sess
	r.mu.Lock()
	if cs.ended {
		r.mu.Unlock()
		return
	}
	cs.ended = true
	delete(r.open, cs)
	if r.perUser[cs.user]--; r.perUser[cs.user] <= 0 {
		delete(r.perUser, cs.user)
	}
	if cs.id != "" {
		r.m.Delete(cs.id)
		r.users.Delete(cs.id)
	}
	r.mu.Unlock()
	if cs.id != "" {
		g.tasks.dropSession(cs.id)
		g.resumeSessionClosed(cs.id)
	}
	if ss := cs.ss.Load(); ss != nil {
		g.sessionEnded(ss) // its own upstream sessions (owners.go)
		g.levels.drop(ss)
	}
	if g.metrics != nil {
		g.metrics.SessionClosed(cs.view)
	}
}

// end asks cs to close; sessionClosed follows when it has.
func (cs *clientSession) end() {
	if cs.cancel != nil {
		cs.cancel()
		return
	}
	if ss := cs.ss.Load(); ss != nil {
		_ = ss.Close()
	}
}

// bindUser records that the SDK accepted a request of user on session id.
func (r *sessionRegistry) bindUser(id, user string) {
	r.users.LoadOrStore(id, user)
}

// user returns the user bound to session id.
func (r *sessionRegistry) user(id string) (string, bool) {
	v, ok := r.users.Load(id)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// get returns the open session with id, or nil.
func (r *sessionRegistry) get(id string) *clientSession {
	if v, ok := r.m.Load(id); ok {
		return v.(*clientSession)
	}
	return nil
}

// begin notes that a request (or a stream) on session id started; the
// returned function notes that it ended. A session is idle only while
// nothing is open on it.
func (r *sessionRegistry) begin(id string) func() {
	cs := r.get(id)
	if cs == nil {
		return func() {}
	}
	cs.active.Add(1)
	return func() {
		cs.lastSeen.Store(time.Now().UnixNano())
		cs.active.Add(-1)
	}
}

// reap closes the sessions that have not finished their handshake
// within handshake, and those with nothing open on them for idle (0:
// neither).
func (g *Gateway) reap(now time.Time, handshake, idle time.Duration) {
	r := &g.sess
	var stale, unfinished []*clientSession
	r.mu.Lock()
	for cs := range r.open {
		switch {
		case handshake > 0 && !cs.initialized.Load() && now.Sub(cs.created) > handshake:
			unfinished = append(unfinished, cs)
		case idle > 0 && cs.active.Load() == 0 && now.UnixNano()-cs.lastSeen.Load() > int64(idle):
			stale = append(stale, cs)
		}
	}
	r.mu.Unlock()
	if len(unfinished) > 0 {
		g.logger.Info("closing client sessions that did not finish their handshake in time", "sessions", len(unfinished))
	}
	for _, cs := range unfinished {
		cs.end()
	}
	for _, cs := range stale {
		g.logger.Info("closing an idle client session", logKeyView, cs.view)
		cs.end()
	}
}

// janitor closes half-open and idle sessions (reap), checking twice per
// gateway.handshake_timeout or gateway.session_timeout, whichever is
// shorter (at most every minute), until ctx is done.
func (g *Gateway) janitor(ctx context.Context) {
	for {
		gw := g.config().Gateway
		every := time.Minute
		for _, d := range []time.Duration{gw.HandshakeTimeout, gw.SessionTimeout} {
			if d > 0 && d/2 < every {
				every = max(d/2, 10*time.Millisecond)
			}
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case now := <-t.C:
			g.reap(now, gw.HandshakeTimeout, gw.SessionTimeout)
			g.refusals.flush(g.logger, now, false)
		}
	}
}

// sessionUser is the identity a new session of r counts against: its
// token's user (an OAuth token's subject), else gateway.default_user.
func sessionUser(r *http.Request, gw config.Gateway) string {
	if tok, ok := r.Context().Value(tokenKey{}).(config.Token); ok {
		return tok.User
	}
	return gw.DefaultUser
}
