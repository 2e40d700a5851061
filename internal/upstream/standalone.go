package upstream

//lint:file-ignore SA1019 servers still send log messages; the gateway forwards them (deprecated only from protocol 2026-07-28).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A streamable-HTTP server sends a message to its client either on the
// event stream of a request (it belongs to that request) or on its
// standalone stream, the client's GET (it belongs to no request). The
// SDK's client reads every stream into one queue and hands its handlers
// no word of where a message came from (go-sdk v1.8.0:
// streamableClientConn.processStream sends each decoded message to the
// connection's incoming channel, and a handler's context is the
// connection's), nor the message as the server wrote it (it decodes the
// params into its types: a map's keys in name order, numbers through
// float64). The lean call path reads its calls' streams itself and has
// both at hand; for the streams the SDK reads, the HTTP layer
// (headerTransport) keeps them before the SDK decodes the message:
//
//   - each log message, each request the server sends its client
//     (sampling/createMessage, elicitation/create, roots/list), each
//     list change of a session that passes them on as sent
//     (Events.ListChanged, listchanges.go) and each resource update and
//     elicitation completion, read off an event stream the
//     SDK reads is kept in the session's keptMessages — the stream it
//     came on (the request whose stream it is, whose context the SDK
//     sent it with, or the standalone stream) and, for an elicitation of
//     a session that passes elicitation on as given (ElicitAsGiven) or a
//     list change, its params as the server wrote them;
//   - the line is rewritten to name what was kept, under metaKeyKept in
//     the message's _meta (params are added to a request that has none),
//     which one receiving middleware of the session
//     (keptMessages.middleware) takes out again before any handler sees
//     the message (the SDK hands it the message's _meta), handing the
//     handler what was kept in its context: a message that came on a request's stream is handled with
//     that request's context values (a call's links it to its caller, as
//     on the lean path), one from the standalone stream marked as sent
//     outside requests (SentOutsideRequests).
//
// So a message is told by what it is, not by its content: two equal log
// messages, or two calls' roots requests, one on each of two streams,
// each go with their own stream. Over stdio, SSE and WebSocket the
// session's connection keeps an elicitation's params the same way
// (elicitasgiven.go); those transports have one stream.

// metaKeyKept is the _meta key under which the HTTP layer, or a
// session's connection, names what it kept of a message (keptMessages).
const metaKeyKept = "io.switchboard/kept"

// standaloneKey marks the context of a log message the server sent on its
// standalone stream.
type standaloneKey struct{}

// SentOutsideRequests reports whether the log message [Events.Log] was
// given with ctx, the request a ClientRequests handler was given with
// ctx (sampling, elicitation, roots), the task status
// [Events.TaskStatus], list change [Events.ListChanged], resource update
// [Events.ResourceUpdated] or elicitation completion
// [Events.ElicitationComplete] was given with ctx, came on the server's standalone
// event stream (streamable HTTP): outside any request, where a client of
// the server would read it on its own standalone stream. False where the
// transport does not say (stdio, SSE, WebSocket) and for a message sent
// on a request's stream.
func SentOutsideRequests(ctx context.Context) bool {
	v, _ := ctx.Value(standaloneKey{}).(bool)
	return v
}

// keptMessage is what was kept of a message before the SDK decoded it.
type keptMessage struct {
	// params are the message's params as the server wrote them (kept for
	// an elicitation/create only).
	params json.RawMessage
	// stream is the context of the request on whose event stream the
	// message came (the SDK sends a request with its caller's context);
	// nil when none is known.
	stream context.Context
	// standalone is set for a message read off the standalone stream.
	standalone bool
	// asSent is set for a list change: params are its params as the
	// server wrote them, nil for none (listchanges.go).
	asSent bool
}

// context returns ctx, the context a handler was given the message
// with, with what was kept of it: the values of the request on whose
// stream it came, or the mark of the standalone stream; and its params
// as written (keptParams).
func (m keptMessage) context(ctx context.Context) context.Context {
	switch {
	case m.standalone:
		ctx = context.WithValue(ctx, standaloneKey{}, true)
	case m.stream != nil:
		// With that request's values (a call's links it to its
		// caller), ended as the SDK ends the handler.
		ctx = streamValues{Context: ctx, stream: m.stream}
	}
	if m.params != nil {
		ctx = context.WithValue(ctx, keptParamsKey{}, m.params)
	}
	return ctx
}

// keptParamsKey is the context key of a message's params as the server
// wrote them (keptMessage.params).
type keptParamsKey struct{}

// keptParams returns the params a handler's message was kept with, as
// the server wrote them (nil where they were not kept).
func keptParams(ctx context.Context) json.RawMessage {
	p, _ := ctx.Value(keptParamsKey{}).(json.RawMessage)
	return p
}

// streamValues is a handler's context with, besides its own values,
// those of the request on whose stream its message came: its
// cancellation, deadline and own values (the context package's among
// them) are the handler's.
type streamValues struct {
	context.Context
	stream context.Context
}

func (c streamValues) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.stream.Value(key)
}

// streamContext is the context what a server sent on the stream that
// origin names is passed on with, where no SDK handler's context is
// there to carry it (a notification the SDK drops: tasks.go).
func streamContext(origin keptMessage) context.Context {
	origin.params = nil
	return origin.context(context.Background())
}

// middleware hands each message the session's transport kept
// something of to the SDK's handler of it with what was kept, in its
// context (keptMessage.context), taking the transport's mark out of its
// params first: the one place it is taken out. It is the session's
// outermost receiving middleware, so every other sees the message as the
// server sent it.
func (k *keptMessages) middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if meta := markedMeta(req.GetParams()); meta != nil {
				if m, ok := k.takeMeta(meta); ok {
					ctx = m.context(ctx)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// markedMeta returns the _meta of params, if they are of a message the
// transport marks (streamMarker, keepingConn).
func markedMeta(params mcp.Params) *mcp.Meta {
	switch p := params.(type) {
	case *mcp.LoggingMessageParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.ElicitParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.CreateMessageParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.CreateMessageWithToolsParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.ListRootsParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.ResourceUpdatedNotificationParams:
		if p != nil {
			return &p.Meta
		}
	case *mcp.ElicitationCompleteParams:
		if p != nil {
			return &p.Meta
		}
	}
	return nil
}

// maxKeptMessages bounds what a session keeps of messages its handlers
// have not yet taken: a message the SDK did not hand a handler (it could
// not decode it, or has no handler for it) is never taken, and the
// oldest is forgotten once that many are waiting.
const maxKeptMessages = 256

// keptMessages are what a session kept of the messages its server sent,
// by the key (a number) their _meta names, until a handler takes them.
type keptMessages struct {
	mu     sync.Mutex
	next   uint64
	oldest uint64 // no key below it is kept
	m      map[uint64]keptMessage
}

// keep records m and returns its key.
func (k *keptMessages) keep(m keptMessage) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[uint64]keptMessage{}
	}
	for len(k.m) >= maxKeptMessages {
		delete(k.m, k.oldest)
		k.oldest++
	}
	k.next++
	if len(k.m) == 0 {
		k.oldest = k.next
	}
	k.m[k.next] = m
	return strconv.FormatUint(k.next, 10)
}

// take returns what was kept under key, and forgets it.
func (k *keptMessages) take(key string) (keptMessage, bool) {
	n, err := strconv.ParseUint(key, 10, 64)
	if err != nil {
		return keptMessage{}, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	m, ok := k.m[n]
	delete(k.m, n)
	for len(k.m) > 0 && k.oldest < k.next {
		if _, ok := k.m[k.oldest]; ok {
			break
		}
		k.oldest++
	}
	return m, ok
}

// clear forgets everything kept: the session has ended.
func (k *keptMessages) clear() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m = nil
}

// takeMeta returns what was kept of the message whose _meta is *meta,
// and takes metaKeyKept out of *meta (leaving nil where nothing else is
// left, as the message had no _meta).
func (k *keptMessages) takeMeta(meta *mcp.Meta) (keptMessage, bool) {
	key, ok := (*meta)[metaKeyKept].(string)
	if !ok {
		return keptMessage{}, false
	}
	rest := make(mcp.Meta, len(*meta))
	for k, v := range *meta {
		if k != metaKeyKept {
			rest[k] = v
		}
	}
	if *meta = rest; len(rest) == 0 {
		*meta = nil
	}
	return k.take(key)
}

// markParams returns params with key under metaKeyKept in its _meta
// (params of their own for a message that has none); false when params is
// not a JSON object (or its _meta is not), which the SDK refuses itself.
func markParams(params json.RawMessage, key string) (json.RawMessage, bool) {
	p := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params)) > 0 && (json.Unmarshal(params, &p) != nil || p == nil) {
		return nil, false
	}
	meta := map[string]json.RawMessage{}
	if m, ok := p["_meta"]; ok && (json.Unmarshal(m, &meta) != nil || meta == nil) {
		return nil, false
	}
	meta[metaKeyKept], _ = json.Marshal(key)
	p["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(p)
	return out, err == nil
}

// streamMarker rewrites the messages of one event stream the SDK reads
// that are to be kept (see the file comment): log messages (when logs is
// set), the requests a server sends its client (when requests is set),
// list changes (when lists is set) and resource updates and elicitation
// completions (when notices is set), kept with the stream's origin; an
// elicitation/create's params too, as written, when elicit is set, and a
// list change's.
type streamMarker struct {
	kept     *keptMessages
	origin   keptMessage // the stream: its request's context, or standalone
	logs     bool
	requests bool
	elicit   bool
	lists    bool
	notices  bool
}

// markedRequests are the requests a server sends its client whose
// stream the HTTP layer keeps (streamMarker.requests).
var markedRequests = []string{"elicitation/create", "sampling/createMessage", "roots/list"}

// line returns the data line line (without its newline) rewritten to
// name what was kept of its message, or nil to leave it as it is.
func (s *streamMarker) line(line []byte) []byte {
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil
	}
	isLog := s.logs && bytes.Contains(data, []byte(`"notifications/message"`))
	isRequest := false
	if s.requests {
		for _, m := range markedRequests {
			if bytes.Contains(data, []byte(`"`+m+`"`)) {
				isRequest = true
				break
			}
		}
	}
	isList := s.lists && bytes.Contains(data, []byte(`/list_changed"`))
	isNoticed := s.notices && (bytes.Contains(data, []byte(`"`+methodResourceUpdated+`"`)) || bytes.Contains(data, []byte(`"`+methodElicitationComplete+`"`)))
	if !isLog && !isRequest && !isList && !isNoticed {
		return nil
	}
	body, cr := bytes.CutSuffix(data, []byte("\r"))
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return nil // the SDK says what is wrong
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil {
		return nil
	}
	_, call := msg["id"]
	m := s.origin
	switch {
	case isList && isListChange(method) && !call:
		m.params, m.asSent = sentParams(msg["params"]), true
	case isLog && method == "notifications/message" && !call && len(msg["params"]) > 0:
	case isNoticed && (method == methodResourceUpdated || method == methodElicitationComplete) && !call && len(msg["params"]) > 0:
	case isRequest && call && slices.Contains(markedRequests, method):
		if s.elicit && method == "elicitation/create" && len(msg["params"]) > 0 {
			m.params = bytes.Clone(bytes.TrimSpace(msg["params"]))
		}
	default:
		return nil
	}
	key := s.kept.keep(m)
	params, ok := markParams(msg["params"], key)
	if !ok {
		s.kept.take(key)
		return nil
	}
	msg["params"] = params
	out, err := json.Marshal(msg)
	if err != nil {
		s.kept.take(key)
		return nil
	}
	b := make([]byte, 0, len("data: ")+len(out)+1)
	b = append(b, "data: "...)
	b = append(b, out...)
	if cr {
		b = append(b, '\r')
	}
	return b
}

// markingBody is an event stream the SDK reads, with the lines of the
// messages to keep rewritten by marker as they pass. A line longer than
// maxScanLine (no log message or elicitation is that long) passes as it
// is read.
type markingBody struct {
	io.ReadCloser
	marker *streamMarker
	buf    []byte // what was read and not yet passed on
	line   int    // the length of buf's leading bytes that are ready to pass on
	long   bool   // the current line is too long to look at: pass it on
	err    error  // the stream's error, once buf is passed on
	chunk  []byte
}

func newMarkingBody(rc io.ReadCloser, m *streamMarker) *markingBody {
	return &markingBody{ReadCloser: rc, marker: m, chunk: make([]byte, 32<<10)}
}

func (b *markingBody) Read(p []byte) (int, error) {
	for b.line == 0 {
		if b.err != nil {
			if len(b.buf) > 0 { // an unfinished last line
				b.line = len(b.buf)
				break
			}
			return 0, b.err
		}
		n, err := b.ReadCloser.Read(b.chunk)
		b.feed(b.chunk[:n])
		b.err = err
	}
	n := copy(p, b.buf[:b.line])
	b.buf = b.buf[:copy(b.buf, b.buf[n:])]
	b.line -= n
	return n, nil
}

// feed takes in chunk, rewriting each line it completes; what is ready
// to pass on ends at b.line.
func (b *markingBody) feed(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if b.long {
			if i < 0 {
				b.buf = append(b.buf, chunk...)
				b.line = len(b.buf)
				return
			}
			b.buf = append(b.buf, chunk[:i+1]...)
			b.line, b.long = len(b.buf), false
			chunk = chunk[i+1:]
			continue
		}
		if i < 0 {
			b.buf = append(b.buf, chunk...)
			if len(b.buf)-b.line > maxScanLine {
				b.line, b.long = len(b.buf), true
			}
			return
		}
		b.buf = append(b.buf, chunk[:i]...)
		if len(b.buf)-b.line <= maxScanLine {
			if out := b.marker.line(b.buf[b.line:]); out != nil {
				b.buf = append(b.buf[:b.line], out...)
			}
		}
		b.buf = append(b.buf, '\n')
		b.line = len(b.buf)
		chunk = chunk[i+1:]
	}
}

// marking says what a streamable-HTTP session's HTTP layer keeps of the
// messages the SDK reads (headerTransport.marking).
type marking struct {
	kept *keptMessages
	// logs keeps log messages: a log sink is set.
	logs bool
	// requests keeps the stream of the requests a server sends its
	// client: the session answers some (ClientRequests).
	requests bool
	// elicit keeps elicitation/create's params as written: the session
	// passes them on as given (ElicitAsGiven).
	elicit bool
	// lists keeps list changes: the session passes them on as sent
	// (Events.ListChanged).
	lists bool
	// notices keeps the stream of resource updates and elicitation
	// completions: the session passes them on (Events.ResourceUpdated,
	// Events.ElicitationComplete).
	notices bool
}
