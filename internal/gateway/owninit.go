package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A server may change its lists as a session starts: server-everything
// adds tools for the client's capabilities when the client's
// notifications/initialized arrives, and says so with
// notifications/tools/list_changed on its standalone stream. Directly, a
// streamable-HTTP client gets those only if its standalone stream (GET)
// is already open then — the TypeScript SDK's client opens it only after
// the server accepted notifications/initialized, so it never does; the
// go-sdk's client opens it first, and does. Either way the client's first
// list comes after, and has the new tools.
//
// A per_client upstream session starts later than its client's session
// with the gateway — at the client's first list request — so what its
// server says as it starts would reach the client's standalone stream,
// which is open by then, whatever the client: a notification the client
// would not have had directly. So a list change of its own upstream
// session that comes while that session starts — before the client was
// first given a list from it (whole, after every change the session
// announced: loadStable); a list it is given later is fetched after the
// change anyway — is not passed on to a client that had no standalone
// stream open when it sent notifications/initialized; one that had, or
// that has one stream for everything (serve --stdio, SSE), is told, as
// directly.

// noteInitStream records whether client session ss (cs, over streamable
// HTTP) had its standalone stream open as it sent
// notifications/initialized.
func (g *Gateway) noteInitStream(cs *clientSession, ss *mcp.ServerSession) {
	if cs.id == "" {
		return // stateless
	}
	if _, ok := g.streams.conns.Load(ss); ok {
		return // one stream for everything
	}
	if _, ok := g.streams.standalone.Load(cs.id); !ok {
		g.streamlessAtInit.Store(ss, struct{}{})
	}
}

// beforeFirstList reports whether a list change of server's
// owned session key is one client session ss is not to be told: ss is
// that session's per_client owner, had no standalone stream open at its
// initialized, and has not yet been given any list from the session.
func (g *Gateway) beforeFirstList(server string, key upstream.SessionKey, ss *mcp.ServerSession) bool {
	if key.Mode != config.SessionPerClient {
		return false
	}
	if _, ok := g.streamlessAtInit.Load(ss); !ok {
		return false
	}
	e := g.ownLists.peek(server, key)
	if e == nil {
		return true // it has listed nothing from it yet
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.stable) == 0
}
