package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// A client session whose lists of a server are its own upstream
// session's (ownlists.go) is told of that session's list changes by the
// gateway (SessionNotify). The SDK also tells it of every change of the
// view's registries, which mirror the catalog — the shared session's
// lists. When a server changes a list for every session at once, both
// sessions say so, and such a client heard it twice; when it changes the
// shared session's alone (server-everything adds tools for the shared
// session's capabilities), the client heard of a change it does not see.
// So the view server records why its registries changed (sync), and its
// sending middleware (ownedListSending) passes the SDK's list_changed to
// a session only when something it lists changed: a change of the view
// itself (a reload that changes its filters or names), a server that
// came or went, or the entries of a server the session lists from the
// catalog. Each notification the SDK sends a session covers what changed
// since its previous one of that kind.

// listCause is one change of a view's registries of one kind.
type listCause struct {
	seq     uint64
	servers map[string]bool // whose entries changed
	// all marks a change that concerns every session: the view changed,
	// or a server came or went.
	all bool
}

// maxListCauses bounds the causes kept per kind: a session whose last
// notification is older than the oldest kept is told, whatever changed.
const maxListCauses = 64

// listCauses records the changes of a view's registries (listCause),
// per list_changed method, and per session how far its notifications
// have covered them.
type listCauses struct {
	mu     sync.Mutex
	seq    uint64
	causes map[string][]listCause                   // by method, oldest first
	seen   map[*mcp.ServerSession]map[string]uint64 // the latest cause each session was told of, by method
}

// record notes that the registries of method's kind changed: the entries
// of servers, or (all) everything a session lists.
func (l *listCauses) record(method string, servers map[string]bool, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.causes == nil {
		l.causes = map[string][]listCause{}
	}
	l.seq++
	list := append(l.causes[method], listCause{seq: l.seq, servers: servers, all: all})
	if len(list) > maxListCauses {
		list = list[len(list)-maxListCauses:]
	}
	l.causes[method] = list
}

// start marks ss as told of every change so far: a session's first
// request (the owner's key is made then) comes before it lists anything.
func (l *listCauses) start(ss *mcp.ServerSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[*mcp.ServerSession]map[string]uint64{}
	}
	if _, ok := l.seen[ss]; ok {
		return
	}
	m := map[string]uint64{}
	for method := range listChangedParams {
		m[method] = l.seq
	}
	l.seen[ss] = m
}

// end forgets ss.
func (l *listCauses) end(ss *mcp.ServerSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.seen, ss)
}

// since returns the changes of method's kind ss has not been told of, and
// marks them told; ok is false when they are unknown (ss has no record,
// or some were forgotten), and then ss is to be told.
func (l *listCauses) since(ss *mcp.ServerSession, method string) (changes []listCause, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, known := l.seen[ss]
	if !known {
		return nil, false
	}
	last := m[method]
	list := l.causes[method]
	if len(list) > 0 && list[0].seq > last+1 {
		ok = false // some were forgotten
	} else {
		ok = true
	}
	for _, c := range list {
		if c.seq > last {
			changes = append(changes, c)
		}
	}
	m[method] = l.seq
	return changes, ok
}

// ownedListSending is the view server's sending middleware that passes
// the SDK's own list_changed (not one the gateway sends for an owned
// session, notifyOne) to a session only when something that session
// lists changed (listCauses).
func (vs *viewServer) ownedListSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if _, ok := listChangedParams[method]; !ok {
			return next(ctx, method, req)
		}
		if _, ours := ctx.Value(notifyAsKey{}).(notifyAs); ours {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil || vs.concerns(ss, method) {
			return next(ctx, method, req)
		}
		return nil, nil
	}
}

// concerns reports whether the changes of method's kind that ss has not
// been told of change what ss lists.
func (vs *viewServer) concerns(ss *mcp.ServerSession, method string) bool {
	changes, ok := vs.causes.since(ss, method)
	if !ok || len(changes) == 0 {
		// Unknown, or the change is not recorded yet (a sync that runs
		// while the SDK sends): tell it, as the SDK would.
		return true
	}
	servers := map[string]config.Server{}
	for _, s := range vs.g.config().Servers {
		servers[s.Name] = s
	}
	for _, c := range changes {
		if c.all {
			return true
		}
		for name := range c.servers {
			if !vs.g.listsOwn(servers[name], ss) {
				return true
			}
		}
	}
	return false
}

// listsOwn reports whether client session ss lists srv's entries from an
// upstream session of its own (it has listed them from there).
func (g *Gateway) listsOwn(srv config.Server, ss *mcp.ServerSession) bool {
	if srv.Name == "" || !srv.Session.Owned() {
		return false
	}
	key, ok := g.ownedKey(srv, ss)
	return ok && g.ownLists.peek(srv.Name, key) != nil
}
