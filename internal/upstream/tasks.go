package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Tasks (task-augmented requests, MCP 2025-11-25) are not modelled by the
// go-sdk this module uses: it drops a server's capabilities.tasks and its
// tools' execution.taskSupport when it decodes them, answers
// notifications/tasks/status with nothing, and sends no method it does
// not know (tasks/get, tasks/result, tasks/list, tasks/cancel). So the
// client reads what the SDK drops from the raw messages — the answers to
// initialize and tools/list, as the connection carries them — and sends
// the task methods, and task-augmented tools/call, as raw JSON-RPC
// requests: on a streamable-HTTP session by posting them itself (as the
// lean path posts calls, fastcall.go), on every other transport by
// writing them on the SDK's connection and taking their answers off it
// before the SDK reads them (rawConn). Everything else the server sends
// while such a request runs (sampling, elicitation, logs) takes the usual
// paths.

// taskState is what a client knows of its server's task support.
type taskState struct {
	mu    sync.Mutex
	caps  json.RawMessage            // capabilities.tasks from initialize; nil if none
	exec  map[string]json.RawMessage // tool name -> its execution object
	notes map[string]string          // request id -> method, for answers to read
	// noted counts notes, so that the answers to other requests (every
	// call's) pass without a look.
	noted atomic.Int32

	conn     atomic.Pointer[rawConn] // the connection, on transports that are wrapped
	next     atomic.Uint64
	pending  sync.Map // raw request id -> chan *jsonrpc.Response
	onStatus func(context.Context, json.RawMessage)
	// captures are the SDK's requests whose results a caller keeps
	// (rawresults.go).
	captures resultCaptures
}

// rawIDPrefix starts the ids of the requests the client sends itself on
// the SDK's connection; the SDK's own ids are integers.
const rawIDPrefix = "sb-t"

// maxSniff bounds the answer to initialize or tools/list that is read
// for what the SDK drops; a larger one is left unread (its tools then
// show no execution).
const maxSniff = 8 << 20

// note records that a request of method with the JSON id is on its way,
// when its answer has something the SDK drops.
func (s *taskState) note(id, method string) {
	if method != "initialize" && method != "tools/list" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notes == nil {
		s.notes = map[string]string{}
	}
	if len(s.notes) > 64 {
		clear(s.notes) // answers that never came
	}
	s.notes[id] = method
	s.noted.Store(int32(len(s.notes)))
}

// answered reads result, the answer to the request with the JSON id, if
// that request was noted.
func (s *taskState) answered(id string, result json.RawMessage) {
	s.mu.Lock()
	method := s.notes[id]
	delete(s.notes, id)
	s.noted.Store(int32(len(s.notes)))
	s.mu.Unlock()
	if method != "" && len(result) > 0 {
		s.observe(method, result)
	}
}

// observe reads what the SDK drops from the answer to method.
func (s *taskState) observe(method string, result json.RawMessage) {
	switch method {
	case "initialize":
		var r struct {
			Capabilities struct {
				Tasks json.RawMessage `json:"tasks"`
			} `json:"capabilities"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		s.mu.Lock()
		s.caps = nil
		if t := bytes.TrimSpace(r.Capabilities.Tasks); len(t) > 0 && string(t) != "null" {
			s.caps = t
		}
		s.mu.Unlock()
	case "tools/list":
		var r struct {
			Tools []struct {
				Name      string          `json:"name"`
				Execution json.RawMessage `json:"execution"`
			} `json:"tools"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		s.mu.Lock()
		if s.exec == nil {
			s.exec = map[string]json.RawMessage{}
		}
		for _, t := range r.Tools {
			if e := bytes.TrimSpace(t.Execution); len(e) > 0 && string(e) != "null" {
				s.exec[t.Name] = e
			} else {
				delete(s.exec, t.Name)
			}
		}
		s.mu.Unlock()
	}
}

// statusChanged passes on a notifications/tasks/status: read off the
// connection (rawConn), the fast path's streams (fastcall.go) or, on
// streamable HTTP, the SDK's event streams (progressScan, launch.go).
// ctx says which stream it came on, where the transport tells: a
// request's (with its values) or the standalone stream
// (SentOutsideRequests).
func (s *taskState) statusChanged(ctx context.Context, params json.RawMessage) {
	if s.onStatus != nil {
		s.onStatus(ctx, params)
	}
}

// TaskCapabilities returns the server's capabilities.tasks as it
// declared it (nil when it declared none).
func (c *Client) TaskCapabilities() json.RawMessage {
	c.tasks.mu.Lock()
	defer c.tasks.mu.Unlock()
	return c.tasks.caps
}

// ToolExecution returns a tool's execution object (its taskSupport) as
// the server listed it, or nil.
func (c *Client) ToolExecution(tool string) json.RawMessage {
	c.tasks.mu.Lock()
	defer c.tasks.mu.Unlock()
	return c.tasks.exec[tool]
}

// TaskSupport returns a tool's execution.taskSupport: "required",
// "optional", or "forbidden" (also when the server says nothing, or
// declared no task support for tools/call).
func (c *Client) TaskSupport(tool string) string {
	var caps struct {
		Requests struct {
			Tools struct {
				Call json.RawMessage `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if json.Unmarshal(c.TaskCapabilities(), &caps) != nil || len(caps.Requests.Tools.Call) == 0 {
		return "forbidden"
	}
	var e struct {
		TaskSupport string `json:"taskSupport"`
	}
	if json.Unmarshal(c.ToolExecution(tool), &e) != nil || e.TaskSupport == "" {
		return "forbidden"
	}
	return e.TaskSupport
}

// Request sends a request the SDK does not model — tasks/get,
// tasks/result, tasks/list, tasks/cancel, a task-augmented tools/call —
// and returns the server's raw result. What the server sends meanwhile
// (sampling, elicitation, log messages) is answered as during a call,
// with ctx. An error answer is a *fault.Error that keeps the server's
// JSON-RPC error as its cause.
func (c *Client) Request(ctx context.Context, method string, params any) (_ json.RawMessage, err error) {
	ctx, end := c.track(ctx) // retire.go
	defer func() { err = end(err) }()
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fault.Wrap(fault.Validation, err, "encoding the params of %s", method)
	}
	doing := fmt.Sprintf("calling %s on %s", method, c.server.Name)
	id := rawIDPrefix + strconv.FormatUint(c.tasks.next.Add(1), 10)
	var res json.RawMessage
	switch conn := c.tasks.conn.Load(); {
	case c.fast != nil:
		var msg *wireMessage
		if msg, err = c.fast.exchange(ctx, id, method, p); err == nil {
			if msg.Error != nil {
				err = fmt.Errorf("calling %q: %w", method, msg.Error)
			} else {
				res = msg.Result
			}
		}
	case conn != nil:
		res, err = conn.request(ctx, c.done, id, method, p)
	default:
		return nil, fault.New(fault.Protocol, "%s: the connection to %s cannot carry %s (a streamable-HTTP session on protocol %s)",
			doing, c.server.Name, method, c.protocolVersion()).WithDetail("server", c.server.Name)
	}
	if err != nil {
		return nil, c.classify(ctx, err, doing)
	}
	return res, nil
}

// protocolVersion is the protocol version of the session.
func (c *Client) protocolVersion() string {
	if ir := c.session.InitializeResult(); ir != nil {
		return ir.ProtocolVersion
	}
	return ""
}

// transport wraps t so that its connection carries raw requests and
// shows the client what the SDK drops.
func (s *taskState) transport(t mcp.Transport) mcp.Transport {
	return &rawTransport{Transport: t, s: s}
}

type rawTransport struct {
	mcp.Transport
	s *taskState
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{Connection: conn, s: t.s}
	t.s.conn.Store(rc)
	return rc, nil
}

// rawConn is the SDK's connection with the client's raw requests beside
// it: their answers, and notifications/tasks/status, never reach the SDK.
type rawConn struct {
	mcp.Connection
	s *taskState
}

// idKey is the JSON form of an id, as the wire carries it.
func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if id, ok := m.ID.Raw().(string); ok && strings.HasPrefix(id, rawIDPrefix) {
				if ch, ok := c.s.pending.Load(id); ok {
					select {
					case ch.(chan *jsonrpc.Response) <- m:
					default:
					}
				}
				continue
			}
			if m.Error == nil && c.s.noted.Load() > 0 {
				c.s.answered(idKey(m.ID), m.Result)
			}
			c.s.captures.read(m) // rawresults.go
		case *jsonrpc.Request:
			if !m.IsCall() && m.Method == "notifications/tasks/status" {
				c.s.statusChanged(context.Background(), m.Params) // one stream
				continue
			}
		}
		return msg, nil
	}
}

func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && (r.Method == "initialize" || r.Method == "tools/list") {
		c.s.note(idKey(r.ID), r.Method)
	}
	c.s.captures.writing(ctx, msg) // rawresults.go
	return c.Connection.Write(ctx, msg)
}

// request sends one raw request and waits for its answer, the end of ctx
// (the server is told with notifications/cancelled) or of the connection.
func (c *rawConn) request(ctx context.Context, done <-chan struct{}, id, method string, params json.RawMessage) (json.RawMessage, error) {
	ch := make(chan *jsonrpc.Response, 1)
	c.s.pending.Store(id, ch)
	defer c.s.pending.Delete(id)
	jid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, err
	}
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: jid, Method: method, Params: params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("calling %q: %w", method, r.Error)
		}
		return r.Result, nil
	case <-ctx.Done():
		p, _ := json.Marshal(map[string]any{"requestId": id, "reason": "cancelled by the caller"})
		wctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelNoticeTimeout)
		_ = c.Connection.Write(wctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: p})
		stop()
		return nil, ctx.Err()
	case <-done:
		return nil, mcp.ErrConnectionClosed
	}
}

// sniffHTTP reads, from a streamable-HTTP answer to a request of the
// SDK's, what the SDK drops: body is the request as posted, resp its
// answer (JSON or an event stream), which is read through as the SDK
// reads it.
func (s *taskState) sniffHTTP(body []byte, resp *http.Response) {
	if !bytes.Contains(body, []byte(`"initialize"`)) && !bytes.Contains(body, []byte(`"tools/list"`)) {
		return // the common case, decided without decoding
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || (m.Method != "initialize" && m.Method != "tools/list") || len(m.ID) == 0 {
		return
	}
	id := string(bytes.TrimSpace(m.ID))
	s.note(id, m.Method)
	resp.Body = &answerSniff{ReadCloser: resp.Body, id: id,
		stream:   strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		answered: func(result json.RawMessage) { s.answered(id, result) }}
}

// answerSniff keeps a copy of an answer's body, up to maxSniff, and
// reads it once the body has been read to its end: the result of the
// answer with the JSON id goes to answered (an error answer to none).
type answerSniff struct {
	io.ReadCloser
	id       string
	stream   bool
	answered func(result json.RawMessage)
	buf      []byte
	over     bool
	done     bool
}

func (a *answerSniff) Read(p []byte) (int, error) {
	n, err := a.ReadCloser.Read(p)
	if !a.over && !a.done {
		if len(a.buf)+n > maxSniff {
			a.over, a.buf = true, nil
		} else {
			a.buf = append(a.buf, p[:n]...)
		}
	}
	// An event ends at a blank line, which may begin in the read before
	// this one: look from the byte before what was read.
	if err != nil || (a.stream && n > 0 && bytes.Contains(a.buf[max(0, len(a.buf)-n-1):], []byte("\n\n"))) {
		a.scan()
	}
	return n, err
}

func (a *answerSniff) Close() error {
	a.scan()
	return a.ReadCloser.Close()
}

// scan looks for the answer in what has been read so far.
func (a *answerSniff) scan() {
	if a.done || a.over {
		return
	}
	try := func(data []byte) bool {
		var m wireMessage
		if json.Unmarshal(data, &m) != nil || m.Method != "" || string(bytes.TrimSpace(m.ID)) != a.id {
			return false
		}
		a.done = true
		if m.Error == nil {
			a.answered(m.Result)
		}
		return true
	}
	if !a.stream {
		try(a.buf)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(a.buf))
	sc.Buffer(nil, maxSniff+1)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if len(data) > 0 && try(data) {
				a.buf = nil
				return
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
}
