package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file forwards tasks (MCP 2025-11-25's task-augmented requests): a
// tools/call with params.task, and tasks/get, tasks/result, tasks/list
// and tasks/cancel. The go-sdk's server knows none of them (it refuses
// an unknown method before any middleware sees it, and drops
// params.task), so the gateway answers them itself before the SDK sees
// them, on every transport it serves, with one implementation
// (taskRequest): on streamable HTTP from the POST (tryTask, as the lean
// path answers tools/call, fastpath.go); over serve --stdio and the
// legacy SSE endpoint from the session's connection, which the gateway
// wraps (tasks_conn.go). It sends them upstream as raw requests
// (upstream.Client.Request).
//
// A task belongs to whoever created it: the client's session in a view
// (in stateless mode, the token's user and the client's host). Its id is
// the upstream's; the gateway keeps, per owner, which server each of the
// owner's tasks lives on, and answers for any other id — another
// session's or user's task, which the server itself would show, for it
// sees one client, the gateway — that there is no such task. A task
// created through the engine is checked, limited and recorded like any
// call (its creation with the status "task"); its result, when fetched
// through tasks/result, is recorded as the call's outcome, truncated and
// redacted like any result. While a client waits on tasks/result, what
// the upstream asks its client (elicitation, sampling) goes to that
// client, on that request's stream.

// taskOwner is who may see a task.
type taskOwner struct {
	view, session, user, host string
}

// taskEntry is one task a client created.
type taskEntry struct {
	owner    taskOwner
	id       string // the id the client knows it by
	server   string
	upstream string           // the server's id for it
	req      toolcall.Request // the call that created it, for the record of its outcome
	created  time.Time

	// up is whom the task's upstream requests are made for: on a
	// per_client or per_user server they go to the upstream session the
	// task was created on, its owner's own (withOwner); hasUp is false
	// where that is the shared session (stateless requests).
	up    upstream.Owner
	hasUp bool
	// upKey names that upstream session ("" for the shared one): a
	// server numbers tasks per session, so two owned sessions may give
	// the same id to tasks of different clients.
	upKey string

	mu       sync.Mutex
	recorded bool                // its outcome is in the history
	result   *mcp.CallToolResult // the outcome as fetched, once it is
	stream   *callStream         // the owner's tasks/result stream while one waits
	ss       *mcp.ServerSession  // the owner's session, if any
	vs       *viewServer
}

// maxTasksPerOwner bounds the tasks the gateway keeps per owner; the
// oldest is forgotten (its id then reads as unknown).
const maxTasksPerOwner = 1000

// taskRegistry holds the tasks clients created through the gateway.
type taskRegistry struct {
	mu      sync.Mutex
	owners  map[taskOwner][]*taskEntry // oldest first
	byServe map[string]*taskEntry      // upstreamTaskKey
}

// upstreamTaskKey is how the server knows a task: its id on the
// upstream session (upKey) of server it lives on.
func upstreamTaskKey(server, upKey, id string) string {
	return server + "\x00" + upKey + "\x00" + id
}

// key is e's upstreamTaskKey.
func (e *taskEntry) key() string { return upstreamTaskKey(e.server, e.upKey, e.upstream) }

// upstreamSession names the upstream session of server that a request
// made with ctx goes on (upstreamFor): its owner's own, or "" for the
// shared one.
func (g *Gateway) upstreamSession(ctx context.Context, server string) string {
	o, ok := upstream.OwnerFrom(ctx)
	if !ok {
		return ""
	}
	for _, s := range g.config().Servers {
		if s.Name == server {
			if k, owned := o.KeyFor(s.Session); owned {
				return sessionKeyString(k)
			}
		}
	}
	return ""
}

// sessionKeyString is an owned upstream session's key as upKey holds it.
func sessionKeyString(k upstream.SessionKey) string { return string(k.Mode) + ":" + k.ID }

// add records e under its owner, giving it the upstream's id unless the
// owner has a task of another server by that id.
func (r *taskRegistry) add(e *taskEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.owners == nil {
		r.owners, r.byServe = map[taskOwner][]*taskEntry{}, map[string]*taskEntry{}
	}
	e.id = e.upstream
	for _, o := range r.owners[e.owner] {
		if o.id == e.id {
			e.id = e.server + ":" + e.upstream
		}
	}
	list := append(r.owners[e.owner], e)
	if len(list) > maxTasksPerOwner {
		delete(r.byServe, list[0].key())
		list = list[1:]
	}
	r.owners[e.owner] = list
	r.byServe[e.key()] = e
}

// get returns the owner's task id, or nil.
func (r *taskRegistry) get(owner taskOwner, id string) *taskEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.owners[owner] {
		if e.id == id {
			return e
		}
	}
	return nil
}

// list returns the owner's tasks, newest first.
func (r *taskRegistry) list(owner taskOwner) []*taskEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	src := r.owners[owner]
	out := make([]*taskEntry, 0, len(src))
	for i := len(src) - 1; i >= 0; i-- {
		out = append(out, src[i])
	}
	return out
}

// forget drops a task the server no longer has.
func (r *taskRegistry) forget(e *taskEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	list := r.owners[e.owner]
	for i, o := range list {
		if o == e {
			r.owners[e.owner] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(r.owners[e.owner]) == 0 {
		delete(r.owners, e.owner)
	}
	delete(r.byServe, e.key())
}

// dropSession forgets the tasks of a session that ended.
func (r *taskRegistry) dropSession(sid string) {
	if sid == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for o, list := range r.owners {
		if o.session != sid {
			continue
		}
		for _, e := range list {
			delete(r.byServe, e.key())
		}
		delete(r.owners, o)
	}
}

// byUpstream returns the task server knows by id on its upstream session
// upKey, or nil.
func (r *taskRegistry) byUpstream(server, upKey, id string) *taskEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byServe[upstreamTaskKey(server, upKey, id)]
}

// taskMethods are the methods of tasks the gateway answers itself.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/list": true, "tasks/cancel": true}

// taskRequest is one task request (a task method, or a tools/call made
// as a task) and what its handlers need of the session it came on. Its
// answer goes back the way it came: on the HTTP response of the POST that
// carried it (w), or on the session's connection (conn: serve --stdio, a
// legacy SSE stream).
type taskRequest struct {
	g     *Gateway
	m     *message
	gw    config.Gateway
	vs    *viewServer
	ss    *mcp.ServerSession
	sid   string // the session, as task owners know it ("" in stateless mode)
	owner taskOwner
	// identity is who a call's _meta makes its caller, and in which
	// session (forward.go's identity, for the transport it came on).
	identity func(meta mcp.Meta) (user, session string)
	header   http.Header // the request's HTTP headers (for tracing); nil off HTTP

	w    http.ResponseWriter // streamable HTTP
	conn *taskConn           // a session's connection
}

// isTaskMessage reports whether a request of method with params is one
// the gateway answers itself: a task method, or a tools/call with
// params.task.
func isTaskMessage(method string, params json.RawMessage) bool {
	if method != "tools/call" {
		return taskMethods[method]
	}
	if !bytes.Contains(params, []byte(`"task"`)) {
		return false // the common case, decided without decoding
	}
	var p struct {
		Task json.RawMessage `json:"task"`
	}
	return json.Unmarshal(params, &p) == nil && len(p.Task) > 0 && string(p.Task) != "null"
}

// tryTask answers m, posted with r, when it is a task method or a
// tools/call made as a task, and reports whether it did. Requests it
// cannot place (an unknown session, another view's) go to the SDK, which
// says what is wrong.
func (h *httpHandler) tryTask(w http.ResponseWriter, r *http.Request, m *message, view config.View, gw config.Gateway) bool {
	if m.batch || !m.isCall() || !isTaskMessage(m.method, m.Params) {
		return false
	}
	wantJSON, wantStream := accepts(r.Header.Values("Accept"))
	if !wantJSON || !wantStream {
		return false // the SDK says what is wrong
	}
	tr := &taskRequest{g: h.g, w: w, m: m, gw: gw, header: r.Header}
	tok, hasTok := r.Context().Value(tokenKey{}).(config.Token)
	tr.identity = func(meta mcp.Meta) (string, string) {
		user := tok.User
		if !hasTok {
			user = callerUser(gw, meta, false)
		}
		session := tr.sid
		if session == "" && !gw.AuthRequired() {
			session, _ = meta["session_id"].(string)
		}
		return user, session
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if gw.Stateless {
		if sid != "" {
			return false
		}
		spec, ok := h.spec(r, view)
		if !ok {
			return false
		}
		vs, err := h.g.serverFor(r.Context(), spec)
		if err != nil {
			return false
		}
		tr.vs = vs
		tr.owner = taskOwner{view: view.Name, user: tok.User, host: remoteHost(r)}
	} else {
		si := h.g.sess.get(sid)
		if si == nil {
			return false
		}
		sv, ss := si.vs.Load(), si.ss.Load()
		if sv == nil || ss == nil || sv.spec().view.Name != view.Name {
			return false
		}
		if hasTok {
			if u, ok := h.g.sess.user(sid); !ok || u != tok.User {
				return false
			}
		}
		tr.vs, tr.ss, tr.sid = sv, ss, sid
		tr.owner = taskOwner{view: view.Name, session: sid}
	}
	tr.serve(r.Context())
	return true
}

// serve answers the request.
func (tr *taskRequest) serve(ctx context.Context) {
	switch tr.m.method {
	case "tools/call":
		tr.call(ctx)
	case "tasks/get":
		tr.get(ctx)
	case "tasks/result":
		tr.result(ctx)
	case "tasks/list":
		tr.list(ctx)
	case "tasks/cancel":
		tr.cancel(ctx)
	}
}

// stream returns the event stream of the request, on which what the
// server asks the client meanwhile goes, with ctx carrying it; nil, and
// ctx as it is, off streamable HTTP, where the SDK's session carries
// those on the session's one stream. Call end when done.
func (tr *taskRequest) stream(ctx context.Context) (context.Context, *callStream) {
	if tr.w == nil {
		return ctx, nil
	}
	cs := &callStream{g: tr.g, w: tr.w, sid: tr.sid}
	return context.WithValue(ctx, fastStreamKey{}, cs), cs
}

// send writes the answer, event (one event of an event stream, as
// callStream writes them), on cs once something began it, else as the
// response to the POST, or on the session's connection.
func (tr *taskRequest) send(cs *callStream, event []byte) {
	switch {
	case tr.conn != nil:
		tr.conn.reply(event)
	case cs != nil:
		cs.finish(event)
	default:
		writeAnswer(tr.w, event)
	}
}

// answer writes a result.
func (tr *taskRequest) answer(cs *callStream, result any) {
	out, err := marshalNoEscape(result)
	if err != nil {
		tr.fail(cs, err)
		return
	}
	out = tr.vs.withTaskServerInfo(tr.m.Params, out)
	var b bytes.Buffer
	b.WriteString(eventPrefix)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(tr.m.ID)
	b.WriteString(`,"result":`)
	b.Write(out)
	b.WriteString("}\n\n")
	tr.send(cs, b.Bytes())
}

// fail writes err as a JSON-RPC error: a server's own error with its
// code, a validation failure as invalid params (-32602), anything else
// as an internal error (-32603) whose data is the structured error.
func (tr *taskRequest) fail(cs *callStream, err error) {
	rpc := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr):
		rpc = &jsonrpc.Error{Code: werr.Code, Message: strings.TrimPrefix(werr.Message, fmt.Sprintf("MCP error %d: ", werr.Code)), Data: werr.Data}
	default:
		fe := fault.As(err)
		if fe != nil {
			rpc.Message = fe.Message
			if fe.Kind == fault.Validation || fe.Kind == fault.NotFound || fe.Kind == fault.Authorization {
				rpc.Code = jsonrpc.CodeInvalidParams
			}
			if data, jerr := json.Marshal(fe); jerr == nil {
				rpc.Data = data
			}
		}
	}
	tr.send(cs, errorEvent(tr.m.ID, rpc))
}

// errorEvent is the error answer rpc to the request with id, as one
// event of an event stream.
func errorEvent(id json.RawMessage, rpc *jsonrpc.Error) []byte {
	body, err := marshalNoEscape(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, rpc})
	if err != nil {
		body = []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":"internal error"}}`)
	}
	event := append([]byte(eventPrefix), body...)
	return append(event, "\n\n"...)
}

// errNoTask is the answer for a task id the caller has no task by.
func errNoTask(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Failed to retrieve task: Task not found: %q", id)}
}

// taskID reads params.taskId.
func (tr *taskRequest) entry() (*taskEntry, map[string]json.RawMessage, error) {
	var p map[string]json.RawMessage
	var id string
	if json.Unmarshal(tr.m.Params, &p) != nil || json.Unmarshal(p["taskId"], &id) != nil || id == "" {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: %s needs a taskId (a string)", tr.m.method)}
	}
	e := tr.g.tasks.get(tr.owner, id)
	if e == nil {
		return nil, nil, errNoTask(id)
	}
	return e, p, nil
}

// upstreamParams are a client's params with the task's upstream id and
// without the keys of the client's hop.
func upstreamParams(e *taskEntry, p map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(p))
	for k, v := range p {
		out[k] = v
	}
	out["taskId"], _ = json.Marshal(e.upstream)
	if raw, ok := out["_meta"]; ok {
		var meta mcp.Meta
		if json.Unmarshal(raw, &meta) == nil {
			if fm := forwardMeta(meta); fm != nil {
				out["_meta"], _ = json.Marshal(fm)
			} else {
				delete(out, "_meta")
			}
		}
	}
	return out
}

// client returns the connection e's requests go on: the upstream session
// its task was created on — on a per_client or per_user server its
// owner's own (a new one, should that have ended: the server then says
// the task is not found, as it would to the client directly) — else the
// shared one.
func (tr *taskRequest) client(ctx context.Context, e *taskEntry) (*upstream.Client, error) {
	if e.hasUp {
		ctx = upstream.WithOwner(ctx, e.up)
	}
	return tr.g.upstreamFor(ctx, e.server)
}

// relabel rewrites a task object of the server's (its taskId) as the
// client knows it.
func relabel(e *taskEntry, task json.RawMessage) json.RawMessage {
	if e.id == e.upstream {
		return task
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(task, &m) != nil {
		return task
	}
	m["taskId"], _ = json.Marshal(e.id)
	out, err := json.Marshal(m)
	if err != nil {
		return task
	}
	return out
}

// relatedTaskKey is the _meta key that links a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// call runs a tools/call made as a task through the engine.
func (tr *taskRequest) call(ctx context.Context) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      mcp.Meta        `json:"_meta"`
		Task      json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(tr.m.Params, &p); err != nil {
		tr.fail(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + err.Error()})
		return
	}
	vs := tr.vs
	vs.mu.Lock()
	te, ok := vs.tools[p.Name]
	vs.mu.Unlock()
	if oe, own := vs.ownTool(tr.ss, p.Name); own {
		te, ok = oe, true // as the client's own upstream session listed it
	}
	user, session := tr.identity(p.Meta)
	ctx, cs := tr.stream(ctx)
	if cs != nil {
		defer cs.end()
	}
	cc := &clientCall{ss: tr.ss, stream: cs, level: tr.g.callerLevel(tr.gw, p.Meta, tr.ss), requestID: tr.m.ID}
	if !ok {
		// As for any call of a name the view does not list (unlisted.go):
		// on a view that is the server, the server says whether it has it.
		server, tool, err := vs.resolveUnlisted(p.Name)
		if err != nil {
			_ = vs.g.eng.Refuse(ctx, vs.request(server, tool, p.Arguments, p.Meta, user, session), err)
			tr.fail(cs, protocolError(err))
			return
		}
		te = toolEntry{server: server, name: tool}
	}
	// On a per_client or per_user server the task is created on the
	// client's (or user's) own upstream session, as an ordinary call is,
	// and its other requests follow it there (taskRequest.client).
	ctx = vs.g.withOwner(ctx, vs, tr.ss, user)
	up, hasUp := upstream.OwnerFrom(ctx)
	creq := vs.request(te.server, te.name, p.Arguments, p.Meta, user, session)
	vs.checkAs(&creq, te, tr.ss, p.Arguments)
	creq.Task = p.Task
	creq.RequestID = tr.m.ID
	ctx, span := vs.g.eng.Tracing().StartServer(ctx, telemetry.Request{Method: tr.m.method, Target: p.Name, Meta: p.Meta, Header: tr.header, Session: tr.sid, RequestID: string(tr.m.ID)})
	res, err := vs.runTask(ctx, cc, te, creq, user, session)
	span.EndTool(nil, err)
	if ctx.Err() != nil {
		return
	}
	if rpc := serverRPCError(err); rpc != nil && creq.Unvalidated {
		// As the server answered it, as a plain call's (answeredByServer).
		tr.send(cs, errorEvent(tr.m.ID, rpc))
		return
	}
	if err != nil {
		tr.fail(cs, err)
		return
	}
	if res.Task == nil {
		// The server ran it at once: its result, as for any call.
		tr.answer(cs, res.CallToolResult)
		return
	}
	var task struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(res.Task, &task) != nil || task.TaskID == "" {
		tr.fail(cs, fault.New(fault.Protocol, "%s answered the call of %s as a task without a taskId", te.server, te.name))
		return
	}
	e := &taskEntry{owner: tr.owner, server: te.server, upstream: task.TaskID, req: creq, created: time.Now(), ss: tr.ss, vs: vs,
		up: up, hasUp: hasUp, upKey: tr.g.upstreamSession(ctx, te.server)}
	e.req.Task = nil
	tr.g.tasks.add(e)
	tr.answer(cs, map[string]json.RawMessage{"task": relabel(e, res.Task)})
}

// runTask runs creq, a call of the view's tool te made as a task, as
// viewServer.call runs any: what the upstream sends its client meanwhile
// goes to cc's.
func (vs *viewServer) runTask(ctx context.Context, cc *clientCall, te toolEntry, creq toolcall.Request, user, session string) (*toolcall.Result, error) {
	cc.vs, cc.server = vs, te.server
	ctx = context.WithValue(ctx, callerKey{}, cc)
	cc.ctx = ctx
	done := vs.g.calls.add(cc)
	defer done()
	ctx = upstream.WithIdentity(ctx, upstream.Identity{User: user, Session: session})
	res, err := vs.g.eng.Call(ctx, creq)
	if err == nil && res != nil && res.CallToolResult != nil {
		res.CallToolResult.Meta = hopless(res.CallToolResult.Meta)
	}
	return res, err
}

// get forwards tasks/get.
func (tr *taskRequest) get(ctx context.Context) {
	e, p, err := tr.entry()
	if err != nil {
		tr.fail(nil, err)
		return
	}
	task, err := tr.fetch(ctx, e, "tasks/get", upstreamParams(e, p))
	if err != nil {
		tr.fail(nil, err)
		return
	}
	tr.answer(nil, task)
}

// fetch sends method for e and returns the task object the server gave,
// as the client knows it; a task that ended without a result to fetch
// (failed, cancelled) has its outcome recorded.
func (tr *taskRequest) fetch(ctx context.Context, e *taskEntry, method string, params any) (json.RawMessage, error) {
	c, err := tr.client(ctx, e)
	if err != nil {
		return nil, upstreamError(e.server, err)
	}
	raw, err := c.Request(upstream.WithIdentity(ctx, upstream.Identity{User: e.req.Identity, Session: e.req.SessionID}), method, params)
	if err != nil {
		return nil, upstreamError(e.server, err)
	}
	var st struct {
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
	}
	if json.Unmarshal(raw, &st) == nil && (st.Status == "failed" || st.Status == "cancelled") {
		tr.g.recordTask(context.WithoutCancel(ctx), e, nil, toolcall.TaskError(e.server, e.req.Tool, st.Status, st.StatusMessage))
	}
	return relabel(e, raw), nil
}

// recordTask records e's outcome once.
func (g *Gateway) recordTask(ctx context.Context, e *taskEntry, res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recorded {
		return e.result
	}
	e.recorded = true
	out := g.eng.TaskResult(ctx, e.req, e.created, res, err)
	if out != nil {
		e.result = out.CallToolResult
	}
	return e.result
}

// cancel forwards tasks/cancel.
func (tr *taskRequest) cancel(ctx context.Context) {
	e, p, err := tr.entry()
	if err != nil {
		tr.fail(nil, err)
		return
	}
	task, err := tr.fetch(ctx, e, "tasks/cancel", upstreamParams(e, p))
	if err != nil {
		tr.fail(nil, err)
		return
	}
	tr.answer(nil, task)
}

// list answers tasks/list. On a prefix: never view of one server whose
// clients have upstream sessions of their own (listsOwn) it is the
// server's answer on the caller's session (listOwn). Elsewhere it is the
// caller's own tasks, newest first, each as the server gives it now
// (tasks/get), in one page: a shared session's own list would show the
// tasks of every client of the gateway, and a view of several servers
// has no one server's pages to give. Tasks the server no longer has are
// forgotten.
func (tr *taskRequest) list(ctx context.Context) {
	if server := tr.vs.soleServer(); tr.listsOwn(server) {
		tr.listOwn(ctx, server)
		return
	}
	tasks := []json.RawMessage{}
	for _, e := range tr.g.tasks.list(tr.owner) {
		task, err := tr.fetch(ctx, e, "tasks/get", map[string]any{"taskId": e.upstream})
		var werr *jsonrpc.Error
		switch {
		case err == nil:
			tasks = append(tasks, task)
		case errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams:
			tr.g.tasks.forget(e) // expired upstream
		case ctx.Err() != nil:
			return
		default:
			// The server is away: the task is still the caller's.
			tr.g.logger.Debug("listing a task failed", logKeyServer, e.server, logKeyErr, err)
		}
	}
	tr.answer(nil, map[string]any{"tasks": tasks})
}

// listsOwn reports whether tasks/list is answered from server's own
// list on the caller's upstream session: server is a prefix: never
// view's one server (soleServer) whose session mode is per_client or
// per_user, and the caller has a session of its own (not stateless).
func (tr *taskRequest) listsOwn(server string) bool {
	if server == "" || tr.ss == nil || tr.gw.Stateless {
		return false
	}
	for _, s := range tr.g.config().Servers {
		if s.Name == server {
			return s.Session.Owned()
		}
	}
	return false
}

// listOwn answers tasks/list on a view that is its server's (listsOwn)
// from the caller's own upstream session (per_user: its user's), as the
// server answers it: its order, its pages and cursors, its error if it
// has no tasks/list. Only the tasks this client session created through
// the gateway are kept — those it may tasks/get —, in case the server
// shows a session tasks that are not its own (the specification asks
// servers to bind tasks to their session, but the TypeScript SDK's
// examples show any task to anyone) and, per_user, for the user's other
// clients' tasks; on a per_client session they are all of them.
func (tr *taskRequest) listOwn(ctx context.Context, server string) {
	var p map[string]json.RawMessage
	if len(tr.m.Params) > 0 && json.Unmarshal(tr.m.Params, &p) != nil {
		tr.fail(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: tasks/list takes an object"})
		return
	}
	var meta mcp.Meta
	if raw, ok := p["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
		if fm := forwardMeta(meta); fm != nil {
			p["_meta"], _ = json.Marshal(fm)
		} else {
			delete(p, "_meta")
		}
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	user, _ := tr.identity(meta)
	ctx = tr.g.withOwner(ctx, tr.vs, tr.ss, user)
	upKey := tr.g.upstreamSession(ctx, server)
	c, err := tr.g.upstreamFor(ctx, server)
	if err != nil {
		tr.fail(nil, upstreamError(server, err))
		return
	}
	raw, err := c.Request(ctx, "tasks/list", p)
	if ctx.Err() != nil {
		return
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		out := *werr // as the server gave it, as with any of its errors on such a view
		tr.send(nil, errorEvent(tr.m.ID, &out))
		return
	}
	if err != nil {
		tr.fail(nil, upstreamError(server, err))
		return
	}
	var res map[string]json.RawMessage
	var listed []json.RawMessage
	if json.Unmarshal(raw, &res) != nil || json.Unmarshal(res["tasks"], &listed) != nil {
		tr.fail(nil, fault.New(fault.Protocol, "%s answered tasks/list without a list of tasks", server))
		return
	}
	tasks := make([]json.RawMessage, 0, len(listed))
	for _, task := range listed {
		var t struct {
			TaskID        string `json:"taskId"`
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
		}
		if json.Unmarshal(task, &t) != nil {
			continue
		}
		e := tr.g.tasks.byUpstream(server, upKey, t.TaskID)
		if e == nil || e.owner != tr.owner {
			continue
		}
		if t.Status == "failed" || t.Status == "cancelled" {
			tr.g.recordTask(context.WithoutCancel(ctx), e, nil, toolcall.TaskError(e.server, e.req.Tool, t.Status, t.StatusMessage))
		}
		tasks = append(tasks, relabel(e, task))
	}
	res["tasks"], _ = json.Marshal(tasks)
	if m, ok := res["_meta"]; ok {
		var rm mcp.Meta
		if json.Unmarshal(m, &rm) == nil {
			if h := hopless(rm); h != nil {
				res["_meta"], _ = json.Marshal(h)
			} else {
				delete(res, "_meta")
			}
		}
	}
	tr.answer(nil, res)
}

// result forwards tasks/result: it waits for the task to end, while what
// the server asks its client goes to this client on this request's
// stream, then records the outcome.
func (tr *taskRequest) result(ctx context.Context) {
	e, p, err := tr.entry()
	if err != nil {
		tr.fail(nil, err)
		return
	}
	c, err := tr.client(ctx, e)
	if err != nil {
		tr.fail(nil, upstreamError(e.server, err))
		return
	}
	ctx, cs := tr.stream(ctx)
	if cs != nil {
		defer cs.end()
	}
	cc := &clientCall{ss: tr.ss, stream: cs, vs: tr.vs, server: e.server, level: tr.g.callerLevel(tr.gw, nil, tr.ss)}
	ctx = context.WithValue(ctx, callerKey{}, cc)
	cc.ctx = ctx
	done := tr.g.calls.add(cc)
	defer done()
	e.mu.Lock()
	e.stream = cs
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		if e.stream == cs {
			e.stream = nil
		}
		e.mu.Unlock()
	}()
	raw, err := c.Request(upstream.WithIdentity(ctx, upstream.Identity{User: e.req.Identity, Session: e.req.SessionID}), "tasks/result", upstreamParams(e, p))
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		tr.g.recordTask(context.WithoutCancel(ctx), e, nil, err)
		tr.fail(cs, upstreamError(e.server, err))
		return
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		err = fault.Wrap(fault.Protocol, err, "decoding the result of the task %s of %s", e.id, e.server)
		tr.g.recordTask(context.WithoutCancel(ctx), e, nil, err)
		tr.fail(cs, err)
		return
	}
	out := tr.g.recordTask(context.WithoutCancel(ctx), e, &res, nil)
	if out == nil {
		out = &res
	}
	cp := *out
	cp.Meta = hopless(out.Meta)
	if cp.Meta == nil {
		cp.Meta = mcp.Meta{}
	}
	cp.Meta[relatedTaskKey] = map[string]string{"taskId": e.id}
	if cp.Content == nil {
		cp.Content = []mcp.Content{}
	}
	answer, err := marshalNoEscape(&mcp.CallToolResult{Meta: cp.Meta, Content: cp.Content, StructuredContent: cp.StructuredContent, IsError: cp.IsError})
	if err != nil {
		tr.fail(cs, err)
		return
	}
	tr.answer(cs, json.RawMessage(withResultType(tr.m.Params, answer)))
}

// withResultType returns answer, the JSON object of a tasks/result
// result (a tool's result, which the gateway builds from the server's),
// with resultType "complete" when the request (its params) is of protocol
// 2026-07-28, where every complete CallToolResult says so (the SDK's and
// a server's of that version); a request of an older version gets none.
func withResultType(params, answer json.RawMessage) json.RawMessage {
	if !perRequestParams(params) || len(answer) < 2 || answer[len(answer)-1] != '}' {
		return answer
	}
	out := slices.Clone(answer[:len(answer)-1])
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"resultType":"complete"`...)
	return append(out, '}')
}

// taskStatus forwards an upstream's notifications/tasks/status to the
// client session that owns the task, on the stream the server sent it
// on, as the client would get it directly: sent on the stream of a
// request of that client's (a call, a tasks/result: streamable HTTP
// tells), on that request's stream; sent on the standalone stream of the
// client's own upstream session (per_client, per_user), on the session's
// own stream (notify.go) — a connection's one stream, a streamable-HTTP
// session's standalone stream if the client has one open. Where the
// transport does not tell (stdio, SSE, WebSocket, whose one stream is
// the session's), and from the shared session's standalone stream, which
// is no one client's, on the task's open tasks/result stream, else the
// session's. A stateless client has no stream outside its requests: it
// learns the status by polling, as the specification has it. ctx names
// the owned upstream session that sent it, if any
// (upstream.SessionKeyFrom).
func (g *Gateway) taskStatus(ctx context.Context, server string, params json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return
	}
	upKey := ""
	if k, ok := upstream.SessionKeyFrom(ctx); ok {
		upKey = sessionKeyString(k)
	}
	e := g.tasks.byUpstream(server, upKey, p.TaskID)
	if e == nil {
		return
	}
	params = relabel(e, params)
	c, onRequest := ctx.Value(callerKey{}).(*clientCall)
	_, owned := upstream.SessionKeyFrom(ctx)
	switch {
	case onRequest && e.ownedBy(c) && g.notifyCall(c, taskStatusMethod, params):
		return
	case onRequest, owned && upstream.SentOutsideRequests(ctx):
		// Its request's stream is closed, or it is another client's:
		// the session's own stream. Or it came outside any request of
		// the client's own upstream session.
	default:
		e.mu.Lock()
		cs := e.stream
		e.mu.Unlock()
		if cs != nil && cs.notify(taskStatusMethod, params) {
			return
		}
	}
	if e.ss != nil && !g.notifySession(e.ss, taskStatusMethod, params) {
		g.logger.Debug("a task's status had no stream to go on", logKeyServer, server)
	}
}

// ownedBy reports whether c is a request of the client session that
// owns e (stateless: e's own tasks/result).
func (e *taskEntry) ownedBy(c *clientCall) bool {
	if c.ss != nil {
		return c.ss == e.ss
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return c.stream != nil && c.stream == e.stream
}

// taskStatusMethod is the notification of a task's new status.
const taskStatusMethod = "notifications/tasks/status"
