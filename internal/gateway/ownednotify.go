package gateway

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The SDK's Server sends list changes to every session at once
// (Server.AddTool and friends); it has no way to notify one session of
// anything but progress and log messages. What an owned upstream session
// tells its owner — its own list changes — is for that client alone, so
// the gateway sends it through the one public per-session notification,
// NotifyProgress, with a context that its sending middleware
// (notifyAsSending) reads to send the notification it names instead.
// What goes on the wire is then the SDK's own writing of that
// notification on the session's connection (over streamable HTTP, its
// standalone stream), exactly as Server.AddTool's would be.
//
// One the server sent on the event stream of a request of the client's
// (streamable HTTP: a tools/call's, a prompts/get's or a
// resources/read's) goes to that client on that
// request's stream instead, as directly: sent with the request's context,
// which the SDK writes on the request's stream (a call the gateway
// answers itself: on its callStream), before the request's answer — the
// upstream side hands it over before the request returns (upstream's
// noticeOrderKey), and it is sent at once, not handed off.

// notifyAsKey is the context key of the notification notifyOne sends.
type notifyAsKey struct{}

// notifyAs is a notification to send in place of the progress
// notification that carries it.
type notifyAs struct {
	method string
	params mcp.Params
}

// notifyOne sends ss, and no other session, the notification method with
// params.
func notifyOne(ctx context.Context, ss *mcp.ServerSession, method string, params mcp.Params) error {
	ctx = context.WithValue(ctx, notifyAsKey{}, notifyAs{method, params})
	return ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{})
}

// notifyAsSending is the view server's sending middleware that turns
// notifyOne's carrier into the notification it carries.
func notifyAsSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		n, ok := ctx.Value(notifyAsKey{}).(notifyAs)
		if !ok || method != "notifications/progress" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		return next(ctx, n.method, &mcp.ServerRequest[mcp.Params]{Session: ss, Params: n.params})
	}
}

// listChangedParams are the params of each list change notification.
var listChangedParams = map[string]func() mcp.Params{
	"notifications/tools/list_changed":     func() mcp.Params { return &mcp.ToolListChangedParams{} },
	"notifications/prompts/list_changed":   func() mcp.Params { return &mcp.PromptListChangedParams{} },
	"notifications/resources/list_changed": func() mcp.Params { return &mcp.ResourceListChangedParams{} },
}

// notifyWait bounds sending one owner notification, as the SDK bounds
// its own list changes.
const notifyWait = 10 * time.Second

// SessionNotify sends an owned upstream session's notification to the
// client sessions it belongs to, and to no other: the one client session
// (per_client), or its user's that used it (per_user). method is one of
// its list changes (or all three, one by one, when it died), whose lists
// that client's session then fetches anew — with the params the server
// wrote (none, or its own) when params are upstream.SentParams, else
// with the SDK's —, or a resources/updated of a
// resource its client subscribed to on it (params, with the URI as the
// client's view shows it). ctx is the one the upstream side gave it
// with: one sent on the stream of a request of one of those clients
// goes to that client on that request's stream (see above); the others
// get it as any. A client session of protocol 2026-07-28 is
// sent it on its subscriptions/listen stream, if it opted in to it
// (listen.go). It blocks only to send on a request's stream.
func (g *Gateway) SessionNotify(ctx context.Context, server string, key upstream.SessionKey, method string, params mcp.Params) {
	var update *mcp.ResourceUpdatedNotificationParams
	if method == "notifications/resources/updated" {
		if update, _ = params.(*mcp.ResourceUpdatedNotificationParams); update == nil {
			return
		}
	} else if _, ok := listChangedParams[method]; !ok {
		return
	}
	g.ownLists.invalidate(server, key, method)
	owners := g.owners.sessions(key)
	if len(owners) == 0 {
		return
	}
	if c := g.streamCall(ctx, server, key); c != nil {
		// The client would hear it on that stream directly: not held
		// back (holdBack), whatever its session said as it started.
		var out mcp.Params
		switch {
		case update != nil:
			u := *update
			u.URI = c.vs.ownResourceURI(server, update.URI)
			out = &u
		case params != nil:
			if sent, ok := params.(*upstream.SentParams); ok && sent.Raw == nil {
				break // as the server wrote it: without params
			}
			out = params
		default:
			out = listChangedParams[method]()
		}
		if err := sendOnCall(ctx, c, method, out); err != nil {
			g.logger.Debug("forwarding an owned session's notification on its request's stream failed", logKeyServer, server, logKeyMethod, method, logKeyErr, err)
		}
		if update == nil {
			g.toldOnCall(server, key, c.ss, method)
		}
		owners = slices.DeleteFunc(owners, func(ow *owner) bool { return ow.ss == c.ss })
		if len(owners) == 0 {
			return
		}
	}
	g.sessions.Add(1)
	go func() {
		defer g.sessions.Done()
		ctx, cancel := context.WithTimeout(context.Background(), notifyWait)
		defer cancel()
		for _, ow := range owners {
			if !ow.vs.spec().hasServer(server) {
				continue // a per_user session's user's session of a view without the server
			}
			if update == nil && g.holdBack(ctx, server, key, ow.ss, method) {
				continue // as directly: see owninit.go
			}
			var p mcp.Params
			uri := ""
			if update != nil {
				u := *update
				u.URI = ow.vs.ownResourceURI(server, update.URI)
				uri, p = u.URI, &u
			} else {
				p = listChangedParams[method]()
			}
			var err error
			if ip := ow.ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= protocolPerRequest {
				// A client of protocol 2026-07-28 is told only on the
				// subscriptions/listen that opted in to it (listen.go).
				_, err = g.notifyListen(ow.ss, method, uri, p)
			} else {
				if sent, ok := params.(*upstream.SentParams); ok && update == nil {
					// As the server wrote them: none, or its own.
					if p = sent; sent.Raw == nil {
						p = nil
					}
				}
				err = notifyOne(ctx, ow.ss, method, p)
			}
			if err != nil {
				g.logger.Debug("forwarding an owned session's notification failed", logKeyServer, server, logKeyMethod, method, logKeyErr, err)
			}
		}
	}()
}

// linkedCall returns the client's request ctx links to: the call, or the
// prompts/get or resources/read (asking), it was sent for, or — for what
// a server sent on that request's event stream — whose stream it came
// on; nil for none.
func linkedCall(ctx context.Context) *clientCall {
	c, _ := ctx.Value(callerKey{}).(*clientCall)
	return c
}

// streamCall returns the request of a client of owned session key on
// whose event stream server sent what it sent with ctx (streamable HTTP),
// to which it goes on that stream; nil for what it sent on its
// standalone stream, where the transport does not tell, for a request of
// no client of key's, and for a client of protocol 2026-07-28 (told on
// its subscriptions/listen, listen.go).
func (g *Gateway) streamCall(ctx context.Context, server string, key upstream.SessionKey) *clientCall {
	c := linkedCall(ctx)
	if c == nil || c.ss == nil || c.server != server || upstream.SentOutsideRequests(ctx) || !g.owners.owns(key, c.ss) || !c.vs.spec().hasServer(server) {
		return nil
	}
	if asksInResults(c.ss) {
		return nil
	}
	return c
}

// sendOnCall sends c's client the notification method with params (none
// for nil) on c's stream, as the server sent it on its own request's
// stream: with c's context, which the SDK writes there, or on the
// stream of a call the gateway answers itself, as fastSending would put
// the SDK's.
func sendOnCall(ctx context.Context, c *clientCall, method string, params mcp.Params) error {
	cctx, stop := onCall(c, ctx)
	defer stop()
	if cs, _ := cctx.Value(fastStreamKey{}).(*callStream); cs != nil {
		ok := false
		if params == nil {
			ok = cs.write([]byte(`{"jsonrpc":"2.0","method":"` + method + `"}`))
		} else {
			ok = cs.notify(method, params)
		}
		if !ok {
			return fmt.Errorf("sending %q: the call's stream is closed", method)
		}
		return nil
	}
	return notifyOne(cctx, c.ss, method, params)
}
