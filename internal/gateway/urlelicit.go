package gateway

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; clients and servers use it today, and the gateway forwards it.

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// An upstream that answers a call with error -32042 (URL elicitation
// required) is answered so to the client, unchanged: code, message and
// data, whose elicitation ids and URLs the client shows its person. When
// the upstream then says one is complete (notifications/elicitation/complete),
// the notice goes to the client session whose call was refused; from an
// owned upstream session that the gateway has no such call for, to its
// owner's sessions.

// urlElicitationAnswer returns the upstream's -32042 answer that err
// carries, as the upstream sent it, or nil.
func urlElicitationAnswer(err error) *jsonrpc.Error {
	var need *upstream.URLElicitationRequired
	var rpc *jsonrpc.Error
	if !errors.As(err, &need) || !errors.As(need.Err, &rpc) || rpc.Code != mcp.CodeURLElicitationRequired {
		return nil
	}
	out := *rpc
	return &out
}

// maxPendingElicitations bounds the elicitation ids the gateway remembers
// the client session of.
const maxPendingElicitations = 1024

// pendingElicitations remembers, per upstream server and elicitation id,
// the client session whose call the upstream refused until it completes.
type pendingElicitations struct {
	mu    sync.Mutex
	m     map[elicitationKey]*mcp.ServerSession
	order []elicitationKey
}

type elicitationKey struct{ server, id string }

// add records that ss's call to server needs the elicitations of need.
func (p *pendingElicitations) add(server string, ss *mcp.ServerSession, need *upstream.URLElicitationRequired) {
	if ss == nil {
		return // stateless: no session to tell
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[elicitationKey]*mcp.ServerSession{}
	}
	for _, id := range need.IDs() {
		k := elicitationKey{server, id}
		if _, ok := p.m[k]; !ok {
			p.order = append(p.order, k)
		}
		p.m[k] = ss
		if len(p.order) > maxPendingElicitations {
			delete(p.m, p.order[0])
			p.order = p.order[1:]
		}
	}
}

// take returns and forgets the client session waiting for id of server.
func (p *pendingElicitations) take(server, id string) *mcp.ServerSession {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := elicitationKey{server, id}
	ss := p.m[k]
	if ss != nil {
		delete(p.m, k)
	}
	return ss
}

// noteURLElicitation remembers the client session of a call that server
// refused with -32042, for its completion notice.
func (g *Gateway) noteURLElicitation(server string, ss *mcp.ServerSession, err error) {
	var need *upstream.URLElicitationRequired
	if errors.As(err, &need) {
		g.elicits.add(server, ss, need)
	}
}

// elicitationComplete forwards an upstream's notifications/elicitation/complete
// to the client session whose call needed it, else (an owned upstream
// session) to its owner's sessions. One the server sent on the event
// stream of a request of one of them (streamable HTTP) goes to that
// client on that stream, at once, as directly (sendOnCall); so does one
// the shared session sent on a request's stream that no refused call
// waits for: it belongs to that request's client. Others run on the
// upstream's reader, so they are handed off.
func (g *Gateway) elicitationComplete(ctx context.Context, server string, p *mcp.ElicitationCompleteParams) {
	var to []*mcp.ServerSession
	if ss := g.elicits.take(server, p.ElicitationID); ss != nil {
		to = append(to, ss)
	} else if k, ok := upstream.SessionKeyFrom(ctx); ok {
		for _, ow := range g.owners.sessions(k) {
			to = append(to, ow.ss)
		}
	}
	params := *p
	// (A stateless call the gateway answers itself has no session: its
	// stream is its own.)
	if c := linkedCall(ctx); c != nil && (c.ss != nil || c.stream != nil) && c.server == server && !upstream.SentOutsideRequests(ctx) &&
		(len(to) == 0 || slices.Contains(to, c.ss)) && !asksInResults(c.ss) {
		if err := sendOnCall(ctx, c, "notifications/elicitation/complete", &params); err != nil {
			g.logger.Debug("forwarding elicitation/complete on its request's stream failed", logKeyServer, server, logKeyErr, err)
		}
		to = slices.DeleteFunc(to, func(ss *mcp.ServerSession) bool { return ss == c.ss })
		if len(to) == 0 {
			return
		}
	}
	if len(to) == 0 {
		g.logger.Debug("an elicitation/complete with no client session to go to", logKeyServer, server)
		return
	}
	g.sessions.Add(1)
	go func() {
		defer g.sessions.Done()
		for _, ss := range to {
			if err := ss.NotifyElicitationComplete(context.Background(), &params); err != nil {
				g.logger.Debug("forwarding elicitation/complete failed", logKeyServer, server, logKeyErr, err)
			}
		}
	}()
}

// elicitModeDeclared refuses an upstream's elicitation in a mode the
// client session ss did not declare (capabilities.elicitation.url or
// .form; an empty elicitation object means form only), with the
// specification's invalid-params error, so that the upstream can fall
// back (a form instead of a URL, say) rather than show the client what it
// cannot handle.
func elicitModeDeclared(ss *mcp.ServerSession, p *mcp.ElicitParams) error {
	var caps *mcp.ElicitationCapabilities
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		caps = ip.Capabilities.Elicitation
	}
	if caps == nil {
		return nil // the route only picks clients that declared elicitation
	}
	url := p.Mode == "url" || (p.Mode == "" && p.URL != "")
	switch {
	case url && caps.URL == nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "the client does not support URL-mode elicitation (it declared capabilities.elicitation without url); ask in form mode instead"}
	case !url && caps.Form == nil && caps.URL != nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "the client does not support form-mode elicitation (it declared capabilities.elicitation.url only); ask in URL mode instead"}
	}
	return nil
}
