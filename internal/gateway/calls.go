package gateway

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file routes what an upstream sends its client while it works —
// sampling, elicitation and roots requests, and log messages — to the
// client whose call caused it, on that call's own stream, as the server
// itself would send it there.
//
// A streamable-HTTP upstream sends them on the event stream of the call
// that caused them; the upstream side hands them over with the call's
// context, which links them to the call — its lean path reads that
// stream itself, and where the SDK's client reads it, its HTTP layer
// notes which request's stream each came on (upstream's standalone.go);
// what came on the server's standalone stream is marked so
// (upstream.SentOutsideRequests), and from a client's own upstream
// session goes to that client's standalone stream, as directly. The
// SDK sends whatever is sent with a context derived from a request's
// handler on that request's stream, so the gateway sends them with the
// calling request's context (values) bounded by the upstream request's
// (cancellation). On stdio, SSE and WebSocket nothing links them to a
// call: the newest call to that server whose client can answer, made on
// the upstream session that sent them, is taken.
// A call the gateway answers itself (fastpath.go) carries its own event
// stream in its context, where a sending middleware puts what the SDK
// would have written.

// clientCall is a client's tools/call while it runs: who made it and how
// to reach that client on the call's own stream.
type clientCall struct {
	vs     *viewServer
	server string
	// ss is the client's session: nil for a stateless request the gateway
	// answers itself, which has none.
	ss *mcp.ServerSession
	// level is the log level the caller asked for ("" for none: it gets
	// no log messages), as the call began.
	level mcp.LoggingLevel
	// stream is the event stream of a call the gateway answers itself;
	// nil when the SDK answers it.
	stream *callStream
	// post is the response of a call the SDK answers over streamable
	// HTTP, on which the gateway's own requests go (elicitasgiven.go).
	post *postStream
	// ctx is the call's context: what the SDK sends with a context
	// derived from it goes on the call's stream.
	ctx context.Context
	// asking is set for a prompts/get or resources/read (asking), not a
	// tools/call.
	asking bool
	// round is set for a call of a client asked in results (protocol
	// 2026-07-28): what the upstream asks its client goes in the round's
	// input-required results (inputrounds.go).
	round *inputRound
	// requestID is the id of the client's tools/call as it sent it (nil
	// where the gateway does not see it: legacy SSE and stdio, which the
	// SDK reads), for the audit trail.
	requestID json.RawMessage
	// asks are the upstream's requests forwarded to the client on this
	// call that wait for its answer (ask).
	asks callAsks
}

// callAsks are the requests of an upstream forwarded to the client of one
// call (route) while they wait for the client's answer. When the call
// has its answer, those still waiting are cancelled and waited for —
// each forward has told the client with notifications/cancelled on the
// call's stream by then — before the answer goes: a server that stops
// waiting for an answer says so before it answers the call, as the
// client sees it directly. With fast_path off the go-sdk's client reads
// the call's stream and ends its handler of such a request (the forward)
// on a goroutine of its own, which races the call's result; ending the
// forwards here puts the cancellation first, as the upstream side's lean
// path does for the requests it answers (its serverAsks).
type callAsks struct {
	mu      sync.Mutex
	ended   bool
	next    uint64
	cancels map[uint64]context.CancelFunc
	wg      sync.WaitGroup
}

// start records a forward that cancel ends; call done when it has
// returned. Once the asks have ended, a forward is cancelled at once.
func (a *callAsks) start(cancel context.CancelFunc) (done func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		cancel()
		return func() {}
	}
	if a.cancels == nil {
		a.cancels = map[uint64]context.CancelFunc{}
	}
	a.next++
	key := a.next
	a.cancels[key] = cancel
	a.wg.Add(1)
	return func() {
		a.mu.Lock()
		delete(a.cancels, key)
		a.mu.Unlock()
		a.wg.Done()
	}
}

// end cancels the forwards still waiting and waits for them to return.
func (a *callAsks) end() {
	a.mu.Lock()
	a.ended = true
	for _, cancel := range a.cancels {
		cancel()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// ask returns the context for forwarding to c's client a request the
// upstream sent with ctx (onCall), ended also when the call has its
// answer (callAsks). Call stop when the forward has returned.
func (c *clientCall) ask(ctx context.Context) (out context.Context, stop func()) {
	out, stopOn := onCall(c, ctx)
	out, cancel := context.WithCancel(out)
	done := c.asks.start(cancel)
	return out, func() {
		cancel()
		stopOn()
		done()
	}
}

// askingMethods are the requests of a client, besides tools/call, during
// which a server may ask its client (asking).
var askingMethods = map[string]bool{
	"prompts/get":         true,
	"resources/read":      true,
	"completion/complete": true,
}

// asking returns ctx for a prompts/get, resources/read or
// completion/complete (a request a server may ask its client during, as
// during a call) of client session ss to server through vs, with extra
// and meta its own. While it waits for its answer, on every view and
// session kind, the request counts as a call of the client's: what the
// server asks its client meanwhile (roots, sampling, elicitation) and
// its log messages go to this client on this request's stream, as they
// would directly — linked to it where the transport says on which
// request's stream they came (streamable HTTP), else as the newest call
// to the server. The server's progress for it reaches the client under
// the client's own progress token, on the same stream. It is also
// cancelled when the gateway shuts down (outsideCalls, StopRequests), and
// the server then told with notifications/cancelled: a client whose
// notifications/cancelled did not come before the shutdown (the go-sdk
// client sends it after its call has returned) would else hold it for
// good — the client session's close waits for this handler, which waits
// for the server, which waits for its request to the client, and the
// shared upstream session's close for the server's answer. Call done
// when the request has its answer.
func (vs *viewServer) asking(ctx context.Context, server string, ss *mcp.ServerSession, extra *mcp.RequestExtra, meta mcp.Meta) (_ context.Context, done func()) {
	if ss == nil {
		return ctx, func() {}
	}
	ctx, unhook := vs.g.outsideCalls(ctx)
	cc := &clientCall{vs: vs, server: server, ss: ss, level: vs.g.callerLevel(vs.g.config().Gateway, meta, ss), asking: true}
	if extra != nil && extra.Header != nil {
		// The request's own stream, for the gateway's requests on it
		// (elicitasgiven.go).
		cc.post = vs.g.postFor(extra.Header.Get(requestKeyHeader))
	}
	if tok, ok := meta["progressToken"]; ok && tok != nil {
		reqCtx := ctx
		ctx = upstream.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			_ = ss.NotifyProgress(reqCtx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p.Progress, Total: p.Total, Message: p.Message})
		})
		if vs.g.perClient(server) {
			// Its own session: the server sees the client's token.
			ctx = upstream.WithProgressToken(ctx, tok)
		}
	}
	ctx = context.WithValue(ctx, callerKey{}, cc)
	// The request's values, not its end: what the server asks meanwhile
	// ends when the request has returned (done), once the server has been
	// told of the cancellation — not with it, which might have the server
	// answer first (its request to the client failed), untold.
	cc.ctx = context.WithoutCancel(ctx)
	remove := vs.g.calls.add(cc)
	returned := vs.g.asking.add()
	return ctx, func() {
		cc.asks.end() // before the answer goes (callAsks)
		remove()
		unhook()
		returned()
	}
}

// roundWaiter returns the client's request that waits on c's round now,
// for a call run in rounds (inputrounds.go) while one does.
func (c *clientCall) roundWaiter() (*roundWaiter, bool) {
	if c.round == nil {
		return nil, false
	}
	return c.round.logTo()
}

// capabilities returns what the calling client declared (nil if
// nothing).
func (c *clientCall) capabilities() *mcp.ClientCapabilities {
	if c.ss == nil {
		return nil
	}
	if ip := c.ss.InitializeParams(); ip != nil {
		return ip.Capabilities
	}
	return nil
}

// callerKey is the context key of the *clientCall a tool call runs for.
type callerKey struct{}

// callRegistry holds, per upstream server, the client calls to it in
// progress, newest last.
type callRegistry struct {
	mu sync.Mutex
	m  map[string][]*clientCall
}

// add records c and returns the function that ends it.
func (r *callRegistry) add(c *clientCall) func() {
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string][]*clientCall{}
	}
	r.m[c.server] = append(r.m[c.server], c)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.m[c.server] = slices.DeleteFunc(r.m[c.server], func(x *clientCall) bool { return x == c })
		if len(r.m[c.server]) == 0 {
			delete(r.m, c.server)
		}
	}
}

// newest returns the newest call to server that ok accepts, or nil.
func (r *callRegistry) newest(server string, ok func(*clientCall) bool) *clientCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.m[server]
	for i := len(calls) - 1; i >= 0; i-- {
		if ok(calls[i]) {
			return calls[i]
		}
	}
	return nil
}

// onCall returns a context for sending to c's client what an upstream
// sent with ctx: it carries the call's values (so that it goes on the
// call's stream) and ends with either context. Call stop when done.
func onCall(c *clientCall, ctx context.Context) (out context.Context, stop func()) {
	out, cancel := context.WithCancel(context.WithoutCancel(c.ctx))
	stopUp := context.AfterFunc(ctx, cancel)
	stopCall := context.AfterFunc(c.ctx, cancel)
	return out, func() {
		stopUp()
		stopCall()
		cancel()
	}
}

// onPost returns the sink on which the gateway sends a client, itself, a
// request (sampling, elicitation, roots) the SDK is to send it with ctx
// during a call the SDK answers over streamable HTTP: the call's response
// (a postStream), while it is an open event stream, as on a lean-path
// call's stream (fastSending). When the upstream stops waiting for the
// answer (callAsks), the gateway's askRaw has told the client with
// notifications/cancelled on that stream before the forward returns,
// where the SDK sends its own on a goroutine after it, which may find the
// call's stream closed behind the call's result.
func onPost(ctx context.Context, method string, req mcp.Request) (*Gateway, rawSink, bool) {
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, rawSink{}, false
	}
	c, _ := ctx.Value(callerKey{}).(*clientCall)
	if c == nil || c.post == nil || c.stream != nil || c.vs == nil {
		return nil, rawSink{}, false
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil || ss != c.ss || ss.ID() == "" || !c.post.streaming() {
		return nil, rawSink{}, false
	}
	return c.vs.g, rawSink{write: c.post.event, prefix: ss.ID()}, true
}

// noClientFor says why an upstream's request for capability (sampling,
// elicitation) has no client to answer it: the client whose call caused
// it did not declare the capability, or no call to the server is running
// (for an owned session: none of its owner's client sessions declared it).
func noClientFor(ctx context.Context, server, capability string) error {
	if _, ok := ctx.Value(callerKey{}).(*clientCall); ok {
		return fmt.Errorf("server %s asked for %s, which the client that called it did not declare (capabilities.%s in its initialize)", server, capability, capability)
	}
	if k, ok := upstream.SessionKeyFrom(ctx); ok {
		return fmt.Errorf("server %s asked for %s in a %s session whose client did not declare it (capabilities.%s in its initialize)", server, capability, k.Mode, capability)
	}
	return fmt.Errorf("server %s asked for %s outside any call of a client that declared it", server, capability)
}

// caller returns the call whose client should answer a request server
// sent with ctx, if its client satisfies can: the call ctx belongs to,
// when the request came on that call's stream — and no other, which
// would show a client a request of someone else's call — else the newest
// call to server whose client can; from an owned upstream session, only
// its owner's calls; from the shared session, only calls made on it (not
// a call on a client's own session, which that session's server never
// saw: server-everything's roots request at the shared session's
// initialize went to a per_client client's call that ran then).
func (g *Gateway) caller(ctx context.Context, server string, can func(*mcp.ClientCapabilities) bool) *clientCall {
	capable := func(c *clientCall) bool {
		caps := c.capabilities()
		return caps != nil && can(caps)
	}
	if c, ok := ctx.Value(callerKey{}).(*clientCall); ok {
		if capable(c) {
			return c
		}
		return nil
	}
	onIt := g.madeOnSessionOf(ctx, server)
	return g.calls.newest(server, func(c *clientCall) bool { return capable(c) && onIt(c) })
}

// madeOnSessionOf returns the test of whether a call to server was made
// on the upstream session that sent what came with ctx, where nothing
// links it to a call: from an owned session, a call of its owner's;
// from the shared session, a call made on it — not one a client makes
// on its own per_client/per_user session, which the shared session's
// server never saw that client on. A session's requests (caller) and
// log messages (log) go only to such calls.
func (g *Gateway) madeOnSessionOf(ctx context.Context, server string) func(*clientCall) bool {
	if k, ok := upstream.SessionKeyFrom(ctx); ok {
		return func(c *clientCall) bool { return g.owners.owns(k, c.ss) }
	}
	srv, _ := g.config().Server(server) // not under the registry's lock
	return func(c *clientCall) bool {
		o, _ := upstream.OwnerFrom(c.ctx)
		_, owned := o.KeyFor(srv.Session) // as upstreamFor chose its session
		return !owned
	}
}

// askingOwner reports whether a request that server sent with ctx, from
// an owned upstream session and linked to no call, comes while one of its
// owner's prompts/get or resources/read (asking) whose client satisfies
// can waits for its answer, the newest of the owner's calls.
func (g *Gateway) askingOwner(ctx context.Context, server string, can func(*mcp.ClientCapabilities) bool) bool {
	k, ok := upstream.SessionKeyFrom(ctx)
	if !ok {
		return false
	}
	c := g.calls.newest(server, func(c *clientCall) bool {
		caps := c.capabilities()
		return caps != nil && can(caps) && g.owners.owns(k, c.ss)
	})
	return c != nil && c.asking
}

// ownerSession returns the client session an owned upstream session's
// request outside any call goes to: its owner's (per_client), or the
// user's newest one that satisfies can (per_user); nil for the shared
// session or when none can.
func (g *Gateway) ownerSession(ctx context.Context, can func(*mcp.ClientCapabilities) bool) *mcp.ServerSession {
	k, ok := upstream.SessionKeyFrom(ctx)
	if !ok {
		return nil
	}
	for _, ow := range g.owners.sessions(k) {
		if ip := ow.ss.InitializeParams(); ip != nil && ip.Capabilities != nil && can(ip.Capabilities) {
			return ow.ss
		}
	}
	return nil
}

// route returns where an upstream's request that server sent with ctx
// goes: the session and context that put it on the stream of the call
// that caused it, or — from an owned upstream session outside its
// owner's calls — the owner's session itself; nil when no client that
// can answer it is to be asked. Call stop when done.
func (g *Gateway) route(ctx context.Context, server string, can func(*mcp.ClientCapabilities) bool) (*mcp.ServerSession, context.Context, func()) {
	if _, owned := upstream.SessionKeyFrom(ctx); owned && upstream.SentOutsideRequests(ctx) {
		// Sent on an owned session's standalone stream: outside any
		// call, also while its owner's calls run, as the client would
		// get it. (The shared session's belongs to no one client: what
		// it brings goes to the newest call made on it that can answer
		// it, as where the transport does not tell: caller.)
		if ss := g.ownerSession(ctx, can); ss != nil {
			octx, stop := g.outsideCalls(ctx)
			return ss, octx, stop
		}
		return nil, nil, nil
	}
	if c := g.caller(ctx, server, can); c != nil {
		cctx, stop := c.ask(ctx)
		return c.ss, cctx, stop
	}
	if _, linked := ctx.Value(callerKey{}).(*clientCall); !linked {
		if ss := g.ownerSession(ctx, can); ss != nil {
			octx, stop := g.outsideCalls(ctx)
			return ss, octx, stop
		}
	}
	return nil, nil, nil
}

// StopRequests cancels, as the gateway shuts down, what its clients
// wait for upstream outside the execution engine — prompts/get,
// resources/read, completion/complete (asking), and the servers' requests
// outside any call (outsideCalls) — and waits until the clients'
// requests have returned (at most stopRequestsWait), so that each server
// is told (notifications/cancelled) while its upstream session is open:
// call it before the upstream sessions close. The SDK's client retires a
// cancelled request before it tells the server, on a goroutine of its
// own, and a session that is closing already closes at that retirement
// when nothing else is in flight, dropping the notification (the shared
// session, which the pool closes as the gateway's sessions close); a
// go-sdk server then waits on for good, and its session's DELETE for 5 s.
// Run's shutdown cancels them too.
func (g *Gateway) StopRequests() {
	g.stop()
	ctx, cancel := context.WithTimeout(context.Background(), stopRequestsWait)
	defer cancel()
	g.asking.wait(ctx)
}

// stopRequestsWait bounds StopRequests' wait: a cancelled request
// returns at once (the SDK's client does not wait for the server), its
// forwards to the client (callAsks) with it.
const stopRequestsWait = 2 * time.Second

// inFlight counts requests in flight.
type inFlight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0 while wait waits
}

// add counts a request; call done when it has returned.
func (f *inFlight) add() (done func()) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n--; f.n == 0 && f.idle != nil {
			close(f.idle)
			f.idle = nil
		}
	}
}

// wait returns when no request is in flight, or ctx is done.
func (f *inFlight) wait(ctx context.Context) {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
	}
}

// outsideCalls returns ctx, which an upstream's request outside any call
// is sent to a client session with, ended also when the gateway shuts
// down: else a client that never answers (its standalone stream open)
// would hold the shutdown for good — its session's close waits for the
// request, whose handler the upstream session's close waits for. Call
// stop when done.
func (g *Gateway) outsideCalls(ctx context.Context) (out context.Context, stop func()) {
	if g.stopping == nil {
		return ctx, func() {}
	}
	out, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(g.stopping, cancel)
	return out, func() {
		unhook()
		cancel()
	}
}

// Requests returns what answers an upstream's sampling, elicitation and
// roots requests: the client whose call caused the request (see caller),
// asked on that call's stream; for an owned upstream session, its owner's
// client, during a call or not.
func (g *Gateway) Requests(server string) upstream.ClientRequests {
	return upstream.ClientRequests{
		CreateMessage: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			ss, cctx, stop := g.route(ctx, server, func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
			if ss == nil {
				return nil, noClientFor(ctx, server, "sampling")
			}
			defer stop()
			if err := askedInCompletion(cctx, ss, server, "sampling/createMessage"); err != nil {
				return nil, err
			}
			defer g.askProgress.expect(ctx, ss, p.Meta)()
			if r := inRound(cctx); r != nil {
				return askSampling(cctx, r, p)
			}
			return ss.CreateMessage(cctx, p)
		},
		// An owned per_client session's sampling, in full: the tools,
		// includeContext and content as the server sent them, and the
		// client's answer (tool_use content) as it gave it.
		CreateMessageWithTools: func(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
			ss, cctx, stop := g.route(ctx, server, func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
			if ss == nil {
				return nil, noClientFor(ctx, server, "sampling")
			}
			defer stop()
			if err := askedInCompletion(cctx, ss, server, "sampling/createMessage"); err != nil {
				return nil, err
			}
			defer g.askProgress.expect(ctx, ss, p.Meta)()
			if r := inRound(cctx); r != nil {
				return askInRound[*mcp.CreateMessageWithToolsResult](cctx, r, p)
			}
			return ss.CreateMessageWithTools(cctx, p)
		},
		Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			ss, cctx, stop := g.route(ctx, server, func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
			if ss == nil {
				return nil, noElicitClient(ctx, server)
			}
			defer stop()
			if err := askedInCompletion(cctx, ss, server, "elicitation/create"); err != nil {
				return nil, err
			}
			p = schemaAsSent(ctx, p)
			defer g.askProgress.expect(ctx, ss, p.Meta)()
			if r := inRound(cctx); r != nil {
				if err := elicitModeDeclared(ss, p); err != nil {
					return nil, err
				}
				return askInRound[*mcp.ElicitResult](cctx, r, p)
			}
			if elicitsAsGiven(ctx) {
				// The client's own session: as the server sent it.
				c, _ := cctx.Value(callerKey{}).(*clientCall)
				sent, _ := upstream.SentRequestFrom(ctx)
				return g.elicitAsGiven(cctx, c, ss, p, sent)
			}
			if err := elicitModeDeclared(ss, p); err != nil {
				return nil, err
			}
			return elicitChecked(cctx, ss, p)
		},
		ListRoots: func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
			can := func(c *mcp.ClientCapabilities) bool { return c.RootsV2 != nil || c.Roots.ListChanged }
			// Roots belong to the client session, not to a call: an owned
			// upstream session asks its owner's session directly when
			// nothing links the request to a call (its handshake's
			// roots/list comes while the first call runs, and that call's
			// stream may close before the answer).
			// A prompts/get or resources/read of the owner's that is waiting
			// for its answer is asked on its own stream, as directly
			// (asking): the server asks during it.
			if _, linked := ctx.Value(callerKey{}).(*clientCall); !linked && !g.askingOwner(ctx, server, can) {
				if ss := g.ownerSession(ctx, can); ss != nil {
					octx, stop := g.outsideCalls(ctx)
					defer stop()
					defer g.askProgress.expect(ctx, ss, rootsMeta(p))()
					return ss.ListRoots(octx, p)
				}
			}
			ss, cctx, stop := g.route(ctx, server, can)
			if ss == nil {
				return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
			}
			defer stop()
			if err := askedInCompletion(cctx, ss, server, "roots/list"); err != nil {
				return nil, err
			}
			defer g.askProgress.expect(ctx, ss, rootsMeta(p))()
			if r := inRound(cctx); r != nil {
				if p == nil {
					p = &mcp.ListRootsParams{}
				}
				return askInRound[*mcp.ListRootsResult](cctx, r, p)
			}
			return ss.ListRoots(cctx, p)
		},
		Ping: func(ctx context.Context, p *mcp.PingParams) (json.RawMessage, error) {
			return g.serverPing(ctx, server, p)
		},
	}
}

// rootsMeta is the _meta of a roots/list (none when it has no params).
func rootsMeta(p *mcp.ListRootsParams) mcp.Meta {
	if p == nil {
		return nil
	}
	return p.Meta
}

// Events returns the notification sinks of an upstream that the gateway
// forwards to clients: log messages and resource updates. The caller
// combines them with the catalog's own.
func (g *Gateway) Events(server string) upstream.Events {
	return upstream.Events{
		ResourceUpdated: func(_ context.Context, uri string) { g.resourceUpdated(server, uri) },
		Log:             func(ctx context.Context, p *mcp.LoggingMessageParams) { g.log(ctx, server, p) },
		TaskStatus:      func(ctx context.Context, p json.RawMessage) { g.taskStatus(ctx, server, p) },
		ElicitationComplete: func(ctx context.Context, p *mcp.ElicitationCompleteParams) {
			g.elicitationComplete(ctx, server, p)
		},
	}
}

// log forwards an upstream's log message. One that belongs to a call —
// sent on its stream, or, where nothing links a message to a call (stdio,
// SSE, WebSocket), the newest call to that server whose client asked for
// log messages, made on the session that sent it (madeOnSessionOf) —
// goes on that call's stream, at once, so that it arrives before the
// call's result.
// One that belongs to no call — also one the server sent on its
// standalone stream while calls run — goes, from an owned session, to its
// owner's client sessions, else to every client of a view that shows the
// server; but the shared session of a per_client / per_user server (kept
// for the catalog) logs to no client: each has, or will have, its own
// session of that server, and directly no client sees what its server
// logs on another session. (A stateless gateway runs every call on the
// shared session, as for a shared server: nothing is held back there.)
// A per_client session's messages go as the server sent them (sendLog);
// others the SDK drops for clients below the level they set, or that
// set none.
func (g *Gateway) log(ctx context.Context, server string, p *mcp.LoggingMessageParams) {
	c, linked := ctx.Value(callerKey{}).(*clientCall)
	key, owned := upstream.SessionKeyFrom(ctx)
	asSent := owned && key.Mode == config.SessionPerClient
	if !linked && !upstream.SentOutsideRequests(ctx) {
		onIt := g.madeOnSessionOf(ctx, server)
		c = g.calls.newest(server, func(c *clientCall) bool { return (c.level != "" || asSent) && onIt(c) })
	}
	if c == nil && !owned {
		cfg := g.config()
		if srv, _ := cfg.Server(server); srv.Session.Owned() && !cfg.Gateway.Stateless {
			// Not its data: a message may carry anything.
			g.logger.Debug("a log message of the shared upstream session outside the calls made on it reaches no client: the server's clients have sessions of their own",
				logKeyServer, server, "session", string(srv.Session), "level", string(p.Level))
			return
		}
	}
	if c != nil {
		msg := c.vs.logMessage(server, p)
		if w, ok := c.roundWaiter(); ok {
			// A call run in rounds: on the client's request that waits on
			// it now.
			_ = sendLog(w.ctx, w.ss, &msg, asSent)
			return
		}
		if c.ss == nil {
			c.stream.log(&msg, c.level)
			return
		}
		cctx, stop := onCall(c, ctx)
		defer stop()
		_ = sendLog(cctx, c.ss, &msg, asSent)
		return
	}
	type delivery struct {
		ss  *mcp.ServerSession
		msg mcp.LoggingMessageParams
	}
	var out []delivery
	if owned {
		// An owned session's message outside its owner's calls: to its
		// owner's client sessions only.
		for _, ow := range g.owners.sessions(key) {
			out = append(out, delivery{ow.ss, ow.vs.logMessage(server, p)})
		}
	}
	for _, vs := range g.views(server) {
		if owned {
			break
		}
		msg := vs.logMessage(server, p)
		for ss := range vs.srv.Sessions() {
			out = append(out, delivery{ss, msg})
		}
	}
	if len(out) == 0 {
		return
	}
	// It runs on the upstream's reader: hand off, keeping the order in
	// which the messages came (each hand-off waits for the one before).
	g.logMu.Lock()
	prev, done := g.logTail, make(chan struct{})
	g.logTail = done
	g.logMu.Unlock()
	g.sessions.Add(1)
	go func() {
		defer g.sessions.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		for _, d := range out {
			_ = sendLog(context.Background(), d.ss, &d.msg, asSent)
		}
	}()
}

// sendLog sends ss a log message with ctx (on the stream ctx says). With
// asSent — the message of a per_client session, whose server logs at the
// level that client set on it (logging/setLevel), or at its own default
// before the client sets one — it goes as the server sent it, as it
// would reach the client directly; otherwise, and to a client of
// protocol 2026-07-28 (whose level travels with each request, and which
// sets none on its session), through ServerSession.Log, which drops what
// is below the client's level, and everything before it sets one.
func sendLog(ctx context.Context, ss *mcp.ServerSession, msg *mcp.LoggingMessageParams, asSent bool) error {
	if ip := ss.InitializeParams(); !asSent || ip == nil || ip.ProtocolVersion >= protocolPerRequest {
		return ss.Log(ctx, msg)
	}
	if cs, _ := ctx.Value(fastStreamKey{}).(*callStream); cs != nil {
		// A call the gateway answers itself: on its stream, as
		// fastSending would put the SDK's.
		if !cs.notify("notifications/message", msg) {
			return fmt.Errorf("sending %q: the call's stream is closed", "notifications/message")
		}
		return nil
	}
	return notifyOne(ctx, ss, "notifications/message", msg)
}

// logMessage is an upstream's log message as the view's clients see it:
// in a view that prefixes names, with the server's name as the logger
// when it names none.
func (vs *viewServer) logMessage(server string, p *mcp.LoggingMessageParams) mcp.LoggingMessageParams {
	msg := *p
	if msg.Logger == "" && vs.spec().prefixed() {
		msg.Logger = server
	}
	return msg
}

// views returns every view server (current and retired) that shows server.
func (g *Gateway) views(server string) []*viewServer {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*viewServer
	for _, vs := range g.servers {
		if vs.spec().hasServer(server) {
			out = append(out, vs)
		}
	}
	for _, vs := range g.retired {
		if vs.spec().hasServer(server) {
			out = append(out, vs)
		}
	}
	return out
}

// resourceUpdated tells the subscribed clients of every view that shows
// the resource. It runs on the upstream's reader, so it hands off.
func (g *Gateway) resourceUpdated(server, uri string) {
	for _, vs := range g.views(server) {
		exposed := ""
		vs.mu.Lock()
		for u, e := range vs.resources {
			if e.server == server && e.uri == uri {
				exposed = u
				break
			}
		}
		vs.mu.Unlock()
		if exposed == "" {
			exposed = uri // a templated resource: its URI is its own
		}
		srv := vs.srv
		g.sessions.Add(1)
		go func() {
			defer g.sessions.Done()
			_ = srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: exposed})
		}()
	}
}

// sessionLevels holds the log level each client session set with
// logging/setLevel, for the upstreams that take it per request (and
// for the client sessions' own upstream sessions). Only sessions the
// gateway sees end are kept: streamable-HTTP sessions (by id), the one
// session of serve --stdio and legacy SSE sessions.
type sessionLevels struct{ m sync.Map } // *mcp.ServerSession -> mcp.LoggingLevel

func (l *sessionLevels) set(ss *mcp.ServerSession, level mcp.LoggingLevel) { l.m.Store(ss, level) }
func (l *sessionLevels) drop(ss *mcp.ServerSession)                        { l.m.Delete(ss) }

// mostVerbose returns the most verbose of level and the levels the
// sessions set ("" if none is set).
func (l *sessionLevels) mostVerbose(level mcp.LoggingLevel) mcp.LoggingLevel {
	out := level
	l.m.Range(func(_, v any) bool {
		if lv, _ := v.(mcp.LoggingLevel); lv != "" && (out == "" || levelRank(lv) < levelRank(out)) {
			out = lv
		}
		return true
	})
	return out
}

// maxLevelWait bounds telling a newly connected upstream the log level.
const maxLevelWait = 10 * time.Second

// Connected brings a newly connected upstream in step with the clients:
// one that logs (before protocol 2026-07-28, which takes the level with
// each request) is told the most verbose level a client set — in
// stateless mode at least "info", the level the SDK gives a client's
// request — which its new session does not know: without it, a server
// sends no log messages.
func (g *Gateway) Connected(c *upstream.Client) {
	ir := c.InitializeResult()
	if ir == nil || ir.ProtocolVersion >= protocolPerRequest || c.Capabilities().Logging == nil {
		return
	}
	floor := mcp.LoggingLevel("")
	if g.config().Gateway.Stateless {
		floor = "info"
	}
	level := g.levels.mostVerbose(floor)
	if level == "" {
		return
	}
	g.sessions.Add(1)
	go func() {
		defer g.sessions.Done()
		ctx, cancel := context.WithTimeout(context.Background(), maxLevelWait)
		defer cancel()
		if err := c.Session().SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
			g.logger.Debug("telling a server the logging level failed", logKeyServer, c.Server().Name, logKeyErr, err)
		}
	}()
}

func (l *sessionLevels) get(ss *mcp.ServerSession) mcp.LoggingLevel {
	if ss == nil {
		return ""
	}
	v, _ := l.m.Load(ss)
	level, _ := v.(mcp.LoggingLevel)
	return level
}

// callerLevel is the log level a call's client asked for: the one its
// request carries (protocol 2026-07-28), else the one its session set;
// in stateless mode, where a request of an older protocol has no
// session to set one, "info", as the SDK assumes for such a request.
func (g *Gateway) callerLevel(gw config.Gateway, meta mcp.Meta, ss *mcp.ServerSession) mcp.LoggingLevel {
	if v, ok := meta[mcp.MetaKeyLogLevel].(string); ok && v != "" {
		return mcp.LoggingLevel(v)
	}
	if gw.Stateless {
		if _, newProtocol := meta[mcp.MetaKeyProtocolVersion]; !newProtocol {
			return "info"
		}
		return ""
	}
	return g.levels.get(ss)
}
