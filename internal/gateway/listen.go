package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of protocol 2026-07-28 is sent list changes and resource
// updates only on a subscriptions/listen stream it opened, and only of
// the kinds (and resource URIs) it opted in to, each tagged with _meta
// io.modelcontextprotocol/subscriptionId: the JSON-RPC id of the listen
// request. The SDK's Server answers subscriptions/listen itself and keeps
// what it agreed to unexported; what the gateway learns of it comes from
// the one message the SDK must send first on every listen stream,
// notifications/subscriptions/acknowledged, which passes through the view
// server's sending middleware (listenSending) with the agreed opt-ins, the
// subscription id, and the listen handler's context — done when the
// listen ends. An owned upstream session's list changes and resource
// updates (SessionNotify) go to the listen the SDK would send its own to.
//
// The record follows the SDK's own (mcp/server.go, subscriptionsListen):
// per client session one listen per list kind — the latest that opted in
// to it — and one per resource URI, and a listen that ends takes the
// session's list kinds with it, whichever listen last opted in to them,
// and its resource URIs. So the owned session's list changes reach the
// same listen, under the same id, as the gateway's own (the SDK's, after
// a catalog change), and stop reaching it at the same moment.

// listenSub is one listen a notification goes to.
type listenSub struct {
	id any // the listen request's id, as the SDK stamps it
	// ctx is the listen handler's context: a notification sent with its
	// values goes on that listen's stream (over streamable HTTP); it is
	// done when the listen ends.
	ctx context.Context
}

// sessionListens is what one client session's listens opted in to.
type sessionListens struct {
	kinds     map[string]listenSub // by list change method
	resources map[string]listenSub // by resource URI, as the client knows it
}

// listens holds the listens of every client session that has one open.
type listens struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]*sessionListens
}

// listKindMethods are the list change notifications and the opt-in of
// each.
var listKindMethods = []struct {
	method string
	on     func(mcp.NotificationSubscriptions) bool
}{
	{"notifications/tools/list_changed", func(n mcp.NotificationSubscriptions) bool { return n.ToolsListChanged }},
	{"notifications/prompts/list_changed", func(n mcp.NotificationSubscriptions) bool { return n.PromptsListChanged }},
	{"notifications/resources/list_changed", func(n mcp.NotificationSubscriptions) bool { return n.ResourcesListChanged }},
}

// opened records the listen of ss with id that the SDK acknowledged with
// agreed, until ctx (the listen's) is done.
func (l *listens) opened(ctx context.Context, ss *mcp.ServerSession, id any, agreed mcp.NotificationSubscriptions) {
	sub := listenSub{id: id, ctx: ctx}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[*mcp.ServerSession]*sessionListens{}
	}
	sl := l.m[ss]
	if sl == nil {
		sl = &sessionListens{kinds: map[string]listenSub{}, resources: map[string]listenSub{}}
		l.m[ss] = sl
	}
	for _, k := range listKindMethods {
		if k.on(agreed) {
			sl.kinds[k.method] = sub
		}
	}
	for _, uri := range agreed.ResourceSubscriptions {
		sl.resources[uri] = sub
	}
	l.mu.Unlock()
	context.AfterFunc(ctx, func() { l.ended(ss, agreed.ResourceSubscriptions) })
}

// ended forgets what a listen of ss that ended opted in to, as the SDK
// does: every list kind of the session, and the listen's resource URIs.
func (l *listens) ended(ss *mcp.ServerSession, uris []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sl := l.m[ss]
	if sl == nil {
		return
	}
	clear(sl.kinds)
	for _, uri := range uris {
		delete(sl.resources, uri)
	}
	if len(sl.resources) == 0 {
		delete(l.m, ss)
	}
}

// find returns the listen of ss that notification method (of resource
// uri, for resources/updated) goes to, if any.
func (l *listens) find(ss *mcp.ServerSession, method, uri string) (listenSub, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sl := l.m[ss]
	if sl == nil {
		return listenSub{}, false
	}
	var sub listenSub
	var ok bool
	if method == "notifications/resources/updated" {
		sub, ok = sl.resources[uri]
	} else {
		sub, ok = sl.kinds[method]
	}
	return sub, ok
}

// listenSending is the view server's sending middleware that records
// each subscriptions/listen the SDK acknowledges (see above).
func (g *Gateway) listenSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "notifications/subscriptions/acknowledged" {
			return res, err
		}
		ack, _ := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ack == nil || ss == nil {
			return res, err
		}
		id, ok := ack.Meta[mcp.MetaKeySubscriptionID]
		n := ack.Notifications
		if !ok || !n.ToolsListChanged && !n.PromptsListChanged && !n.ResourcesListChanged && len(n.ResourceSubscriptions) == 0 {
			return res, err // a listen for nothing ends at once
		}
		g.listens.opened(ctx, ss, id, ack.Notifications)
		return res, err
	}
}

// notifyListen sends ss the notification method with params on the
// listen it goes to (uri is the resource's, for resources/updated), with
// the listen's id in _meta, and reports whether ss had such a listen.
func (g *Gateway) notifyListen(ss *mcp.ServerSession, method, uri string, params mcp.Params) (bool, error) {
	sub, ok := g.listens.find(ss, method, uri)
	if !ok {
		return false, nil
	}
	meta := params.GetMeta()
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeySubscriptionID] = sub.id
	params.SetMeta(meta)
	// With the listen's values: its request id routes the notification to
	// its stream.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(sub.ctx), notifyWait)
	defer cancel()
	return true, notifyOne(ctx, ss, method, params)
}

// narrowListen returns req, a subscriptions/listen to a prefix: never view
// of server, asking for no more than the server's capabilities allow, as
// the SDK agrees to a listen on its own capabilities: the view declares
// every list change and subscriptions, its server perhaps not.
func (vs *viewServer) narrowListen(server string, req mcp.Request) mcp.Request {
	r, ok := req.(*mcp.SubscriptionsListenRequest)
	if !ok || r.Params == nil || r.Params.Notifications == nil {
		return req
	}
	c, err := vs.g.ups.Client(server)
	if err != nil || c.InitializeResult() == nil || c.InitializeResult().Capabilities == nil {
		return req
	}
	caps := c.InitializeResult().Capabilities
	n := *r.Params.Notifications
	n.ToolsListChanged = n.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	n.PromptsListChanged = n.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	n.ResourcesListChanged = n.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if caps.Resources == nil || !caps.Resources.Subscribe {
		n.ResourceSubscriptions = nil
	}
	p := *r.Params
	p.Notifications = &n
	out := *r
	out.Params = &p
	return &out
}
