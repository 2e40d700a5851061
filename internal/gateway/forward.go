package gateway

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// callTool returns the handler of one tool of the view, for requests the
// SDK dispatches (see fastpath.go for the ones the gateway answers
// itself).
func (vs *viewServer) callTool(e toolEntry) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := vs.handleCall(ctx, req, e)
		var refused *roundRefused
		if errors.As(err, &refused) {
			user, session := vs.identity(req.Extra, req.Params.Meta, req.Session)
			_ = vs.g.eng.Refuse(ctx, vs.request(e.server, e.name, req.Params.Arguments, req.Params.Meta, user, session), refused.err)
			return nil, refused.rpc()
		}
		if rpc := rpcAnswer(err); rpc != nil {
			return nil, rpc // as the upstream answered
		}
		if err != nil {
			return errorResult(err), nil
		}
		return res.CallToolResult, nil
	}
}

// handleCall runs a tools/call the SDK dispatched as a call of e: with the
// caller's identity, its progress token and, in stateless mode, ended
// when its request is.
func (vs *viewServer) handleCall(ctx context.Context, req *mcp.CallToolRequest, e toolEntry) (*toolcall.Result, error) {
	user, session := vs.identity(req.Extra, req.Params.Meta, req.Session)
	notify := progressTo(ctx, req.Session, req.Params.GetProgressToken())
	var requestID json.RawMessage
	var post *postStream
	if req.Extra != nil && req.Extra.Header != nil {
		key := req.Extra.Header.Get(requestKeyHeader)
		var leave func()
		ctx, leave = vs.g.reqCalls.join(ctx, key)
		defer leave()
		requestID = vs.g.reqCalls.id(key)
		post = vs.g.postFor(key)
	}
	cc := &clientCall{vs: vs, ss: req.Session, level: vs.g.callerLevel(vs.g.config().Gateway, req.Params.Meta, req.Session), requestID: requestID, post: post}
	if asksInResults(req.Session) {
		// A client of protocol 2026-07-28 takes no requests: what the
		// upstream asks it goes in results (inputrounds.go).
		return vs.callInRounds(ctx, cc, e, req.Params, user, notify, func(ctx context.Context) (*toolcall.Result, error) {
			ctx = vs.inputResponses(ctx, e.server, req.Session, req.Params.InputResponses, req.Params.RequestState)
			var progress func(toolcall.Progress)
			if notify != nil {
				// To the request that waits on the call at the time.
				progress = cc.round.progress
			}
			return vs.call(ctx, cc, e, req.Params.Arguments, req.Params.Meta, user, session, progress)
		})
	}
	ctx = vs.inputResponses(ctx, e.server, req.Session, req.Params.InputResponses, req.Params.RequestState)
	return vs.call(ctx, cc, e, req.Params.Arguments, req.Params.Meta, user, session, notify)
}

// call runs cc, a call of a tool of the view, through the execution
// engine: arguments as the raw JSON the client sent, and the caller's
// identity and log level. While it runs, what the upstream sends its
// client goes to cc's client (calls.go).
func (vs *viewServer) call(ctx context.Context, cc *clientCall, e toolEntry, args json.RawMessage, reqMeta mcp.Meta, user, session string, notify func(toolcall.Progress)) (*toolcall.Result, error) {
	creq := vs.request(e.server, e.name, args, reqMeta, user, session)
	creq.OnProgress = notify
	creq.RequestID = cc.requestID
	if cc.round != nil {
		creq.InputRounds = cc.round.roundCount
	}
	vs.checkAs(&creq, e, cc.ss, args)
	cc.vs, cc.server = vs, e.server
	ctx = vs.g.withOwner(ctx, vs, cc.ss, user)
	ctx = context.WithValue(ctx, callerKey{}, cc)
	cc.ctx = ctx
	done := vs.g.calls.add(cc)
	defer done()
	if cc.level != "" {
		ctx = upstream.WithLogLevel(ctx, cc.level)
	}
	ctx = upstream.WithIdentity(ctx, upstream.Identity{User: user, Session: session})
	if tok, ok := reqMeta["progressToken"]; ok && notify != nil && vs.g.perClient(e.server) && cc.ss != nil {
		// Its own session: the server sees the client's token.
		ctx = upstream.WithProgressToken(ctx, tok)
	}
	res, err := vs.g.eng.Call(ctx, creq)
	// What the upstream asked the client and has not had answered ends
	// before the call's answer goes (callAsks).
	cc.asks.end()
	if err != nil {
		vs.g.noteURLElicitation(e.server, cc.ss, err)
		if rpc := serverRPCError(err); rpc != nil && creq.Unvalidated {
			return nil, &answeredByServer{rpc: rpc, err: err}
		}
	}
	if err != nil || res == nil {
		return res, err
	}
	if r := res.CallToolResult; r != nil {
		r.Meta = hopless(r.Meta)
		if r.InputRequests == nil && r.RequestState == "" && !r.NeedsInput() {
			// A complete result, without the resultType of the upstream's
			// hop (2026-07-28): the SDK gives a client of that version its
			// own, and one of an older version has none.
			res.CallToolResult = &mcp.CallToolResult{Meta: r.Meta, Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}
		} else if len(r.Content) == 0 {
			// A result that asks for input has no content: sent as the
			// server's SDK sends none (null), not as an empty list.
			r.Content = nil
		}
	}
	return res, err
}

// checkAs says what creq, client session ss's call of e with args, is
// checked against: the definition the client was listed (its own
// upstream session's, for a tool only that session lists), and nothing
// on a view that is the server (isTheServer), which leaves the checks
// to the server and sends the arguments as the client sent them (none,
// not {}, when it sent none).
func (vs *viewServer) checkAs(creq *toolcall.Request, e toolEntry, ss *mcp.ServerSession, args json.RawMessage) {
	creq.Def = e.own
	if creq.Unvalidated = vs.isTheServer(e.server, ss); creq.Unvalidated && len(args) == 0 {
		creq.RawArguments = nil
	}
}

// isTheServer reports whether a call of client session ss to server
// through this view is to be answered as the server itself would answer
// it: the view shows server alone, under its own names (prefix: never,
// soleServer), and the call goes on the client's own upstream session
// (session: per_client; a request without a client session — stateless
// — goes on the shared one). Such a call leaves to the server the checks
// it makes itself (toolcall.Request.Unvalidated: an unknown tool,
// arguments that fail the schema), and a JSON-RPC error the server
// answers it with reaches the client as the server sent it
// (answeredByServer). A view of several servers (which the configuration
// refuses with prefix: never) is none of them: a name none of them lists
// stays the gateway's not_found.
func (vs *viewServer) isTheServer(server string, ss *mcp.ServerSession) bool {
	return ss != nil && vs.soleServer() == server && vs.g.perClient(server) // a prefixed view stops at soleServer
}

// inputResponses returns ctx for a request of client session ss to
// server that carries responses and state, the client's answers to the
// input requests of the server's previous result and its request state
// (protocol 2026-07-28), on a view that is the server (isTheServer):
// there the server's input requests reach the client as the server sent
// them (its own upstream session does not answer them:
// upstream.Owner.PassInputRequests), and its answers go back as it gave
// them. Elsewhere the gateway's upstream session answers the server
// itself, and ctx is returned unchanged.
func (vs *viewServer) inputResponses(ctx context.Context, server string, ss *mcp.ServerSession, responses mcp.InputResponseMap, state string) context.Context {
	if (responses == nil && state == "") || !vs.isTheServer(server, ss) {
		return ctx
	}
	return upstream.WithInputResponses(ctx, responses, state)
}

// answeredByServer is a call's failure that its server answered with a
// JSON-RPC error, on a view that is the server (isTheServer): the client
// gets rpc, as the server sent it; err is the engine's error, the cause.
type answeredByServer struct {
	rpc *jsonrpc.Error
	err error
}

func (e *answeredByServer) Error() string { return e.err.Error() }

// Unwrap returns the engine's error.
func (e *answeredByServer) Unwrap() error { return e.err }

// serverRPCError returns the JSON-RPC error a call's server answered it
// with, as the server sent it (code, message, data), or nil when the
// call failed otherwise: Switchboard refused it, the connection failed.
func serverRPCError(err error) *jsonrpc.Error {
	switch fault.KindOf(err) {
	case fault.Protocol, fault.Validation: // how the upstream side classifies a server's JSON-RPC error
	default:
		return nil
	}
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		return nil
	}
	out := *rpc
	return &out
}

// rpcAnswer returns the JSON-RPC error a client's call is answered with
// as its server answered it — a -32042 (URL elicitation required) on
// every view, any other on a view that is the server (answeredByServer)
// — or nil: the call's failure is then an isError result (errorResult).
func rpcAnswer(err error) *jsonrpc.Error {
	if rpc := urlElicitationAnswer(err); rpc != nil {
		return rpc
	}
	var ab *answeredByServer
	if errors.As(err, &ab) {
		out := *ab.rpc
		return &out
	}
	return nil
}

// owned returns ctx for a request of client session ss (with extra and
// meta): on a per_client or per_user server it goes to the session's (or
// its user's) own upstream session.
func (vs *viewServer) owned(ctx context.Context, extra *mcp.RequestExtra, meta mcp.Meta, ss *mcp.ServerSession) context.Context {
	user, _ := vs.identity(extra, meta, ss)
	return vs.g.withOwner(ctx, vs, ss, user)
}

// withLevel returns ctx carrying the log level of the client that sent a
// request with meta in session ss, for upstreams that take it per
// request (protocol 2026-07-28).
func (vs *viewServer) withLevel(ctx context.Context, meta mcp.Meta, ss *mcp.ServerSession) context.Context {
	if level := vs.g.callerLevel(vs.g.config().Gateway, meta, ss); level != "" {
		return upstream.WithLogLevel(ctx, level)
	}
	return ctx
}

// hopless returns the _meta of an upstream's result without the keys of
// the upstream's hop (hopMeta: on protocol 2026-07-28 its serverInfo, say),
// which describe the gateway's connection to it, not the client's to the
// gateway; nil when nothing is left.
func hopless(m mcp.Meta) mcp.Meta {
	out := forwardMeta(m)
	if out == nil {
		return nil
	}
	return out
}

// request is the engine's request for a client's call of server's tool.
func (vs *viewServer) request(server, tool string, args json.RawMessage, reqMeta mcp.Meta, user, session string) toolcall.Request {
	meta := forwardMeta(reqMeta)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return toolcall.Request{
		Server:       server,
		Tool:         tool,
		RawArguments: args,
		Source:       toolcall.SourceGateway,
		Identity:     user,
		SessionID:    session,
		Meta:         meta,
	}
}

// hopMeta are the _meta keys of a client's request that belong to its
// hop to the gateway rather than to what it asks: its progress token (the
// gateway asks upstream with its own) and the per-request protocol fields
// of protocol 2026-07-28 — the version, the client's identity and
// capabilities, its log level, a subscription, a server's identity. The
// upstream connection sends its own; a client's would tell a server on
// an older protocol version that the request is of one it does not speak.
var hopMeta = map[string]bool{
	"progressToken":               true,
	mcp.MetaKeyProtocolVersion:    true,
	mcp.MetaKeyClientInfo:         true,
	mcp.MetaKeyClientCapabilities: true,
	mcp.MetaKeyLogLevel:           true,
	mcp.MetaKeySubscriptionID:     true,
	mcp.MetaKeyServerInfo:         true,
}

// forwardMeta returns the _meta of a client's request as it is forwarded
// upstream: without the keys of its hop (hopMeta); nil when nothing is
// left.
func forwardMeta(m mcp.Meta) map[string]any {
	var out map[string]any
	for k, v := range m {
		if hopMeta[k] {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
		}
		out[k] = v
	}
	return out
}

// identity returns who a request is made for and in which session: the
// identity fixed for the view server, else the token's user, else — for
// a trusted local caller (any client of a gateway without tokens, which
// listens on loopback only; serve --stdio) — the user id the client put
// in _meta when there are no tokens, or gateway.default_user.
func (vs *viewServer) identity(extra *mcp.RequestExtra, meta mcp.Meta, ss *mcp.ServerSession) (user, session string) {
	spec, gw := vs.spec(), vs.g.config().Gateway
	switch {
	case spec.user != "":
		user = spec.user
	case extra != nil && extra.TokenInfo != nil:
		user = extra.TokenInfo.UserID
	default:
		user = callerUser(gw, meta, spec.local)
	}
	if ss != nil {
		session = ss.ID()
	}
	if session == "" && !gw.AuthRequired() {
		session, _ = meta["session_id"].(string)
	}
	return user, session
}

// callerUser is the user of a caller without a token (config.Gateway's
// TrustedUser): the _meta user_id it sent, when the gateway has no
// tokens, else default_user for a trusted caller.
func callerUser(gw config.Gateway, meta mcp.Meta, local bool) string {
	claimed, _ := meta["user_id"].(string)
	return gw.TrustedUser(claimed, local)
}

// errorResult turns a failed call into a tool result with isError set,
// whose text is the structured error (seed 002's form), so that a model
// can read what went wrong and how to fix it.
func errorResult(err error) *mcp.CallToolResult {
	fe := fault.As(err)
	if fe == nil {
		fe = fault.Wrap(fault.Internal, err, "the call failed")
	}
	text, jerr := json.Marshal(fe)
	if jerr != nil {
		text = []byte(fe.Error())
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// upstreamError makes an upstream failure something the SDK sends as a
// JSON-RPC error: protocol errors (JSON-RPC errors) pass through with
// their code; anything else (the server could not be reached, say) is an
// internal error (-32603) whose message names the server.
func upstreamError(server string, err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		// Servers on the TypeScript SDK put "MCP error -32602: " in the
		// message itself, which their clients then prefix again.
		out := *werr
		out.Message = strings.TrimPrefix(out.Message, fmt.Sprintf("MCP error %d: ", out.Code))
		return &out
	}
	msg := err.Error()
	if fe := fault.As(err); fe != nil {
		msg = fmt.Sprintf("%s: %s", server, fe.Message)
	}
	return &codedError{code: jsonrpc.CodeInternalError, msg: msg, err: err}
}

// soleError is upstreamError for a request on a view that shows one server
// under its own names (soleServer): there the client sees the server as if
// directly, so a JSON-RPC error the server answered with reaches it as
// given — code, message (a TypeScript server's "MCP error N: " prefix
// included) and data.
func (vs *viewServer) soleError(server string, err error) error {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && server != "" && vs.soleServer() == server {
		out := *werr
		return &out
	}
	return upstreamError(server, err)
}

// readSole forwards resources/read of a URI the view does not list to the
// view's one server (soleServer), which answers it as it would directly:
// a resource it has but did not list, or its own error. What the server
// asks meanwhile reaches a client of 2026-07-28 in rounds, as for a
// listed resource (readInRounds). handled is false on every other view,
// where the SDK's "Resource not found" stands.
func (vs *viewServer) readSole(ctx context.Context, req *mcp.ReadResourceRequest) (res *mcp.ReadResourceResult, handled bool, err error) {
	server := vs.soleServer()
	if server == "" || req.Params.URI == "" {
		return nil, false, nil
	}
	if _, listed := vs.routeURI(req.Params.URI); listed {
		return nil, false, nil
	}
	if _, own := vs.ownResource(req.Session, req.Params.URI); own {
		return nil, false, nil
	}
	ctx = vs.owned(ctx, req.Extra, req.Params.Meta, req.Session)
	c, err := vs.g.upstreamFor(ctx, server)
	if err != nil {
		return nil, true, upstreamError(server, err)
	}
	res, err = vs.readInRounds(ctx, req, server, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		ctx = vs.inputResponses(ctx, server, req.Session, req.Params.InputResponses, req.Params.RequestState)
		res, err := c.ReadResource(vs.withLevel(ctx, req.Params.Meta, req.Session), req.Params.URI)
		vs.g.forwarded("resources/read", err)
		if err != nil {
			return nil, vs.soleError(server, err)
		}
		res.Meta = hopless(res.Meta)
		return res, nil
	})
	if err != nil {
		return nil, true, err
	}
	return asHandledRead(res), true, nil
}

// codedError is an error the gateway answers a client's request with: a
// JSON-RPC error with code (the SDK takes it from the *jsonrpc.Error in
// the chain) and msg, keeping its cause.
type codedError struct {
	code int64
	msg  string
	err  error
}

func (e *codedError) Error() string { return e.msg }

// Unwrap returns the cause and the JSON-RPC error the client is sent.
func (e *codedError) Unwrap() []error {
	return []error{e.err, &jsonrpc.Error{Code: e.code, Message: e.msg}}
}

// getPrompt returns the handler of one prompt of the view.
func (vs *viewServer) getPrompt(e promptEntry) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		ctx = vs.owned(ctx, req.Extra, req.Params.Meta, req.Session)
		c, err := vs.g.upstreamFor(ctx, e.server)
		if err != nil {
			return nil, upstreamError(e.server, err)
		}
		get := func(ctx context.Context) (*mcp.GetPromptResult, error) {
			ctx = vs.inputResponses(ctx, e.server, req.Session, req.Params.InputResponses, req.Params.RequestState)
			res, err := c.GetPrompt(vs.withLevel(ctx, req.Params.Meta, req.Session), e.name, req.Params.Arguments)
			vs.g.forwarded("prompts/get", err)
			if err != nil {
				return nil, upstreamError(e.server, err)
			}
			res.Meta = hopless(res.Meta)
			return res, nil
		}
		if asksInResults(req.Session) {
			// What the server asks a client of 2026-07-28 meanwhile goes
			// in results (inputrounds.go).
			user, _ := vs.identity(req.Extra, req.Params.Meta, req.Session)
			res, err := askingInRounds(ctx, vs, e.server, req.Session, req.Params.Meta, user, fmt.Sprintf("prompts/get %q", req.Params.Name),
				req.Params.InputResponses, req.Params.RequestState, get, func(reqs mcp.InputRequestMap, state string) *mcp.GetPromptResult {
					return &mcp.GetPromptResult{InputRequests: reqs, RequestState: state}
				})
			return res, roundError(err)
		}
		ctx, done := vs.asking(ctx, e.server, req.Session, req.Extra, req.Params.Meta)
		defer done()
		return get(ctx)
	}
}

// roundError is the error a client's prompts/get or resources/read is
// answered with: for a request state or answers the gateway refused, a
// -32602 error saying what is wrong.
func roundError(err error) error {
	var refused *roundRefused
	if errors.As(err, &refused) {
		return refused.rpc()
	}
	return err
}

// readInRounds reads uri of server for the client of req as read does,
// in rounds when the client is asked in results (asksInResults; see
// getPrompt).
func (vs *viewServer) readInRounds(ctx context.Context, req *mcp.ReadResourceRequest, server string, read func(context.Context) (*mcp.ReadResourceResult, error)) (*mcp.ReadResourceResult, error) {
	if !asksInResults(req.Session) {
		ctx, done := vs.asking(ctx, server, req.Session, req.Extra, req.Params.Meta)
		defer done()
		return read(ctx)
	}
	user, _ := vs.identity(req.Extra, req.Params.Meta, req.Session)
	res, err := askingInRounds(ctx, vs, server, req.Session, req.Params.Meta, user, fmt.Sprintf("resources/read %q", req.Params.URI),
		req.Params.InputResponses, req.Params.RequestState, read, func(reqs mcp.InputRequestMap, state string) *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{InputRequests: reqs, RequestState: state}
		})
	return res, roundError(err)
}

// readResource returns the handler of one resource of the view.
func (vs *viewServer) readResource(e resourceEntry, exposed string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx = vs.owned(ctx, req.Extra, req.Params.Meta, req.Session)
		c, err := vs.g.upstreamFor(ctx, e.server)
		if err != nil {
			return nil, upstreamError(e.server, err)
		}
		return vs.readInRounds(ctx, req, e.server, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
			ctx = vs.inputResponses(ctx, e.server, req.Session, req.Params.InputResponses, req.Params.RequestState)
			res, err := c.ReadResource(vs.withLevel(ctx, req.Params.Meta, req.Session), e.uri)
			vs.g.forwarded("resources/read", err)
			if err != nil {
				return nil, vs.soleError(e.server, err)
			}
			res.Meta = hopless(res.Meta)
			if exposed != e.uri {
				for _, rc := range res.Contents {
					if rc != nil && rc.URI == e.uri {
						rc.URI = exposed
					}
				}
			}
			return res, nil
		})
	}
}

// readTemplate returns the handler of one resource template of the view.
func (vs *viewServer) readTemplate(e resourceEntry) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx = vs.owned(ctx, req.Extra, req.Params.Meta, req.Session)
		c, err := vs.g.upstreamFor(ctx, e.server)
		if err != nil {
			return nil, upstreamError(e.server, err)
		}
		return vs.readInRounds(ctx, req, e.server, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
			ctx = vs.inputResponses(ctx, e.server, req.Session, req.Params.InputResponses, req.Params.RequestState)
			res, err := c.ReadResource(vs.withLevel(ctx, req.Params.Meta, req.Session), req.Params.URI)
			vs.g.forwarded("resources/read", err)
			if err != nil {
				return nil, vs.soleError(e.server, err)
			}
			res.Meta = hopless(res.Meta)
			return res, nil
		})
	}
}

// routeURI finds the server and own URI behind an exposed resource URI or
// URI template of the view.
func (vs *viewServer) routeURI(uri string) (resourceEntry, bool) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if e, ok := vs.resources[uri]; ok {
		return e, true
	}
	if e, ok := vs.templates[uri]; ok {
		return e, true
	}
	// A URI a template of the view matches (as reads of it are routed).
	for tpl, e := range vs.templates {
		if t, err := uritemplate.New(tpl); err == nil && t.Regexp().MatchString(uri) {
			e.uri = uri
			return e, true
		}
	}
	return resourceEntry{}, false
}

// complete routes completion/complete to the server that owns the prompt
// or resource template. A reference the view does not have goes, on a
// view of one server under its own names (soleServer), to that server,
// which answers as it would directly (a TypeScript SDK server: -32602,
// "Prompt x not found"); on other views, whose servers cannot all be
// asked, it gets what a server answers for a name it has no completions
// for: an empty completion (the go-sdk's conformance server does so), not
// an error.
func (vs *viewServer) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: `Invalid params: completion/complete needs params.ref: {"type": "ref/prompt", "name": ...} or {"type": "ref/resource", "uri": ...}`}
	}
	var server string
	out := *ref
	switch ref.Type {
	case "ref/prompt":
		vs.mu.Lock()
		e, ok := vs.prompts[ref.Name]
		vs.mu.Unlock()
		switch {
		case ok:
			server, out.Name = e.server, e.name
		case vs.soleServer() != "":
			server = vs.soleServer()
		default:
			return empty, nil
		}
	case "ref/resource":
		e, ok := vs.routeURI(ref.URI)
		switch {
		case ok:
			server, out.URI = e.server, e.uri
		case vs.soleServer() != "":
			server = vs.soleServer()
		default:
			return empty, nil
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("Invalid params: unknown completion reference type %q: use ref/prompt or ref/resource", ref.Type)}
	}
	ctx = vs.owned(ctx, req.Extra, req.Params.Meta, req.Session)
	c, err := vs.g.upstreamFor(ctx, server)
	if err != nil {
		return nil, upstreamError(server, err)
	}
	if c.Capabilities().Completions == nil {
		return empty, nil
	}
	params := *req.Params
	params.Ref = &out
	params.Meta = forwardMeta(req.Params.Meta)
	ctx, done := vs.asking(completing(ctx), server, req.Session, req.Extra, req.Params.Meta)
	res, err := c.Complete(vs.withLevel(ctx, req.Params.Meta, req.Session), &params)
	done()
	vs.g.forwarded("completion/complete", err)
	if err != nil {
		return nil, vs.soleError(server, err)
	}
	res.Meta = hopless(res.Meta)
	return res, nil
}

// subscribe forwards resources/subscribe to the server that owns the URI;
// the upstream is subscribed once however many clients subscribe.
func (vs *viewServer) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	e, ok := vs.routeURI(req.Params.URI)
	if !ok {
		e, ok = vs.ownResource(req.Session, req.Params.URI)
	}
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("no resource %q in this view: subscribe to a URI from resources/list, or one a template from resources/templates/list matches", req.Params.URI)}
	}
	if vs.g.perClient(e.server) && req.Session != nil {
		return vs.ownSubscription(ctx, req.Extra, req.Params.Meta, req.Session, e, true)
	}
	return vs.g.subs.change(ctx, vs.g, e.server, e.uri, +1)
}

// unsubscribe is subscribe's inverse.
func (vs *viewServer) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	e, ok := vs.routeURI(req.Params.URI)
	if !ok {
		e, ok = vs.ownResource(req.Session, req.Params.URI)
	}
	if !ok {
		return nil
	}
	if vs.g.perClient(e.server) && req.Session != nil {
		return vs.ownSubscription(ctx, req.Extra, req.Params.Meta, req.Session, e, false)
	}
	return vs.g.subs.change(ctx, vs.g, e.server, e.uri, -1)
}

// ownSubscription subscribes (or unsubscribes) client session ss to
// resource e on its own upstream session (session: per_client), as the
// client would on its own connection; the session's resources/updated
// reach that client alone (SessionNotify).
func (vs *viewServer) ownSubscription(ctx context.Context, extra *mcp.RequestExtra, meta mcp.Meta, ss *mcp.ServerSession, e resourceEntry, on bool) error {
	c, err := vs.g.upstreamFor(vs.owned(ctx, extra, meta, ss), e.server)
	if err != nil {
		return upstreamError(e.server, err)
	}
	if c.Capabilities().Resources == nil || !c.Capabilities().Resources.Subscribe {
		return nil // nothing to subscribe to; updates never come
	}
	if on {
		err = c.Session().Subscribe(ctx, &mcp.SubscribeParams{URI: e.uri})
		vs.g.forwarded("resources/subscribe", err)
	} else {
		err = c.Session().Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: e.uri})
		vs.g.forwarded("resources/unsubscribe", err)
	}
	if err != nil {
		return upstreamError(e.server, err)
	}
	return nil
}

// setLevelMiddleware forwards logging/setLevel to the view's upstreams
// that log, after the SDK has recorded the level for the session (it
// filters what each client receives).
func (vs *viewServer) setLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "logging/setLevel" || err != nil {
			return res, err
		}
		//lint:ignore SA1019 logging is deprecated only from protocol 2026-07-28; clients use it today.
		p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
		if p == nil {
			return res, err
		}
		// Kept for the sessions the gateway sees end: streamable HTTP's
		// (by id), serve --stdio's and legacy SSE's (sessionOf).
		if ss, _ := req.GetSession().(*mcp.ServerSession); ss != nil && (ss.ID() != "" || vs.spec().local || sessionOf(ctx) != nil) && !vs.g.config().Gateway.Stateless {
			vs.g.levels.set(ss, p.Level) // for upstreams that take it per request
			vs.setOwnedLevels(ctx, ss)   // and for the session's own
		}
		// One upstream session serves every client: it logs at the most
		// verbose level any client asked for, and each client gets what is
		// at or above its own (ServerSession.Log filters).
		//lint:ignore SA1019 see above.
		up := &mcp.SetLoggingLevelParams{Level: vs.g.levels.mostVerbose(p.Level)}
		for _, s := range vs.g.config().Servers {
			if !vs.spec().hasServer(s.Name) {
				continue
			}
			if c, cerr := vs.g.ups.Client(s.Name); cerr == nil && c.Capabilities().Logging != nil {
				//lint:ignore SA1019 see above.
				if lerr := c.Session().SetLoggingLevel(ctx, up); lerr != nil {
					vs.g.logger.Debug("forwarding the logging level failed", logKeyServer, s.Name, logKeyErr, lerr)
				}
			}
		}
		return res, err
	}
}

// forwarded counts a forwarded request.
func (g *Gateway) forwarded(method string, err error) {
	if g.metrics != nil {
		g.metrics.Forwarded(method, err)
	}
}

// subscriptions counts client subscriptions per upstream resource.
type subscriptions struct {
	mu    sync.Mutex
	count map[subKey]int
}

type subKey struct{ server, uri string }

// change adds delta to the count of (server, uri), subscribing upstream on
// the first and unsubscribing on the last.
func (s *subscriptions) change(ctx context.Context, g *Gateway, server, uri string, delta int) error {
	k := subKey{server, uri}
	s.mu.Lock()
	before := s.count[k]
	after := max(before+delta, 0)
	if after == 0 {
		delete(s.count, k)
	} else {
		s.count[k] = after
	}
	s.mu.Unlock()
	if (before == 0) == (after == 0) {
		return nil
	}
	c, err := g.ups.Client(server)
	if err != nil {
		return upstreamError(server, err)
	}
	if c.Capabilities().Resources == nil || !c.Capabilities().Resources.Subscribe {
		return nil // nothing to subscribe to; updates never come
	}
	if after > 0 {
		err = c.Session().Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		g.forwarded("resources/subscribe", err)
	} else {
		err = c.Session().Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		g.forwarded("resources/unsubscribe", err)
	}
	if err != nil {
		return upstreamError(server, err)
	}
	return nil
}
