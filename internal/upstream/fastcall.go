package upstream

//lint:file-ignore SA1019 sampling, elicitation and roots requests are answered for servers that send them today.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastCaller posts tools/call requests to a streamable-HTTP server itself,
// on the session the SDK client established, instead of going through the
// SDK's client connection: the SDK decodes every message several times
// over (each with a fresh 32 KiB decoder buffer) and adds per-request
// header work, which is most of what a forwarding gateway spends on the
// upstream side of a call. It is used on protocol versions before
// 2026-07-28 (whose per-request metadata the SDK owns), and it handles
// what a server may send on the call's own event stream: progress, log
// and list_changed notifications, and ping, sampling, elicitation and
// roots requests. Those requests are answered with the call's context,
// so the gateway can ask the client whose call caused them.
type fastCaller struct {
	c        *Client
	hc       *http.Client
	url      string
	session  string
	version  string
	requests ClientRequests
	events   Events
	maxBody  int64
	next     atomic.Uint64
	// passInput is set when a result's input requests go back to the
	// caller as the server sent them (DialOptions.PassInputRequests);
	// otherwise the SDK's loop answers them (replay.go).
	passInput bool
}

// cancelNoticeTimeout bounds sending notifications/cancelled for a call
// its caller gave up on.
const cancelNoticeTimeout = time.Second

// errFastUnavailable means the call should take the SDK's path (the
// request was not processed).
var errFastUnavailable = errors.New("upstream: take the SDK's path")

// newFastCaller returns a fast caller for c, or nil when its connection
// does not qualify.
func newFastCaller(c *Client, t mcp.Transport, opts DialOptions) *fastCaller {
	lt, ok := t.(*lifetimeTransport)
	if !ok || lt.http == nil || c.server.Transport != "http" {
		return nil
	}
	ir := c.session.InitializeResult()
	id := c.session.ID()
	if ir == nil || id == "" || ir.ProtocolVersion >= "2026-07-28" {
		return nil
	}
	maxBody := int64(opts.MaxMessageBytes)
	if maxBody <= 0 {
		maxBody = DefaultMaxFrameBytes
	}
	return &fastCaller{c: c, hc: lt.http, url: c.server.URL, session: id, version: ir.ProtocolVersion,
		requests: opts.Requests, events: opts.Events, maxBody: maxBody, passInput: opts.PassInputRequests}
}

// wireMessage is any JSON-RPC message, decoded shallowly.
type wireMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// call runs one tools/call. errFastUnavailable means nothing was sent or
// processed and the SDK's path should be taken; *errAskedInResult, that
// the server asked for input in its result, which the SDK's loop answers.
func (f *fastCaller) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, errFastUnavailable
	}
	msg, err := f.exchange(ctx, "sb-f"+strconv.FormatUint(f.next.Add(1), 10), "tools/call", p)
	if err != nil {
		return nil, err
	}
	if msg.Error != nil {
		// Worded as the SDK's session words a server's error answer.
		return nil, fmt.Errorf("calling %q: %w", "tools/call", msg.Error)
	}
	res, err := decodeResult(msg.Result)
	if err == nil && res.InputRequests != nil && !f.passInput {
		// Input requests in the result, which the SDK's client answers
		// (and asks again) whatever the protocol version: its loop
		// takes it from here (replay.go).
		return nil, &errAskedInResult{result: msg.Result}
	}
	return res, err
}

// exchange posts one request, id and method with the JSON params p, on
// the session and returns the server's answer, handling what else the
// server sends on the request's event stream. An error that wraps
// errFastUnavailable means the server did not process the request.
func (f *fastCaller) exchange(ctx context.Context, id, method string, p []byte) (*wireMessage, error) {
	body := make([]byte, 0, len(p)+len(method)+64)
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, id...)
	body = append(body, `","method":"`...)
	body = append(body, method...)
	body = append(body, `","params":`...)
	body = append(body, p...)
	body = append(body, '}')
	resp, err := f.post(ctx, body)
	if err != nil {
		if ctx.Err() != nil {
			f.cancel(id)
			return nil, ctx.Err()
		}
		// The server could not be reached, or the connection broke
		// after the request went out: sending it again by the SDK's
		// path could run the tool twice.
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if f.c.expired.Load() {
			// The server no longer has the session (it restarted): the
			// connection has ended, and the supervisor starts a new one.
			return nil, errSessionExpired
		}
		// An overloaded server, a challenge: the SDK's handling.
		return nil, fmt.Errorf("%w (HTTP %d)", errFastUnavailable, resp.StatusCode)
	}
	var msg *wireMessage
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		raw, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBody+1))
		if err != nil {
			return nil, f.failed(ctx, id, err)
		}
		if int64(len(raw)) > f.maxBody {
			return nil, f.failed(ctx, id, fmt.Errorf("the response exceeds %d bytes", f.maxBody))
		}
		msg = new(wireMessage)
		if err := json.Unmarshal(raw, msg); err != nil {
			return nil, f.failed(ctx, id, fmt.Errorf("decoding the response: %w", err))
		}
	case strings.HasPrefix(ct, "text/event-stream"):
		var cur eventCursor
		defer cur.asks.end()
		msg, err = f.stream(ctx, resp.Body, id, &cur)
		if cur.resumable(err) {
			// The server closed the stream before the response, having
			// given it event ids: resume it (resume.go).
			resp.Body.Close()
			msg, err = f.resume(ctx, id, &cur)
		}
		if err != nil {
			return nil, f.failed(ctx, id, err)
		}
		// The server ends the stream after the response: read to its end
		// so that the connection is reused rather than closed.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	default:
		return nil, f.failed(ctx, id, fmt.Errorf("unexpected content type %q", ct))
	}
	return msg, nil
}

// decodeResult decodes a tools/call result. The SDK's own decoding
// allocates a 32 KiB buffer per call; results made only of text, the
// common case, are decoded here with the standard library instead, and
// anything else by the SDK.
func decodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var w struct {
		Meta              mcp.Meta          `json:"_meta"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent any               `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		InputRequests     json.RawMessage   `json:"inputRequests"`
		RequestState      json.RawMessage   `json:"requestState"`
		ResultType        json.RawMessage   `json:"resultType"`
	}
	sdk := func() (*mcp.CallToolResult, error) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("decoding the tools/call result: %w", err)
		}
		return &res, nil
	}
	if err := json.Unmarshal(raw, &w); err != nil || w.InputRequests != nil || w.RequestState != nil || w.ResultType != nil {
		return sdk()
	}
	res := &mcp.CallToolResult{Meta: w.Meta, StructuredContent: w.StructuredContent, IsError: w.IsError,
		Content: make([]mcp.Content, 0, len(w.Content))}
	for _, c := range w.Content {
		var t struct {
			Type        string           `json:"type"`
			Text        *string          `json:"text"`
			Meta        mcp.Meta         `json:"_meta"`
			Annotations *mcp.Annotations `json:"annotations"`
		}
		if json.Unmarshal(c, &t) != nil || t.Type != "text" || t.Text == nil {
			return sdk()
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: *t.Text, Meta: t.Meta, Annotations: t.Annotations})
	}
	return res, nil
}

// failed turns a broken exchange into the error the caller sees, sending
// cancellation when ctx ended it.
func (f *fastCaller) failed(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		f.cancel(id)
		return ctx.Err()
	}
	return err
}

// post sends one message on the session.
func (f *fastCaller) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(context.WithValue(ctx, fastRequestKey{}, true), http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Session-Id", f.session)
	h.Set("Mcp-Protocol-Version", f.version)
	return f.hc.Do(req)
}

// cancel tells the server a call was cancelled (best effort).
func (f *fastCaller) cancel(id string) {
	body := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"cancelled by the caller"}}`)
	ctx, stop := context.WithTimeout(context.Background(), cancelNoticeTimeout)
	defer stop()
	if resp, err := f.post(ctx, body); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
	}
}

// streamBufs holds the line buffers stream reads events with: a fresh
// 64 KiB buffer per call was a tenth of the gateway's CPU (allocation and
// zeroing of a large object).
var streamBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// stream reads the call's event stream until its response, handling
// what else the server sends on it; cur follows the stream's event ids
// and retry interval.
func (f *fastCaller) stream(ctx context.Context, r io.Reader, id string, cur *eventCursor) (*wireMessage, error) {
	sc := bufio.NewScanner(r)
	buf := streamBufs.Get().(*[]byte)
	defer streamBufs.Put(buf)
	sc.Buffer((*buf)[:0], int(f.maxBody)+64) // grows past it for a long line
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0: // end of an event
			cur.dispatched()
			if len(data) == 0 {
				continue
			}
			var msg wireMessage
			if err := json.Unmarshal(data, &msg); err != nil {
				return nil, fmt.Errorf("decoding an event: %w", err)
			}
			data = data[:0]
			switch {
			case msg.Method == "" && string(msg.ID) == `"`+id+`"`:
				return &msg, nil
			case msg.Method != "" && len(msg.ID) > 0:
				cur.asks.start(ctx, msg.ID, func(ctx context.Context) { f.answer(ctx, &msg) })
			case msg.Method == "notifications/cancelled":
				cur.asks.cancel(msg.Params)
			case msg.Method != "":
				f.notify(ctx, &msg)
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, v...)
		default:
			cur.field(line)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, err // the same on a resumed stream
		}
		return nil, fmt.Errorf("%w: %w", errStreamEnded, err)
	}
	return nil, fmt.Errorf("%w: %w", errStreamEnded, io.ErrUnexpectedEOF)
}

// notify dispatches a notification sent on the stream of the call whose
// context is ctx.
func (f *fastCaller) notify(ctx context.Context, msg *wireMessage) {
	ev := f.events
	if ev.ListChanged != nil && isListChange(msg.Method) {
		ev.ListChanged(ctx, ListChange{Method: msg.Method, Params: sentParams(msg.Params), Known: true})
		return
	}
	switch msg.Method {
	case "notifications/tools/list_changed":
		if ev.ToolsChanged != nil {
			ev.ToolsChanged()
		}
	case "notifications/prompts/list_changed":
		if ev.PromptsChanged != nil {
			ev.PromptsChanged()
		}
	case "notifications/resources/list_changed":
		if ev.ResourcesChanged != nil {
			ev.ResourcesChanged()
		}
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if ev.ResourceUpdated != nil && json.Unmarshal(msg.Params, &p) == nil {
			ev.ResourceUpdated(ctx, p.URI)
		}
	case methodElicitationComplete:
		// As the SDK's handler of it (client.go) takes it.
		var p mcp.ElicitationCompleteParams
		if json.Unmarshal(msg.Params, &p) == nil {
			f.c.completed.complete(p.ElicitationID)
			if ev.ElicitationComplete != nil {
				ev.ElicitationComplete(ctx, &p)
			}
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if ev.Log != nil && json.Unmarshal(msg.Params, &p) == nil {
			ev.Log(ctx, &p)
		}
	case "notifications/tasks/status":
		f.c.tasks.statusChanged(ctx, msg.Params) // on this request's stream
	case "notifications/progress":
		// Read here, in order, before the response: delivered at once.
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(msg.Params, &p) == nil {
			if h, ok := f.c.progress.Load(tokenKey(p.ProgressToken)); ok {
				h.(func(*mcp.ProgressNotificationParams))(&p)
			}
		}
	}
	// Progress without a token of ours, and anything else: nothing to do.
}

// serverAsks are the requests a server sent on one call's event stream
// that are being answered. Each is answered on a goroutine of its own, as
// the go-sdk's client answers them, while the stream is read on: a server
// that stops waiting for an answer (its own deadline) says so with
// notifications/cancelled, which ends that answer's context — the gateway
// then tells the client it asked, as the SDK's path does — and goes on
// with its call, whose result is read meanwhile.
type serverAsks struct {
	mu      sync.Mutex
	cancels map[string]context.CancelFunc // by the request's id (rawIDKey)
	wg      sync.WaitGroup
}

// start answers the request id with answer, on a context of its own.
func (a *serverAsks) start(ctx context.Context, id json.RawMessage, answer func(context.Context)) {
	actx, cancel := context.WithCancel(ctx)
	key := rawIDKey(id)
	a.mu.Lock()
	if a.cancels == nil {
		a.cancels = map[string]context.CancelFunc{}
	}
	a.cancels[key] = cancel
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer cancel()
		answer(actx)
		a.mu.Lock()
		delete(a.cancels, key)
		a.mu.Unlock()
	}()
}

// cancel ends the answer to the request a server's notifications/cancelled
// (params) names, if it is still running.
func (a *serverAsks) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if cancel, ok := a.cancels[rawIDKey(p.RequestID)]; ok {
		cancel()
	}
}

// end cancels the answers still running once the call has its answer (or
// failed) and waits for them: a server that wanted them would not have
// answered the call first.
func (a *serverAsks) end() {
	a.mu.Lock()
	for _, cancel := range a.cancels {
		cancel()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

// rawIDKey is a JSON-RPC id as written, as a key that matches it by value
// ("\u0041" is "A", 1.0 is 1).
func rawIDKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// answer replies to a request the server sent on a call's stream.
func (f *fastCaller) answer(ctx context.Context, msg *wireMessage) {
	ctx = withAsker(ctx, f.c.Session()) // the session it came on (askerprogress.go)
	var result any
	var rerr *jsonrpc.Error
	notFound := &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + msg.Method}
	fail := func(err error) {
		// As the SDK's client sends it: requestError's code.
		errors.As(requestError(err), &rerr)
	}
	switch msg.Method {
	case "ping":
		result = struct{}{}
		if f.requests.Ping != nil {
			var p mcp.PingParams
			if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &p) != nil {
				rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			} else if raw, err := f.requests.Ping(ctx, &p); err != nil {
				fail(err)
			} else if raw != nil {
				result = raw // as the client gave it
			}
		}
	case "sampling/createMessage":
		var p mcp.CreateMessageParams
		var full mcp.CreateMessageWithToolsParams
		switch {
		case f.requests.samplingInFull():
			if json.Unmarshal(msg.Params, &full) != nil {
				rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
			} else if res, err := f.requests.CreateMessageWithTools(ctx, &full); err != nil {
				fail(samplingError(err))
			} else {
				result = res
			}
		case f.requests.CreateMessage == nil:
			rerr = notFound
		case json.Unmarshal(msg.Params, &p) != nil:
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
		default:
			if res, err := f.requests.CreateMessage(ctx, &p); err != nil {
				fail(samplingError(err))
			} else {
				result = res
			}
		}
	case "elicitation/create":
		var p mcp.ElicitParams
		switch {
		case f.requests.Elicit == nil:
			rerr = notFound
		case json.Unmarshal(msg.Params, &p) != nil:
			rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
		default:
			var raw json.RawMessage
			switch {
			case f.requests.ElicitAsGiven:
				raw = msg.Params // as the server wrote it (elicitasgiven.go)
			case f.requests.ElicitInOrder:
				ctx = context.WithValue(ctx, keptParamsKey{}, msg.Params) // RequestedSchemaAsSent
			}
			if res, answer, err := f.requests.elicitAsGiven(ctx, &p, raw); err != nil {
				fail(err)
			} else if answer != nil {
				result = answer // as the client gave it
			} else {
				result = res
			}
		}
	case "roots/list":
		var p mcp.ListRootsParams
		if f.requests.ListRoots == nil {
			rerr = notFound
		} else if res, err := f.requests.ListRoots(ctx, &p); err != nil {
			fail(err)
		} else {
			result = res
		}
	default:
		rerr = notFound
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
	if rerr != nil {
		reply["error"] = rerr
	} else {
		reply["result"] = result
	}
	body, err := json.Marshal(reply)
	if err != nil {
		return
	}
	if resp, err := f.post(ctx, body); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
	}
}
