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
//
// A session is known from its notifications/initialized on. Until it
// has been given a list of a kind, a change of the entries of a server
// with sessions of its own (per_client, per_user) is nothing to it: it
// will list that server from its own upstream session, which is not the
// one that changed — directly, it would not have heard of it either.
//
// The SDK sends its list_changed 10 ms after the registries change
// (Server.changeAndNotify), on a goroutine of its own; sync changes them
// and records why under the view server's mutex, and concerns reads the
// causes under it too, so a notification never reads the causes between
// a change and its record: every change it follows is recorded.

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
	synced uint64                 // the latest cause whose change sync has made
	causes map[string][]listCause // by method, oldest first
	// dropped is, by method, the latest cause no longer kept (0: none):
	// the causes of all methods share one sequence, so a gap in one
	// method's is no sign that any was dropped.
	dropped map[string]uint64
	seen    map[*mcp.ServerSession]*sessionSeen // per known session
}

// sessionSeen is what a session was told and given, by list_changed
// method.
type sessionSeen struct {
	told   map[string]uint64 // the latest cause it was told of
	listed map[string]bool   // it has been given a list of that kind
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
		if l.dropped == nil {
			l.dropped = map[string]uint64{}
		}
		l.dropped[method] = list[len(list)-maxListCauses-1].seq
		list = list[len(list)-maxListCauses:]
	}
	l.causes[method] = list
}

// made notes that sync has made every change recorded so far.
func (l *listCauses) made() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.synced = l.seq
}

// start marks ss as told of every change made so far: a session starts
// (its notifications/initialized, or its first request) before it lists
// anything.
func (l *listCauses) start(ss *mcp.ServerSession) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.startLocked(ss)
}

// startLocked is start, with l.mu held; it returns ss's record.
func (l *listCauses) startLocked(ss *mcp.ServerSession) *sessionSeen {
	if l.seen == nil {
		l.seen = map[*mcp.ServerSession]*sessionSeen{}
	}
	if m, ok := l.seen[ss]; ok {
		return m
	}
	m := &sessionSeen{told: map[string]uint64{}, listed: map[string]bool{}}
	for method := range listChangedParams {
		m.told[method] = l.synced
	}
	l.seen[ss] = m
	return m
}

// gave notes that ss is being given a list of method's kind: from now
// on, a change of what it lists concerns it. Noted before the list is
// made, so that a change the list may miss is told; a session whose
// notifications/initialized the SDK has not handed the gateway yet (it
// does so after answering it) starts here.
func (l *listCauses) gave(ss *mcp.ServerSession, method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.startLocked(ss).listed[method] = true
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
func (l *listCauses) since(ss *mcp.ServerSession, method string) (changes []listCause, listed, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m, known := l.seen[ss]
	if !known {
		return nil, false, false
	}
	last := m.told[method]
	ok = l.dropped[method] <= last // else some it was not told of were dropped
	for _, c := range l.causes[method] {
		if c.seq > last {
			changes = append(changes, c)
		}
	}
	m.told[method] = l.seq
	return changes, m.listed[method], ok
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
	// A sync records its changes under vs.mu: once it is free, every
	// change this notification follows is recorded.
	vs.mu.Lock()
	changes, listed, ok := vs.causes.since(ss, method)
	vs.mu.Unlock()
	if !ok {
		return true // unknown: tell it, as the SDK would
	}
	servers := map[string]config.Server{}
	for _, s := range vs.g.config().Servers {
		servers[s.Name] = s
	}
	// No changes: an earlier notification, sent after they were made,
	// covered them.
	for _, c := range changes {
		if c.all {
			return true
		}
		for name := range c.servers {
			srv := servers[name]
			if srv.Session.Owned() && (!listed || vs.g.listsOwn(srv, ss)) {
				// It lists that server from its own upstream session,
				// or will at its first list.
				continue
			}
			return true
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
