package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK's client decodes a server's answer into its typed values and
// hands the caller nothing else: what the server wrote — its key order,
// its numbers, the fields the types do not know, a false it wrote out —
// is gone. A caller that must pass an answer on as the server gave it (a
// gateway view that is the server: see the gateway's asgiven.go) asks for
// it with CaptureResult: the request of the method it names that the SDK
// then makes with that context has its result kept, as the connection
// read it, beside the typed value the SDK returns. The SDK still makes
// the request (its per-request _meta on protocol 2026-07-28, its checks
// of the answer); the capture only reads.
//
// Where the answer is read depends on the transport:
//
//   - stdio, legacy SSE and WebSocket: the session's connection is
//     wrapped (rawConn, tasks.go); its Write learns the request's id from
//     the context the SDK writes it with, and its Read keeps the answer
//     with that id before the SDK sees it;
//   - streamable HTTP: the SDK's connection is its own (see
//     sessionTransport), but its posts go through the HTTP layer
//     (headerTransport), whose request carries the same context: the
//     answer is read off the response's body (JSON or an event stream)
//     as the SDK reads it (answerSniff).
//
// Either way the result is kept before the SDK returns the typed value,
// so Result is ready when the SDK's call returns.

// ResultCapture is the raw result of one request of the SDK's client.
type ResultCapture struct {
	method string

	mu     sync.Mutex
	params json.RawMessage
	result json.RawMessage
	ok     bool
}

type captureKey struct{}

// CaptureResult returns ctx, with which the next request of method the
// SDK's client sends keeps its result, as the server wrote it, in the
// returned capture. Requests of other methods made with ctx (an
// initialize of a session opened meanwhile) are not kept.
func CaptureResult(ctx context.Context, method string) (context.Context, *ResultCapture) {
	c := &ResultCapture{method: method}
	return context.WithValue(ctx, captureKey{}, c), c
}

// Result returns the result the server answered the request with, as it
// wrote it, and the request's params as the SDK sent them; false when
// none was kept (the request failed, the server answered with an error,
// the answer was larger than the capture reads, or no request was made).
func (c *ResultCapture) Result() (result, params json.RawMessage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.result, c.params, c.ok
}

// capturing returns the capture ctx asks for a request of method, if any.
func capturing(ctx context.Context, method string) *ResultCapture {
	c, _ := ctx.Value(captureKey{}).(*ResultCapture)
	if c == nil || c.method != method {
		return nil
	}
	return c
}

// keep records result (copied) and the params it answered.
func (c *ResultCapture) keep(params, result json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.params = bytes.Clone(params)
	c.result = bytes.Clone(result)
	c.ok = len(c.result) > 0
}

// resultCaptures are the captures awaiting their answers on one
// connection, by the JSON form of their request's id.
type resultCaptures struct {
	m sync.Map // idKey -> pendingCapture
	n atomic.Int32
}

// maxPendingCaptures bounds the captures a connection awaits.
const maxPendingCaptures = 64

type pendingCapture struct {
	c      *ResultCapture
	params json.RawMessage
}

// writing notes msg, about to be written with ctx, if ctx asks for its
// result.
func (rc *resultCaptures) writing(ctx context.Context, msg jsonrpc.Message) {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return
	}
	if c := capturing(ctx, r.Method); c != nil {
		if rc.n.Load() >= maxPendingCaptures {
			rc.m.Clear() // answers that never came (cancelled requests)
			rc.n.Store(0)
		}
		rc.m.Store(idKey(r.ID), pendingCapture{c: c, params: r.Params})
		rc.n.Add(1)
	}
}

// read keeps the result of resp if a capture awaits it.
func (rc *resultCaptures) read(resp *jsonrpc.Response) {
	if rc.n.Load() == 0 {
		return // the common case
	}
	v, ok := rc.m.LoadAndDelete(idKey(resp.ID))
	if !ok {
		return
	}
	rc.n.Add(-1)
	if resp.Error == nil {
		p := v.(pendingCapture)
		p.c.keep(p.params, resp.Result)
	}
}

// captureHTTP reads the answer to body, a request of the SDK's posted
// with ctx, off resp as the SDK reads it, if ctx asks for its result.
func captureHTTP(ctx context.Context, body []byte, resp *http.Response) {
	if ctx.Value(captureKey{}) == nil || resp.StatusCode != http.StatusOK {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 {
		return
	}
	c := capturing(ctx, m.Method)
	if c == nil {
		return
	}
	params := m.Params
	resp.Body = &answerSniff{ReadCloser: resp.Body, id: string(bytes.TrimSpace(m.ID)),
		stream:   strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"),
		answered: func(result json.RawMessage) { c.keep(params, result) }}
}
