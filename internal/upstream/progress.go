package upstream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK hands a response to its caller as soon as it is read, but
// queues notifications for a handler goroutine, so a call can return
// before the progress and log notifications the server sent ahead of its
// result have been delivered — and a caller that stops listening when the
// call returns would lose them (a gateway must forward them before the
// response, on the call's own stream). progressOrder restores the order:
// the connection counts each progress notification (by token) and each
// log message (under logOrderKey) as it is read, the handler counts it
// delivered, and CallTool waits, briefly, until every notification read
// before the response has been delivered.
// logOrderKey is the key log messages are counted under: they carry no
// token, so a returning call waits for every log message read so far.
const logOrderKey = "\x00log"

// noticeOrderKey is the key list changes, resource updates and
// elicitation completions are counted under, as log messages are: one
// the server sent on a request's stream goes to that request's client
// before its answer.
const noticeOrderKey = "\x00notice"

type progressOrder struct {
	mu      sync.Mutex
	pending map[string]int // token -> read but not yet delivered
	changed chan struct{}  // closed and replaced on every delivery

	// What the connection's noticeGate needs: the server's name (for
	// the dropped log messages' warning), whether a call awaits a
	// progress token, and the counter of dropped log messages (nil
	// for none). Set before the connection is made.
	server  string
	wanted  func(token string) bool
	dropped *atomic.Uint64
	gate    atomic.Pointer[noticeGate] // the connection's, once made
}

func newProgressOrder() *progressOrder {
	return &progressOrder{pending: map[string]int{}, changed: make(chan struct{})}
}

// read notes a progress notification read from the wire.
func (o *progressOrder) read(token string) {
	o.mu.Lock()
	o.pending[token]++
	o.mu.Unlock()
}

// changes returns a channel closed on the next delivery.
func (o *progressOrder) changes() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// delivered notes that the handler has run for one notification.
func (o *progressOrder) delivered(token string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending[token] > 0 {
		o.pending[token]--
		if o.pending[token] == 0 {
			delete(o.pending, token)
		}
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// maxProgressDrain bounds how long a returning call waits for its queued
// progress notifications.
const maxProgressDrain = time.Second

// drain waits until every notification read for token has been delivered,
// for at most maxProgressDrain.
func (o *progressOrder) drain(token string) {
	timeout := time.NewTimer(maxProgressDrain)
	defer timeout.Stop()
	for {
		o.mu.Lock()
		n, ch := o.pending[token], o.changed
		o.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ch:
		case <-timeout.C:
			o.mu.Lock()
			delete(o.pending, token)
			o.mu.Unlock()
			return
		}
	}
}

// transport wraps t so that its connection hands the SDK what it reads
// through a noticeGate, which counts the notifications it hands on.
func (o *progressOrder) transport(t mcp.Transport) mcp.Transport {
	return &progressTransport{Transport: t, o: o}
}

type progressTransport struct {
	mcp.Transport
	o *progressOrder
}

func (t *progressTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	wanted := t.o.wanted
	if wanted == nil {
		wanted = func(string) bool { return true }
	}
	g := newNoticeGate(t.o, t.o.server, wanted, t.o.dropped)
	t.o.gate.Store(g)
	// The pump outlives the dial's context: it ends when the
	// connection is closed (or fails).
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	go g.pump(pctx, c.Read)
	return &progressConn{Connection: c, g: g, stop: stop}, nil
}

type progressConn struct {
	mcp.Connection
	g    *noticeGate
	stop context.CancelFunc
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return c.g.Read(ctx)
}

func (c *progressConn) Close() error {
	err := c.Connection.Close()
	c.stop()
	return err
}

// progressSinkKey is the context key of WithProgress's onProgress.
type progressSinkKey struct{}

// WithProgress returns a context whose prompts/get, resources/read or
// completion/complete asks the server for progress: the request carries
// a progress token (the caller's, WithProgressToken, on a client's own
// session; else one of the connection's own), and the server's progress
// notifications for it are passed to onProgress before the request
// returns, as are the log messages the server sent ahead of its answer
// to the Events.Log sink — so that a gateway forwards both on the
// client's request's own stream, before its answer. (CallTool takes its
// onProgress as an argument.)
func WithProgress(ctx context.Context, onProgress func(*mcp.ProgressNotificationParams)) context.Context {
	return context.WithValue(ctx, progressSinkKey{}, onProgress)
}

// requestProgress is answerOrder for a prompts/get, resources/read or
// completion/complete made with ctx, whose progress goes to WithProgress's
// onProgress, if ctx has one.
func (c *Client) requestProgress(ctx context.Context, meta mcp.Meta) (mcp.Meta, func()) {
	onProgress, _ := ctx.Value(progressSinkKey{}).(func(*mcp.ProgressNotificationParams))
	return c.answerOrder(ctx, meta, onProgress)
}

// answerOrder returns meta, the _meta of a request made with ctx, with a
// progress token when onProgress is set (a copy; meta itself is not
// changed), and the function to call once the request has its answer:
// it waits until what the server sent ahead of the answer has been
// handled — the request's progress (passed to onProgress), log messages
// (to Events.Log) and list changes, resource updates and elicitation
// completions (noticeOrderKey) — so that a gateway forwards them on the
// client's request's stream before its answer, and forgets the token.
// Every request that may bring them (tools/call, prompts/get,
// resources/read, completion/complete) goes through it.
func (c *Client) answerOrder(ctx context.Context, meta mcp.Meta, onProgress func(*mcp.ProgressNotificationParams)) (mcp.Meta, func()) {
	ahead := func() {
		if c.logs {
			c.order.drain(logOrderKey)
		}
		c.order.drain(noticeOrderKey)
	}
	if onProgress == nil {
		return meta, ahead
	}
	token, key := c.claimProgress(ctx, onProgress)
	out := cloneMeta(meta)
	out["progressToken"] = token
	return out, func() {
		c.order.drain(key)
		c.progress.Delete(key)
		ahead()
	}
}
