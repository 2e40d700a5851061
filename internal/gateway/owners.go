package gateway

//lint:file-ignore SA1019 roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"crypto/rand"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server with session: per_client or per_user gives each client
// session (or each user) an upstream session of its own (upstream's
// sessions.go). The gateway names each client session that makes a
// request with a key of its own (upstream.Owner.Session) and closes the
// session's upstream sessions when it ends (sessionEnded); what such an
// upstream session sends outside a call goes to its owner's client
// session (calls.go), and a client's notifications/roots/list_changed to
// its own upstream sessions.

// sessionUpstreams is what the gateway's Upstreams implement when servers
// may have owned sessions: *upstream.Pool does.
type sessionUpstreams interface {
	SessionClient(ctx context.Context, server string) (*upstream.Client, error)
	OwnedSession(server string, key upstream.SessionKey) (*upstream.Client, bool)
	EndSession(session string)
}

// owners holds the key and the latest user of every client session that
// made a request; a session's entry goes when it ends.
type owners struct {
	mu    sync.Mutex
	bySS  map[*mcp.ServerSession]*owner
	byKey map[string]*owner
}

type owner struct {
	key  string
	ss   *mcp.ServerSession
	vs   *viewServer // the view it is a session of
	user string      // the user of its latest request
}

// of returns the key of ss, a session of vs making a request for user,
// giving it one on its first request.
func (o *owners) of(ss *mcp.ServerSession, vs *viewServer, user string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bySS == nil {
		o.bySS, o.byKey = map[*mcp.ServerSession]*owner{}, map[string]*owner{}
	}
	ow := o.bySS[ss]
	if ow == nil {
		ow = &owner{key: rand.Text(), ss: ss, vs: vs}
		o.bySS[ss], o.byKey[ow.key] = ow, ow
		vs.causes.start(ss)
	}
	ow.user = user
	return ow.key
}

// key returns the key of ss, if it made a request.
func (o *owners) key(ss *mcp.ServerSession) (string, string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ow := o.bySS[ss]
	if ow == nil {
		return "", "", false
	}
	return ow.key, ow.user, true
}

// end forgets ss and returns its key, if it had one.
func (o *owners) end(ss *mcp.ServerSession) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ow := o.bySS[ss]
	if ow == nil {
		return "", false
	}
	delete(o.bySS, ss)
	delete(o.byKey, ow.key)
	ow.vs.causes.end(ss)
	return ow.key, true
}

// sessions returns the client sessions an owned upstream session belongs to:
// the one client session (per_client), or the user's (per_user).
func (o *owners) sessions(k upstream.SessionKey) []*owner {
	o.mu.Lock()
	defer o.mu.Unlock()
	if k.Mode == config.SessionPerClient {
		if ow := o.byKey[k.ID]; ow != nil {
			return []*owner{ow}
		}
		return nil
	}
	var out []*owner
	for _, ow := range o.byKey {
		if ow.user == k.ID {
			out = append(out, ow)
		}
	}
	return out
}

// owns reports whether client session ss is one an owned upstream session
// of key belongs to.
func (o *owners) owns(k upstream.SessionKey, ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ow := o.bySS[ss]
	if ow == nil {
		return false
	}
	if k.Mode == config.SessionPerClient {
		return ow.key == k.ID
	}
	return ow.user == k.ID
}

// withOwner returns ctx for a request of client session ss (of view vs)
// made for user: on a per_client or per_user server it goes to that
// session's (or user's) own upstream session. Stateless requests, which
// have no session that lasts, use the shared one.
func (g *Gateway) withOwner(ctx context.Context, vs *viewServer, ss *mcp.ServerSession, user string) context.Context {
	if ss == nil || g.config().Gateway.Stateless {
		return ctx
	}
	o := upstream.Owner{Session: g.owners.of(ss, vs, user), User: user}
	if ip := ss.InitializeParams(); ip != nil {
		o.Capabilities = ip.Capabilities
		if o.Capabilities == nil {
			o.Capabilities = &mcp.ClientCapabilities{} // it declared nothing
		}
		if slices.Contains(mcp.SupportedProtocolVersions(), ip.ProtocolVersion) {
			o.ProtocolVersion = ip.ProtocolVersion
		}
		// A view meant to be its server leaves a 2026-07-28 server's input
		// requests to a client of that version, which answers them itself
		// (forward.go, inputRequestsPassed).
		o.PassInputRequests = ip.ProtocolVersion >= protocolPerRequest && vs.soleServer() != ""
	}
	return upstream.WithOwner(ctx, o)
}

// upstreamFor returns the connection a request made with ctx uses on
// server: the owner's own (withOwner) where the server has them, else
// the shared one.
func (g *Gateway) upstreamFor(ctx context.Context, server string) (*upstream.Client, error) {
	if s, ok := g.ups.(sessionUpstreams); ok {
		return s.SessionClient(ctx, server)
	}
	return g.ups.Client(server)
}

// sessionEnded closes the upstream sessions of a client session that
// ended (closed by the client, idled out, closed at shutdown or reload).
func (g *Gateway) sessionEnded(ss *mcp.ServerSession) {
	g.rounds.sessionEnded(ss)
	g.streamlessAtInit.Delete(ss)
	g.forgetListCauses(ss)
	if id := ss.ID(); id != "" {
		g.initPosted.Delete(id)
	}
	g.ownLists.forget(ss)
	key, ok := g.owners.end(ss)
	if !ok {
		return
	}
	g.ownLists.drop(key)
	if s, ok := g.ups.(sessionUpstreams); ok {
		s.EndSession(key)
	}
}

// forgetListCauses forgets what every view server recorded of ss's list
// changes (listcauses.go): it ended.
func (g *Gateway) forgetListCauses(ss *mcp.ServerSession) {
	g.mu.Lock()
	servers := append(slices.Collect(mapValues(g.servers)), g.retired...)
	g.mu.Unlock()
	for _, vs := range servers {
		vs.causes.end(ss)
	}
}

// SessionOpened brings a newly opened owned upstream session in step with
// its owner: a server that logs (before protocol 2026-07-28) is told the
// log level its owner's client session set (the most verbose of the
// user's sessions, per_user), which a new session does not know.
func (g *Gateway) SessionOpened(key upstream.SessionKey, c *upstream.Client) {
	ir := c.InitializeResult()
	if ir == nil || ir.ProtocolVersion >= protocolPerRequest || c.Capabilities().Logging == nil {
		return
	}
	level := g.ownerLevel(key)
	if level == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ownedLevelWait)
	defer cancel()
	if err := c.Session().SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		g.logger.Debug("telling a server the logging level failed", logKeyServer, c.Server().Name, logKeyErr, err)
	}
}

// ownerLevel is the log level an owned upstream session logs at: the one
// its client session set, or per_user the most verbose its user's
// sessions set ("" for none).
func (g *Gateway) ownerLevel(key upstream.SessionKey) mcp.LoggingLevel {
	level := mcp.LoggingLevel("")
	for _, ow := range g.owners.sessions(key) {
		if lv := g.levels.get(ow.ss); lv != "" && (level == "" || levelRank(lv) < levelRank(level)) {
			level = lv
		}
	}
	return level
}

// ownedLevelWait bounds telling a new owned session the log level, which
// its first request waits for.
const ownedLevelWait = 5 * time.Second

// ownedSession is an open owned upstream session and its key.
type ownedSession struct {
	key upstream.SessionKey
	c   *upstream.Client
}

// ownedSessions returns the open owned upstream sessions of client
// session ss on the servers of vs.
func (g *Gateway) ownedSessions(vs *viewServer, ss *mcp.ServerSession) []ownedSession {
	s, ok := g.ups.(sessionUpstreams)
	if !ok {
		return nil
	}
	key, user, ok := g.owners.key(ss)
	if !ok {
		return nil
	}
	var out []ownedSession
	for _, srv := range g.config().Servers {
		if !srv.Session.Owned() || !vs.spec().hasServer(srv.Name) {
			continue
		}
		k := upstream.SessionKey{Mode: srv.Session, ID: key}
		if srv.Session == config.SessionPerUser {
			k.ID = user
		}
		if c, ok := s.OwnedSession(srv.Name, k); ok {
			out = append(out, ownedSession{k, c})
		}
	}
	return out
}

// rootsChanged forwards a client's notifications/roots/list_changed to its
// own upstream sessions, which then ask it for its roots again. A shared
// session is not told: it asks a calling client during each call.
func (vs *viewServer) rootsChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	// The notification's request may be over (202 sent, its context
	// cancelled) before this runs: the forwarding has its own deadline.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, o := range vs.g.ownedSessions(vs, req.Session) {
		if err := o.c.NotifyRootsChanged(ctx); err != nil {
			vs.g.logger.Debug("forwarding roots/list_changed failed", logKeyServer, o.c.Server().Name, logKeyErr, err)
		}
	}
}

// setOwnedLevels passes a client session's logging/setLevel on to its
// own upstream sessions that log (before protocol 2026-07-28).
func (vs *viewServer) setOwnedLevels(ctx context.Context, ss *mcp.ServerSession) {
	for _, o := range vs.g.ownedSessions(vs, ss) {
		ir := o.c.InitializeResult()
		if ir == nil || ir.ProtocolVersion >= protocolPerRequest || o.c.Capabilities().Logging == nil {
			continue
		}
		level := vs.g.ownerLevel(o.key)
		if level == "" {
			continue
		}
		if err := o.c.Session().SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			vs.g.logger.Debug("forwarding the logging level failed", logKeyServer, o.c.Server().Name, logKeyErr, err)
		}
	}
}

// perClient reports whether server's requests from a gateway client
// session go to an upstream session of that client's alone.
func (g *Gateway) perClient(server string) bool {
	if g.config().Gateway.Stateless {
		return false
	}
	for _, s := range g.config().Servers {
		if s.Name == server {
			return s.Session == config.SessionPerClient
		}
	}
	return false
}
