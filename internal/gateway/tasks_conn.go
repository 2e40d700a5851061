package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file gives tasks to the sessions the gateway serves over one
// connection: serve --stdio and the legacy SSE endpoint. The seam is the
// connection the SDK's server reads and writes (an mcp.Transport
// wrapper), not a receiving middleware: the SDK refuses a method it does
// not know (tasks/get…) before any middleware runs, and decodes
// tools/call into params without task. So the wrapped connection
// (taskConn) takes the task requests off the connection before the SDK
// reads them and answers them with the implementation streamable HTTP
// uses (taskRequest, tasks.go), on the connection; adds what the SDK's
// answers to initialize and tools/list lack of tasks (taskcaps.go); and
// carries notifications the SDK does not send (notify.go). Everything
// else passes as it came.

// taskTransport wraps the transport of a session of vs so that its
// connection is a taskConn.
type taskTransport struct {
	mcp.Transport
	g   *Gateway
	vs  *viewServer
	key string // the session, as task owners know it

	conn *taskConn
}

// newTaskTransport wraps t, the transport of a session of vs known to
// task owners as key ("" for a new one). Call attach with the session
// once the server has connected it.
func (g *Gateway) newTaskTransport(t mcp.Transport, vs *viewServer, key string) *taskTransport {
	if key == "" {
		key = "conn-" + rand.Text()
	}
	tt := &taskTransport{Transport: t, g: g, vs: vs, key: key}
	// The connection exists before it connects, so that a request posted
	// to an SSE session as soon as its endpoint is known has it; it is
	// answered once the session is attached.
	ctx, cancel := context.WithCancel(context.Background())
	tt.conn = &taskConn{t: tt, ctx: ctx, cancel: cancel, ready: make(chan struct{}), closed: make(chan struct{}),
		notes: map[string]string{}, running: map[string]context.CancelFunc{}}
	return tt
}

// Connect connects the transport and wraps its connection.
func (t *taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		t.conn.cancel()
		return nil, err
	}
	t.conn.Connection = conn
	return t.conn, nil
}

// SupportsProtocolVersion answers as the wrapped transport does (the
// legacy SSE transport does not serve protocol 2026-07-28).
func (t *taskTransport) SupportsProtocolVersion(version string) bool {
	if p, ok := t.Transport.(mcp.ProtocolVersionSupporter); ok {
		return p.SupportsProtocolVersion(version)
	}
	return true
}

// attach tells the connection its session, once Server.Connect returned
// it: task requests wait for it, and notifySession finds the connection
// by it.
func (t *taskTransport) attach(ss *mcp.ServerSession) {
	c := t.conn
	c.ss.Store(ss)
	t.g.streams.conns.Store(ss, c)
	close(c.ready)
	if c.isClosed() {
		t.g.streams.conns.CompareAndDelete(ss, c)
	}
}

// closedChan returns a channel closed when the connection closes.
func (t *taskTransport) closedChan() <-chan struct{} { return t.conn.closed }

// taskConn is a session's connection with the task requests taken off
// it (see the file comment).
type taskConn struct {
	mcp.Connection
	t      *taskTransport
	ctx    context.Context // ends when the connection closes
	cancel context.CancelFunc
	ready  chan struct{} // closed once ss is set
	ss     atomic.Pointer[mcp.ServerSession]

	mu      sync.Mutex
	notes   map[string]string             // request id -> initialize or tools/list, whose answers get annotated
	running map[string]context.CancelFunc // request id -> a task request being answered

	closeOnce sync.Once
	closed    chan struct{}
}

// idString is the JSON form of an id, as the wire carries it.
func idString(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// Read returns the next message for the SDK, answering the task requests
// that come before it.
func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			if resp, ok := msg.(*jsonrpc.Response); ok && c.t.g.deliverConn(c.t.key, resp) {
				continue // the answer to a request of the gateway's own
			}
			return msg, nil
		}
		switch {
		case req.IsCall() && isTaskMessage(req.Method, req.Params):
			rawID, err := json.Marshal(req.ID.Raw())
			if err != nil {
				return msg, nil // the SDK says what is wrong
			}
			m := &message{ID: rawID, Params: req.Params, method: req.Method}
			m.Method, _ = json.Marshal(req.Method)
			c.serve(m)
			continue
		case req.IsCall() && (req.Method == "initialize" || req.Method == "tools/list"):
			c.mu.Lock()
			if len(c.notes) > 64 {
				clear(c.notes) // answers that never came
			}
			c.notes[idString(req.ID)] = req.Method
			c.mu.Unlock()
		case req.Method == "notifications/cancelled":
			c.cancelled(req.Params) // the SDK sees it too
		}
		return msg, nil
	}
}

// Write writes a message of the SDK's, the answers to initialize and
// tools/list with what they lack of tasks.
func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && len(resp.Result) > 0 {
		c.mu.Lock()
		key := idString(resp.ID)
		method := c.notes[key]
		delete(c.notes, key)
		c.mu.Unlock()
		if method != "" {
			vs := c.t.vs
			if a := c.t.g.taskAnnotations(method, vs.spec(), vs); a != nil {
				if out, ok := a.apply(resp.Result); ok {
					cp := *resp
					cp.Result = out
					msg = &cp
				}
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// Close closes the connection, ends the task requests being answered and
// forgets the session's tasks.
func (c *taskConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		close(c.closed)
		if ss := c.ss.Load(); ss != nil {
			c.t.g.streams.conns.CompareAndDelete(ss, c)
		}
		c.t.g.tasks.dropSession(c.t.key)
	})
	return c.Connection.Close()
}

// isClosed reports whether Close was called.
func (c *taskConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// serve answers m, a task request, in a goroutine of its own as the SDK
// answers requests: tasks/result waits for the task to end.
func (c *taskConn) serve(m *message) {
	ctx, cancel := context.WithCancel(c.ctx)
	key := string(bytes.TrimSpace(m.ID))
	c.mu.Lock()
	c.running[key] = cancel
	c.mu.Unlock()
	c.t.g.sessions.Go(func() {
		defer func() {
			c.mu.Lock()
			delete(c.running, key)
			c.mu.Unlock()
			cancel()
		}()
		select {
		case <-c.ready:
		case <-ctx.Done():
			return
		}
		vs, ss := c.t.vs, c.ss.Load()
		if ss.InitializeParams() == nil && !bytes.Contains(m.Params, []byte(mcp.MetaKeyProtocolVersion)) {
			// As the SDK answers any request before initialize (a
			// request of protocol 2026-07-28 carries its own).
			c.reply(errorEvent(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("method %q is invalid during session initialization: send initialize first", m.method)}))
			return
		}
		tr := &taskRequest{g: c.t.g, m: m, gw: c.t.g.config().Gateway, vs: vs, ss: ss, sid: c.t.key, conn: c,
			owner: taskOwner{view: vs.spec().view.Name, session: c.t.key},
			identity: func(meta mcp.Meta) (string, string) {
				return vs.identity(nil, meta, ss)
			},
		}
		tr.serve(ctx)
	})
}

// cancelled ends the task request a notifications/cancelled names.
func (c *taskConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	c.mu.Lock()
	cancel := c.running[string(bytes.TrimSpace(p.RequestID))]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// reply writes the answer to a task request, event (one event of an
// event stream, as taskRequest builds them), as a message.
func (c *taskConn) reply(event []byte) {
	body := bytes.TrimSuffix(bytes.TrimPrefix(event, []byte(eventPrefix)), []byte("\n\n"))
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		c.t.g.logger.Warn("a task answer does not decode", logKeyErr, err)
		return
	}
	if err := c.Connection.Write(c.ctx, msg); err != nil {
		c.t.g.logger.Debug("writing a task answer failed", logKeyErr, err)
	}
}

// notify writes msg, a notification, and reports whether it went out.
func (c *taskConn) notify(msg []byte) bool {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return false
	}
	return c.Connection.Write(c.ctx, m) == nil
}
