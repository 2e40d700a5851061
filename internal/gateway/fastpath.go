//lint:file-ignore SA1019 logging and sampling are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// This file is the gateway's lean path for the request that matters most:
// a tools/call over streamable HTTP. The SDK's server decodes every
// message several times over (and allocates a fresh 32 KiB decoder buffer
// each time), runs it through its session machinery and answers on an
// event stream; the gateway reads the request once, runs it through the
// same engine path as the SDK's handler (viewServer.call) and writes the
// response itself: as JSON when nothing else was sent while the call
// ran, else as an event stream that carries, ahead of the response, what
// the SDK would have put on the request's stream.
//
// What is sent to the client during the call still goes through the SDK's
// session — progress (ServerSession.NotifyProgress), log messages
// (ServerSession.Log, which filters by the level the client set), and the
// upstream's sampling, elicitation and roots requests (CreateMessage,
// Elicit, ListRoots, which check and convert as they do for any call) —
// with the call's context; a sending middleware (fastSending) then writes
// the message on the call's stream instead of the SDK's transport. A
// request sent so gets an id of the gateway's own ("switchboard-N", which
// the SDK's integer ids never meet); the client's answer, posted to the
// session like any, is handed to it (deliverFast). In stateless mode there
// is no session: progress and log messages (at "info" and above, the level
// the SDK gives such a request) are written directly, and no request can
// reach the client, as on the SDK's path.
//
// Anything else, and anything the lean path cannot answer exactly as the
// SDK would — protocol 2026-07-28, an unsupported protocol version header,
// a client that does not accept both JSON and event streams, a session it
// does not know (yet), an unknown tool — goes to the SDK unchanged. A
// differential test (internal/daemon) runs the same exchanges both ways.
//
// Sessions are still the SDK's: they are created by its initialize
// handling, and the gateway keeps a registry of them (id → view server,
// user, capabilities, last use) to check a fast request exactly as the
// SDK would: the session exists, belongs to this view and to this user.

// fastParams is the part of a tools/call's params the lean path reads.
type fastParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      mcp.Meta        `json:"_meta"`
}

// tryFast answers m, posted with r, itself when it is a tools/call it can
// answer as the SDK would, and reports whether it did.
func (h *httpHandler) tryFast(w http.ResponseWriter, r *http.Request, m *message, view config.View, gw config.Gateway) bool {
	if gw.DisableFastPath || m.batch || m.method != "tools/call" || !m.isCall() || !fastProtocol(r.Header.Get(protocolHeader)) ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return false
	}
	wantJSON, wantStream := accepts(r.Header.Values("Accept"))
	if !wantJSON || !wantStream {
		return false // the SDK says what is wrong
	}
	var p fastParams
	if json.Unmarshal(m.Params, &p) != nil {
		return false
	}
	progressToken, withProgress := p.Meta["progressToken"]
	if withProgress {
		switch progressToken.(type) {
		case string, float64:
		default:
			return false // the SDK says what is wrong
		}
	}
	if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok {
		return false // a request of protocol 2026-07-28
	}

	sid := r.Header.Get("Mcp-Session-Id")
	tok, hasTok := r.Context().Value(tokenKey{}).(config.Token)
	var vs *viewServer
	var ss *mcp.ServerSession
	if gw.Stateless {
		if sid != "" {
			return false
		}
		spec, ok := h.spec(r, view)
		if !ok {
			return false
		}
		var err error
		if vs, err = h.g.serverFor(r.Context(), spec); err != nil {
			return false
		}
	} else {
		cs := h.g.sess.get(sid)
		if cs == nil || !cs.initialized.Load() {
			return false // unknown, or not yet initialized: the SDK answers
		}
		if vs = cs.vs.Load(); vs == nil || vs.spec().view.Name != view.Name {
			return false // another view's: the SDK refuses it
		}
		if hasTok {
			if u, ok := h.g.sess.user(sid); !ok || u != tok.User {
				return false // not yet known to be this user's: the SDK decides
			}
		}
		ss = cs.ss.Load()
	}
	vs.mu.Lock()
	e, ok := vs.tools[p.Name]
	vs.mu.Unlock()
	if oe, own := vs.ownTool(ss, p.Name); own {
		e, ok = oe, true // as the client's own upstream session listed it
	}
	if !ok {
		return false // the SDK's path says why (unlisted.go)
	}

	user := tok.User
	if !hasTok {
		user = callerUser(gw, p.Meta, false)
	}
	session := sid
	if session == "" && !gw.AuthRequired() {
		session, _ = p.Meta["session_id"].(string)
	}
	ctx := r.Context()
	if sid != "" {
		// A client may cancel with notifications/cancelled on another
		// request rather than by dropping this one.
		var done func()
		var ok bool
		if ctx, done, ok = h.g.beginFastCall(ctx, sid, m.ID); !ok {
			writeRPCError(w, http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("duplicate in-flight request ID %s", m.ID))
			return true
		}
		defer done()
	} else {
		var leave func()
		r, leave = h.g.reqCalls.begin(r, h.g.requester(r, "", tok.User, m.ID), m.ID)
		defer leave()
		ctx, leave = h.g.reqCalls.join(r.Context(), r.Header.Get(requestKeyHeader))
		defer leave()
	}
	cs := &callStream{g: h.g, w: w, sid: sid}
	defer cs.end()
	cc := &clientCall{ss: ss, stream: cs, level: h.g.callerLevel(gw, p.Meta, ss), requestID: m.ID}
	ctx = context.WithValue(ctx, fastStreamKey{}, cs)
	var notify func(toolcall.Progress)
	if withProgress {
		notify = func(pr toolcall.Progress) {
			params := &mcp.ProgressNotificationParams{ProgressToken: progressToken, Progress: pr.Processed, Total: pr.Total, Message: pr.Message}
			if ss != nil {
				_ = ss.NotifyProgress(ctx, params)
				return
			}
			cs.notify("notifications/progress", params)
		}
	}
	ctx, span := vs.g.eng.Tracing().StartServer(ctx, telemetry.Request{Method: m.method, Target: p.Name, Meta: p.Meta, Header: r.Header, Session: sid, RequestID: string(m.ID)})
	cres, cerr := vs.call(ctx, cc, e, p.Arguments, p.Meta, user, session, notify)
	if rpc := rpcAnswer(cerr); rpc != nil {
		// As the upstream answered: a JSON-RPC error, not a result.
		span.EndTool(nil, rpc)
		if ctx.Err() != nil {
			return true
		}
		body, err := marshalNoEscape(rpc) // as the SDK writes it: "<" stays "<"
		if err != nil {
			body, _ = marshalNoEscape(&jsonrpc.Error{Code: rpc.Code, Message: rpc.Message})
		}
		var b bytes.Buffer
		b.WriteString(eventPrefix)
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(m.ID)
		b.WriteString(`,"error":`)
		b.Write(body)
		b.WriteString("}\n\n")
		cs.finish(b.Bytes())
		return true
	}
	var res *mcp.CallToolResult
	if cerr != nil {
		res = errorResult(cerr)
	} else {
		res = cres.CallToolResult
	}
	span.EndTool(res, nil)
	if ctx.Err() != nil {
		return true // the client went away or cancelled: nothing to answer
	}
	if res.Content == nil {
		res.Content = []mcp.Content{} // as the SDK sends it: not null
	}
	out, err := marshalNoEscape(res)
	if err != nil {
		out, _ = marshalNoEscape(errorResult(err))
	}
	var b bytes.Buffer
	b.Grow(len(out) + len(m.ID) + 64)
	b.WriteString(eventPrefix)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(m.ID)
	b.WriteString(`,"result":`)
	b.Write(out)
	b.WriteString("}\n\n")
	cs.finish(b.Bytes())
	return true
}

// fastProtocol reports whether the lean path serves a request of protocol
// version v (its Mcp-Protocol-Version header): one the SDK accepts, before
// 2026-07-28.
func fastProtocol(v string) bool {
	if v == "" {
		return true // 2025-03-26, to the SDK
	}
	return v < protocolPerRequest && slices.Contains(mcp.SupportedProtocolVersions(), v)
}

// accepts reports whether an Accept header admits JSON and event streams.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			media, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(media) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// remoteHost is the host part of a request's remote address.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// eventPrefix starts an event of an event stream; a response is built as
// one, and sent as JSON by cutting it off (see writeAnswer).
const eventPrefix = "event: message\ndata: "

// writeAnswer writes a whole response, event (built as one event of an
// event stream), as JSON.
func writeAnswer(w http.ResponseWriter, event []byte) {
	w.Header().Set("Content-Type", "application/json")
	event = bytes.TrimSuffix(event[len(eventPrefix):], []byte("\n\n"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(event)
}

// setStreamHeaders sets the headers of an event stream, as the SDK does.
func setStreamHeaders(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Connection", "keep-alive")
}

// fastStreamKey is the context key of a lean-path call's *callStream.
type fastStreamKey struct{}

// callStream is the response of a call the gateway answers itself: JSON
// if nothing but the response is sent, else an event stream that carries
// the call's notifications and requests ahead of the response, as the
// SDK's stream does. Messages may come from other goroutines than the
// call's (the upstream's connection); none is written once the response
// has been.
type callStream struct {
	g   *Gateway
	w   http.ResponseWriter
	sid string // the session ("" in stateless mode)

	mu    sync.Mutex
	begun bool // the event stream's headers are written
	done  bool // the response is written, or the call ended: nothing more
}

// write sends one message as an event, and reports whether it could.
func (s *callStream) write(msg []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	if !s.begun {
		setStreamHeaders(s.w)
		s.w.WriteHeader(http.StatusOK)
		s.begun = true
	}
	var b bytes.Buffer
	b.Grow(len(eventPrefix) + len(msg) + 2)
	b.WriteString(eventPrefix)
	b.Write(msg)
	b.WriteString("\n\n")
	_, err := s.w.Write(b.Bytes())
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return err == nil
}

// notify sends a notification.
func (s *callStream) notify(method string, params any) bool {
	msg, err := marshalNoEscape(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	return err == nil && s.write(msg)
}

// log sends a log message of a stateless call (which has no session to
// filter it) at or above level.
func (s *callStream) log(p *mcp.LoggingMessageParams, level mcp.LoggingLevel) {
	if level == "" || levelRank(p.Level) < levelRank(level) {
		return
	}
	s.notify("notifications/message", p)
}

// levelRank orders the log levels (RFC 5424's, least severe first).
func levelRank(l mcp.LoggingLevel) int {
	return slices.Index([]mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, l)
}

// finish writes the response, event, and ends s: on the event stream
// once something began it, else as JSON.
func (s *callStream) finish(event []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if !s.begun {
		writeAnswer(s.w, event)
		return
	}
	_, _ = s.w.Write(event)
}

// end stops s writing (the client went away, or the call ended).
func (s *callStream) end() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// fastSending is the view server's sending middleware: what the SDK sends
// with the context of a call the gateway answers itself goes on that
// call's stream; the SDK's requests to the client of a call it answers
// over streamable HTTP go on that call's stream as the gateway's own
// (onPost).
func fastSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		cs, _ := ctx.Value(fastStreamKey{}).(*callStream)
		if cs == nil {
			if g, sink, ok := onPost(ctx, method, req); ok {
				return g.askDecoded(ctx, sink, method, req.GetParams())
			}
			return next(ctx, method, req)
		}
		if strings.HasPrefix(method, "notifications/") {
			if !cs.notify(method, req.GetParams()) {
				return nil, fmt.Errorf("sending %q: the call's stream is closed", method)
			}
			return nil, nil
		}
		return cs.request(ctx, method, req.GetParams())
	}
}

// fastRequestIDs numbers the requests sent on the gateway's own streams.
var fastRequestIDs atomic.Uint64

// fastReply is a client's answer to a request sent on a call's stream.
type fastReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
}

// request sends a request on the call's stream and waits for the client's
// answer (see deliverFast), as the SDK's session does (askDecoded).
func (s *callStream) request(ctx context.Context, method string, params mcp.Params) (mcp.Result, error) {
	return s.g.askDecoded(ctx, rawSink{write: s.write, prefix: s.sid}, method, params)
}

// askDecoded sends a request of the SDK's on sink and waits for the
// client's answer, as the SDK's session does: askRaw, with the answer
// decoded and a client's error wrapped as the SDK wraps it.
func (g *Gateway) askDecoded(ctx context.Context, sink rawSink, method string, params mcp.Params) (mcp.Result, error) {
	var res mcp.Result
	switch method {
	case "sampling/createMessage":
		res = &mcp.CreateMessageWithToolsResult{}
	case "elicitation/create":
		res = &mcp.ElicitResult{}
	case "roots/list":
		//lint:ignore SA1019 roots remain part of the protocol versions clients speak today.
		res = &mcp.ListRootsResult{}
	default:
		return nil, fmt.Errorf("sending %q on a call's stream is not supported", method)
	}
	if sink.prefix == "" {
		return nil, fmt.Errorf("sending %q: stateless servers cannot make requests", method)
	}
	raw, err := g.askRaw(ctx, sink, method, params)
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &rpc):
		return nil, fmt.Errorf("calling %q: %w", method, rpc)
	case err != nil:
		return nil, err
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("calling %q: decoding the answer: %w", method, err)
	}
	return res, nil
}

// deliverFast hands a client's answer, m, to the request on a call's
// stream it answers, and reports whether there was one.
func (g *Gateway) deliverFast(sid string, m *message) bool {
	v, ok := g.fastPending.LoadAndDelete(sid + "\x00" + idKey(m.ID))
	if !ok {
		return false
	}
	var rep fastReply
	if len(m.Error) > 0 {
		rep.err = new(jsonrpc.Error)
		if json.Unmarshal(m.Error, rep.err) != nil {
			rep.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's error answer does not parse"}
		}
	} else {
		rep.result = m.Result
	}
	v.(chan fastReply) <- rep
	return true
}

// spec is the view spec of a request (its view and narrowing).
func (h *httpHandler) spec(r *http.Request, view config.View) (viewSpec, bool) {
	servers, tools, err := narrowing(view, h.g.config(), r.URL.Query())
	if err != nil {
		return viewSpec{}, false
	}
	return viewSpec{view: view, servers: servers, tools: tools}, true
}

// beginFastCall registers a lean-path call with JSON-RPC id in session
// sid, so that a notifications/cancelled naming it (cancelFast) ends the
// returned context; done unregisters it. ok is false when a call with
// that id is already in flight in the session.
func (g *Gateway) beginFastCall(ctx context.Context, sid string, id json.RawMessage) (_ context.Context, done func(), ok bool) {
	key := sid + "\x00" + idKey(id)
	ctx, cancel := context.WithCancel(ctx)
	if _, dup := g.fastCalls.LoadOrStore(key, cancel); dup {
		cancel()
		return nil, nil, false
	}
	return ctx, func() {
		g.fastCalls.Delete(key)
		cancel()
	}, true
}

// cancelFast cancels the call in session sid that a
// notifications/cancelled names: a lean-path call, or one the SDK runs
// (which the SDK itself would let run on).
func (g *Gateway) cancelFast(r *http.Request, sid string, m *message) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	if c, ok := g.fastCalls.Load(sid + "\x00" + idKey(p.RequestID)); ok {
		c.(context.CancelFunc)()
	}
	g.reqCalls.cancel(g.requester(r, sid, "", p.RequestID))
}

// requester identifies a request with JSON-RPC id for notifications/cancelled:
// by its session sid, or in stateless mode by its user and host.
func (g *Gateway) requester(r *http.Request, sid, user string, id json.RawMessage) requestCaller {
	if sid != "" {
		return requestCaller{session: sid, id: idKey(id)}
	}
	return requestCaller{user: user, host: remoteHost(r), id: idKey(id)}
}

// cancelStateless cancels the calls of a stateless caller that a
// notifications/cancelled names by their id.
func (g *Gateway) cancelStateless(r *http.Request, m *message) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	tok, _ := r.Context().Value(tokenKey{}).(config.Token)
	g.reqCalls.cancel(g.requester(r, "", tok.User, p.RequestID))
}
