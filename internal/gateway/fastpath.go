package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// This file is the gateway's lean path for the request that matters most:
// a plain tools/call over streamable HTTP. The SDK's server decodes every
// message several times over (and allocates a fresh 32 KiB decoder buffer
// each time), runs it through its session machinery and answers on an
// event stream; for a call that needs none of that — no progress token,
// whose notifications belong on the request's own event stream — the
// gateway reads the request once, runs it through the same engine path
// (viewServer.invoke) and writes the JSON-RPC response itself. Everything
// else, and anything unexpected, goes to the SDK unchanged.
//
// Requests an upstream sends while such a call runs (sampling,
// elicitation, roots) reach the client exactly as on the SDK's path: the
// SDK cannot relate them to the client's request either, so it sends
// them on the session's standalone event stream in both cases.
//
// Sessions are still the SDK's: they are created by its initialize
// handling, and the gateway keeps a registry of them (id → view server,
// user, capabilities, last use) to check a fast request exactly as the
// SDK would: the session exists, belongs to this view and to this user.

// maxFastBody is the largest request body the fast path reads; larger
// ones go to the SDK, which applies its own limit.
const maxFastBody = 1 << 20

// sessionInfo is what the gateway knows of one streamable-HTTP session.
type sessionInfo struct {
	vs       *viewServer
	ss       *mcp.ServerSession
	lastSeen atomic.Int64 // unix nanoseconds, when the last request ended
	active   atomic.Int32 // requests (and streams) open on the session
}

// sessionRegistry maps session ids to sessions.
type sessionRegistry struct {
	m sync.Map // string -> *sessionInfo
	// users maps a session id to the user the SDK accepted a request of
	// on it: the SDK binds a session to the token user that created it
	// and refuses any other, so once it has accepted one of the user's
	// requests, the fast path may accept that user's too.
	users sync.Map // string -> string
}

// bindUser records that the SDK accepted a request of user on session id.
func (r *sessionRegistry) bindUser(id, user string) {
	r.users.LoadOrStore(id, user)
}

// user returns the user bound to session id.
func (r *sessionRegistry) user(id string) (string, bool) {
	v, ok := r.users.Load(id)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// drop forgets a session.
func (r *sessionRegistry) drop(id string) {
	r.m.Delete(id)
	r.users.Delete(id)
}

func (r *sessionRegistry) get(id string) *sessionInfo {
	if v, ok := r.m.Load(id); ok {
		return v.(*sessionInfo)
	}
	return nil
}

// begin notes that a request (or a stream) on session id started; the
// returned function notes that it ended. A session is idle only while
// nothing is open on it.
func (r *sessionRegistry) begin(id string) func() {
	si := r.get(id)
	if si == nil {
		return func() {}
	}
	si.active.Add(1)
	return func() {
		si.lastSeen.Store(time.Now().UnixNano())
		si.active.Add(-1)
	}
}

// register records a session once it is initialized.
func (g *Gateway) register(vs *viewServer, req *mcp.InitializedRequest) {
	ss := req.Session
	id := ss.ID()
	if id == "" {
		return // stdio, or stateless: nothing to look up later
	}
	si := &sessionInfo{vs: vs, ss: ss}
	si.lastSeen.Store(time.Now().UnixNano())
	g.sess.m.Store(id, si)
}

// closeIdle closes sessions on which nothing has been open for timeout.
func (g *Gateway) closeIdle(timeout time.Duration) {
	cutoff := time.Now().Add(-timeout).UnixNano()
	g.sess.m.Range(func(k, v any) bool {
		si := v.(*sessionInfo)
		if si.active.Load() == 0 && si.lastSeen.Load() < cutoff {
			g.logger.Info("closing an idle client session", logKeyView, si.vs.spec().view.Name)
			_ = si.ss.Close()
			g.sess.drop(k.(string))
		}
		return true
	})
}

// fastRequest is the part of a JSON-RPC request the fast path reads.
type fastRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      mcp.Meta        `json:"_meta"`
	} `json:"params"`
}

// tryFast answers r itself when it is a plain tools/call, and reports
// whether it did. Otherwise r's body is restored for the SDK.
func (h *httpHandler) tryFast(w http.ResponseWriter, r *http.Request, view config.View, gw config.Gateway) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	if gw.DisableFastPath || r.Method != http.MethodPost || r.ContentLength > maxFastBody ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") ||
		r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
		return false
	}
	accept := r.Header.Get("Accept")
	wantJSON := strings.Contains(accept, "application/json")
	wantStream := strings.Contains(accept, "text/event-stream")
	if !wantJSON && !wantStream {
		return false
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, maxFastBody+1))
	// What was read goes back in front of the rest: a body without a
	// length may be longer than what the fast path reads.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), orig), orig}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, fault.New(fault.LimitExceeded,
			"the request body is over gateway.max_request_bytes (%d bytes)", tooLarge.Limit).
			WithSuggestions("pass large data by reference (a file path, a resource URI), or raise gateway.max_request_bytes (up to 256MiB)"))
		return true
	}
	if err != nil || len(body) > maxFastBody {
		return false
	}
	if sid != "" && bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		h.cancelFast(sid, body)
		return false // the SDK sees it too, for the calls it runs
	}
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return false
	}
	var req fastRequest
	if json.Unmarshal(body, &req) != nil || req.JSONRPC != "2.0" || req.Method != "tools/call" || len(req.ID) == 0 || req.ID[0] == 'n' {
		return false
	}
	progressToken, withProgress := req.Params.Meta["progressToken"]
	if withProgress && (progressToken == nil || !wantStream) {
		return false // progress needs an event stream (and a token): the SDK says what is wrong
	}

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
		if vs, err = h.g.serverFor(r.Context(), spec); err != nil {
			return false
		}
	} else {
		si := h.g.sess.get(sid)
		if si == nil || si.vs.spec().view.Name != view.Name {
			return false // unknown, or another view's: the SDK refuses it
		}
		if hasTok {
			if u, ok := h.g.sess.user(sid); !ok || u != tok.User {
				return false // not yet known to be this user's: the SDK decides
			}
		}
		vs, ss = si.vs, si.ss
	}
	vs.mu.Lock()
	e, ok := vs.tools[req.Params.Name]
	vs.mu.Unlock()
	if !ok {
		return false // the SDK says "unknown tool" in its own words
	}

	user := tok.User
	if !hasTok {
		user = callerUser(gw, req.Params.Meta, false)
	}
	session := sid
	if session == "" && !gw.AuthRequired() {
		session, _ = req.Params.Meta["session_id"].(string)
	}
	ctx := r.Context()
	if sid != "" {
		// A client may cancel with notifications/cancelled on another
		// request rather than by dropping this one.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		key := sid + "\x00" + string(req.ID)
		h.g.fastCalls.Store(key, cancel)
		defer func() {
			h.g.fastCalls.Delete(key)
			cancel()
		}()
	}
	var ps *progressStream
	var notify func(toolcall.Progress)
	if withProgress {
		ps = &progressStream{w: w, token: progressToken}
		notify = ps.send
	}
	res := vs.invoke(ctx, e, req.Params.Arguments, req.Params.Meta, user, session, ss, notify)
	if ps != nil {
		defer ps.end()
	}
	if ctx.Err() != nil {
		return true // the client went away or cancelled: nothing to answer
	}
	out, err := json.Marshal(res)
	if err != nil {
		out, _ = json.Marshal(errorResult(err))
	}
	var b bytes.Buffer
	b.Grow(len(out) + len(req.ID) + 64)
	b.WriteString(eventPrefix)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(req.ID)
	b.WriteString(`,"result":`)
	b.Write(out)
	b.WriteString("}\n\n")
	if ps != nil {
		ps.finish(b.Bytes(), wantJSON)
		return true
	}
	writeAnswer(w, b.Bytes(), wantJSON)
	return true
}

// eventPrefix starts an event of an event stream; a response is built as
// one, and sent as JSON by cutting it off (see writeAnswer).
const eventPrefix = "event: message\ndata: "

// writeAnswer writes a whole response, event (built as one event of an
// event stream), as JSON when the client accepts that, else as the event.
func writeAnswer(w http.ResponseWriter, event []byte, wantJSON bool) {
	if wantJSON {
		w.Header().Set("Content-Type", "application/json")
		event = bytes.TrimSuffix(event[len(eventPrefix):], []byte("\n\n"))
	} else {
		setStreamHeaders(w)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(event)
}

func setStreamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
}

// progressStream sends a fast-path call's progress notifications on the
// request's own event stream, as the SDK does, ahead of the response.
// Notifications may come from another goroutine than the call's (the
// upstream's SDK connection); none is written once the response has been.
type progressStream struct {
	w     http.ResponseWriter
	token any // the client's progressToken, as it sent it

	mu    sync.Mutex
	begun bool // the event stream's headers are written
	done  bool // the response is written: nothing more
}

// send writes one progress notification.
func (p *progressStream) send(pr toolcall.Progress) {
	msg, err := json.Marshal(struct {
		JSONRPC string                          `json:"jsonrpc"`
		Method  string                          `json:"method"`
		Params  *mcp.ProgressNotificationParams `json:"params"`
	}{"2.0", "notifications/progress", &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: pr.Processed, Total: pr.Total, Message: pr.Message}})
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.begin()
	_, _ = p.w.Write(append(append([]byte(eventPrefix), msg...), '\n', '\n'))
	if f, ok := p.w.(http.Flusher); ok {
		f.Flush()
	}
}

// begin writes the event stream's headers once; p.mu is held.
func (p *progressStream) begin() {
	if !p.begun {
		setStreamHeaders(p.w)
		p.w.WriteHeader(http.StatusOK)
		p.begun = true
	}
}

// finish writes the response, event, and ends p: on the event stream
// once a notification began it, else as writeAnswer does.
func (p *progressStream) finish(event []byte, wantJSON bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if !p.begun {
		writeAnswer(p.w, event, wantJSON)
		return
	}
	_, _ = p.w.Write(event)
}

// end stops p writing (the client went away, or the call ended).
func (p *progressStream) end() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// spec is the view spec of a request (its view and narrowing).
func (h *httpHandler) spec(r *http.Request, view config.View) (viewSpec, bool) {
	servers, tools, err := narrowing(view, h.g.config(), r.URL.Query())
	if err != nil {
		return viewSpec{}, false
	}
	return viewSpec{view: view, servers: servers, tools: tools}, true
}

// janitor closes sessions idle for gateway.session_timeout, checking
// every minute (or twice per timeout, if that is shorter), until ctx is
// done.
func (g *Gateway) janitor(ctx context.Context) {
	for {
		timeout := g.config().Gateway.SessionTimeout
		every := time.Minute
		if timeout > 0 && timeout/2 < every {
			every = max(timeout/2, 10*time.Millisecond)
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			if timeout > 0 {
				g.closeIdle(timeout)
			}
		}
	}
}

// cancelFast cancels the fast-path call a notifications/cancelled names.
func (h *httpHandler) cancelFast(sid string, body []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &n) != nil || n.Method != "notifications/cancelled" || len(n.Params.RequestID) == 0 {
		return
	}
	if c, ok := h.g.fastCalls.Load(sid + "\x00" + string(n.Params.RequestID)); ok {
		c.(context.CancelFunc)()
	}
}
