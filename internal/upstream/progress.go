package upstream

import (
	"context"
	"encoding/json"
	"sync"
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

// transport wraps t so that its connection reports progress
// notifications as they are read.
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
	return &progressConn{Connection: c, o: t.o}, nil
}

type progressConn struct {
	mcp.Connection
	o *progressOrder
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && !req.IsCall() {
		switch req.Method {
		case "notifications/progress":
			var p struct {
				Token any `json:"progressToken"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.Token != nil {
				c.o.read(tokenKey(p.Token))
			}
		case "notifications/message":
			c.o.read(logOrderKey)
		}
	}
	return msg, err
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
