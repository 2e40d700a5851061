package gateway

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server may change its lists as a session starts: server-everything
// adds tools for the client's capabilities when the client's
// notifications/initialized arrives, and says so with
// notifications/tools/list_changed on its standalone stream. Directly, a
// streamable-HTTP client gets those only if its standalone stream (GET)
// is already open as it sends notifications/initialized — the TypeScript
// SDK's client opens it only after the server accepted that
// notification, so it never does; the go-sdk's client opens it first, and
// does. Either way the client's first list comes after, and has the new
// tools.
//
// An owned upstream session starts later than its client's session with
// the gateway — at the client's first list request — so what its server
// says as it starts would reach the client's standalone stream, which is
// open by then, whatever the client: a notification the client would not
// have had directly. So a client that would not have heard it directly is
// not told of a list change of its own upstream session until it was
// given a first list from the session, and then only of one that changed
// what the session listed of that kind as it was given its first list, or
// later the list of that kind it was given: the change may have been said
// before that list was fetched and read after it, for the server's
// notification and its answer to the list come on two streams that the
// upstream client reads apart. Once told of a change of a kind, a client
// is told of every later one, as directly; so is it of a change of a kind
// the gateway had not fetched from the session by then.
//
// A client would not have heard it directly unless it opened the session
// (a per_user session is opened by the first of its user's clients to
// list from it: to the others what its server says as it starts is
// someone else's start) and its standalone stream was open as it sent
// notifications/initialized, or it has one stream for everything
// (serve --stdio, SSE).

// initializedPosted records, as the POST of a streamable-HTTP client's
// notifications/initialized for session sid arrives, whether the
// session's standalone stream is open. It is read by noteInitStream, which
// the SDK runs only after it has answered that POST (202): by then the
// client may have opened its stream.
func (g *Gateway) initializedPosted(sid string) {
	_, open := g.streams.standalone.Load(sid)
	g.initPosted.Store(sid, open)
}

// noteInitStream records whether client session ss (cs, over streamable
// HTTP) had its standalone stream open as it sent
// notifications/initialized.
func (g *Gateway) noteInitStream(cs *clientSession, ss *mcp.ServerSession) {
	if cs.id == "" {
		return // stateless
	}
	posted, known := g.initPosted.LoadAndDelete(cs.id)
	if _, ok := g.streams.conns.Load(ss); ok {
		return // one stream for everything
	}
	open, _ := posted.(bool)
	if !known {
		_, open = g.streams.standalone.Load(cs.id)
	}
	if !open {
		g.streamlessAtInit.Store(ss, struct{}{})
	}
}

// startupState is what an owned session's lists (ownList) know of its
// client sessions, to tell them of its list changes as directly.
type startupState struct {
	opener *mcp.ServerSession                       // the client session that first listed from it
	sum    map[string]uint64                        // by kind: a digest of the list last fetched
	given  map[*mcp.ServerSession]map[string]uint64 // by client session and kind: the digest of the list it was last given (or that the session had at its first)
	told   map[*mcp.ServerSession]map[string]bool   // by client session and kind: told of a change of it
}

// listedBy records that client session ss lists from e: the first to
// is the one that opened its session.
func (e *ownList) listedBy(ss *mcp.ServerSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.opener == nil {
		e.st.opener = ss
	}
}

// gave records that client session ss is being given e's list of kind.
func (e *ownList) gave(ss *mcp.ServerSession, kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.given == nil {
		e.st.given = map[*mcp.ServerSession]map[string]uint64{}
	}
	if e.st.given[ss] == nil {
		// Its first list from the session: what the session lists of
		// the kinds fetched so far is what it starts from.
		e.st.given[ss] = maps.Clone(e.st.sum)
	}
	e.st.given[ss][kind] = e.st.sum[kind]
}

// forget drops what e knows of client session ss, which ended.
func (e *ownList) forget(ss *mcp.ServerSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.st.given, ss)
	delete(e.st.told, ss)
}

// listKindOf is the kind of list a list_changed method is of.
func listKindOf(method string) string {
	return strings.TrimSuffix(strings.TrimPrefix(method, "notifications/"), "/list_changed")
}

// listDigest is a digest of a list's entries as the server gave them.
func listDigest(lists ...any) uint64 {
	h := fnv.New64a()
	enc := json.NewEncoder(h)
	for _, l := range lists {
		_ = enc.Encode(l) // entries the SDK decoded encode again
	}
	return h.Sum64()
}

// heardDirectly reports whether client session ss would have heard,
// directly, what server's owned session key says as it starts.
func (g *Gateway) heardDirectly(e *ownList, key upstream.SessionKey, ss *mcp.ServerSession) bool {
	if _, ok := g.streamlessAtInit.Load(ss); ok {
		return false
	}
	if key.Mode == config.SessionPerClient {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.opener == ss
}

// holdBack reports whether a change of the kind of list of server's owned
// session key (a list_changed method) is one client session ss is not to
// be told of (see above). It may fetch the list again to tell, and marks
// ss told when it is not held back.
func (g *Gateway) holdBack(ctx context.Context, server string, key upstream.SessionKey, ss *mcp.ServerSession, method string) bool {
	e := g.ownLists.peek(server, key)
	if e == nil {
		// Nothing listed from it yet: whatever is listed is fetched
		// after. Its per_client owner is told if it would have been
		// directly; who opens a per_user one is not known yet.
		_, streamless := g.streamlessAtInit.Load(ss)
		return streamless || key.Mode != config.SessionPerClient
	}
	if g.heardDirectly(e, key, ss) {
		return false
	}
	kind := listKindOf(method)
	e.mu.Lock()
	given, ok := e.st.given[ss][kind]
	listed := len(e.st.given[ss]) > 0
	told := e.st.told[ss][kind]
	e.mu.Unlock()
	switch {
	case !listed:
		return true // its first list is fetched after this
	case !ok, told:
		return false
	}
	select {
	case <-e.c.Done():
		// The session died: its owner lists from a new one.
	default:
		if err := e.load(ctx, server, kind); err == nil {
			e.mu.Lock()
			same := e.st.sum[kind] == given
			e.mu.Unlock()
			if same {
				return true // what it was given has it already
			}
		}
	}
	e.markTold(ss, kind)
	return false
}

// toldOnCall notes that client session ss was told of a change of the
// kind of list of server's owned session key (a list_changed method) on
// the stream of one of its requests, where the server sent it: it would
// have heard it directly, and so hears the next ones of that kind as
// holdBack has it.
func (g *Gateway) toldOnCall(server string, key upstream.SessionKey, ss *mcp.ServerSession, method string) {
	if e := g.ownLists.peek(server, key); e != nil {
		e.markTold(ss, listKindOf(method))
	}
}

// markTold notes that ss has been told of a change of the kind of list.
func (e *ownList) markTold(ss *mcp.ServerSession, kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.told == nil {
		e.st.told = map[*mcp.ServerSession]map[string]bool{}
	}
	if e.st.told[ss] == nil {
		e.st.told[ss] = map[string]bool{}
	}
	e.st.told[ss][kind] = true
}
