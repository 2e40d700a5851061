package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A prefix: never view of one per_client server is that server to each
// of its clients, pings included. Directly, a client's ping is answered
// by the server (it tells the client the server is alive, and how fast it
// answers), and a server's by its client. So on such a view:
//
//   - a client's ping goes to its own upstream session — opened if it is
//     not open yet, as by any first request — and the client gets the
//     server's answer as the server wrote it, or the server's error as
//     it gave it, or, when the server cannot be reached, a JSON-RPC
//     error saying so (pingMiddleware);
//   - a server's ping on a client's own session goes to that client, on
//     the stream the server sent it on — a call's stream during a call,
//     else the client's standalone stream, as its other requests
//     (route) — and the server gets the client's answer as the client
//     gave it, or, when no stream of the client's can carry it, an
//     error, as it would directly (serverPing).
//
// Elsewhere — a view of several servers or that prefixes names, a
// shared or per_user server, stateless mode — pings stay the gateway's:
// the gateway answers a client's, and the upstream session a server's.
// The gateway's health pings of its upstream sessions are its own
// (Client.Ping, from the supervisor) and never reach a client.

// pingServer returns the server whose client's pings on vs go to the
// client's own upstream session: the one server of a prefix: never view,
// when it is per_client and the gateway keeps sessions; "" otherwise.
func (vs *viewServer) pingServer() string {
	server := vs.soleServer()
	if server == "" || !vs.g.perClient(server) {
		return ""
	}
	return server
}

// pingMiddleware answers a client's ping on a view that is its
// per_client server (pingServer) with the server's own answer on the
// client's upstream session.
func (vs *viewServer) pingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "ping" {
			return next(ctx, method, req)
		}
		server := vs.pingServer()
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if server == "" || ss == nil {
			return next(ctx, method, req)
		}
		var meta mcp.Meta
		if p, _ := req.GetParams().(*mcp.PingParams); p != nil {
			meta = p.Meta
		}
		params := map[string]any{}
		if fm := forwardMeta(meta); fm != nil {
			params["_meta"] = fm
		}
		octx := vs.owned(ctx, req.GetExtra(), meta, ss)
		c, err := vs.g.upstreamFor(octx, server)
		if err != nil {
			return nil, pingUnreachable(server, err)
		}
		raw, err := c.Request(octx, "ping", params)
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			out := *werr // as the server gave it (soleError)
			return nil, &out
		case err != nil:
			return nil, pingUnreachable(server, err)
		}
		return &asGivenResult{raw: raw}, nil
	}
}

// pingUnreachable is the error a client's ping gets when its server
// cannot be asked: an internal error (-32603) that says so.
func pingUnreachable(server string, err error) error {
	out := upstreamError(server, err)
	var ce *codedError
	if errors.As(out, &ce) {
		ce.msg = fmt.Sprintf("ping: server %s cannot be reached: %s", server, ce.msg)
	}
	return out
}

// serverPing answers a ping server sent with ctx: from a client's own
// per_client session of a view that is that server (pingServer), with
// the answer of the client, asked on the stream the server sent it on
// (route); anywhere else nil, nil — the upstream session answers it
// itself.
func (g *Gateway) serverPing(ctx context.Context, server string, p *mcp.PingParams) (json.RawMessage, error) {
	k, owned := upstream.SessionKeyFrom(ctx)
	if !owned || k.Mode != config.SessionPerClient {
		return nil, nil
	}
	owners := g.owners.sessions(k)
	if len(owners) == 0 || owners[0].vs.pingServer() != server {
		return nil, nil
	}
	if ip := owners[0].ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= protocolPerRequest {
		return nil, nil // no ping in that protocol: the server would not send one
	}
	ss, cctx, stop := g.route(ctx, server, func(*mcp.ClientCapabilities) bool { return true })
	if ss == nil {
		return nil, fmt.Errorf("server %s pinged its client, whose session is gone", server)
	}
	defer stop()
	c, _ := cctx.Value(callerKey{}).(*clientCall)
	if c != nil && c.round != nil {
		return nil, nil // a client asked in results: the session answers
	}
	sink, ok := g.sinkFor(c, ss)
	if !ok {
		if c != nil {
			return nil, fmt.Errorf("server %s pinged its client during a call whose stream cannot carry it", server)
		}
		return nil, fmt.Errorf("server %s pinged its client outside a call, and the client has no stream open to carry it (no standalone GET stream)", server)
	}
	var params any = struct{}{}
	if p != nil && p.Meta != nil {
		params = p
	}
	return g.askRaw(cctx, sink, "ping", params)
}
