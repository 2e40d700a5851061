package upstream

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// A request to a streamable-HTTP server that its caller cancels is
// retired by the SDK's client at once, and the server told with
// notifications/cancelled on a goroutine of the SDK's own, after the call
// has returned. A session that is closing closes as soon as nothing is
// in flight on it — at that retirement — and the notification, not yet
// begun, is dropped: the server's handler waits on for good (a go-sdk
// server's waits for its own request to the client, say), and so does
// the session's DELETE, up to the SDK's 5 s. So such a call waits, before
// it returns, until the notification has been posted (cancelNotice), at
// most cancelNoticeWait: whoever closes the session after the call has
// returned (the gateway's shutdown, StopRequests) closes it with the
// server told.
//
// A close that begins first is as bad: the SDK's session, once closing,
// posts a notification only while a call is still in flight on it, and
// the call is retired before its notification is posted. So Close waits,
// before it closes the session, until the requests in flight have
// returned (noticedRequests) — as the SDK's close would wait for them,
// but with the session still open, so that one cancelled meanwhile (its
// caller cancelled it just before a reload or a stop closed the session,
// or the stop cancelled it) is posted. The requests are GetPrompt,
// ReadResource, Complete and CallTool through the SDK (fast_path: false,
// or a call the lean path declines).

// cancelNoticeWait bounds how long a cancelled request waits for its
// notifications/cancelled to be posted.
const cancelNoticeWait = 2 * time.Second

// cancelNotice is the notifications/cancelled of one request, posted or
// not yet.
type cancelNotice struct {
	once     sync.Once
	posted   chan struct{}
	returned chan struct{} // closed when its request has returned
}

// cancelNoticeKey is the context key of a request's *cancelNotice: the
// SDK posts the notification with the request's context's values.
type cancelNoticeKey struct{}

// withCancelNotice returns ctx for a request of c's whose
// notifications/cancelled is to be waited for (awaitCancelNotice): a
// streamable-HTTP server's, whose posts headerTransport sees; nil
// otherwise (over stdio, SSE and WebSocket a session's close ends the
// server's side of it without waiting for its handlers).
// It counts the request in flight (noticedRequests) until
// c.noticed.done(n).
func (c *Client) withCancelNotice(ctx context.Context) (context.Context, *cancelNotice) {
	if c.pool == nil {
		return ctx, nil
	}
	n := &cancelNotice{posted: make(chan struct{}), returned: make(chan struct{})}
	c.noticed.add(n)
	return context.WithValue(ctx, cancelNoticeKey{}, n), n
}

// noticedRequests are a session's requests in flight that withCancelNotice
// made.
type noticedRequests struct {
	mu sync.Mutex
	m  map[*cancelNotice]struct{}
}

func (r *noticedRequests) add(n *cancelNotice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[*cancelNotice]struct{}{}
	}
	r.m[n] = struct{}{}
}

// done marks n's request returned (nil: a request not counted).
func (r *noticedRequests) done(n *cancelNotice) {
	if n == nil {
		return
	}
	r.mu.Lock()
	delete(r.m, n)
	r.mu.Unlock()
	close(n.returned)
}

// wait waits until the requests in flight now have returned.
func (r *noticedRequests) wait() {
	r.mu.Lock()
	var pending []chan struct{}
	for n := range r.m {
		pending = append(pending, n.returned)
	}
	r.mu.Unlock()
	for _, ch := range pending {
		<-ch
	}
}

// awaitCancelNotice waits, when ctx (the request's) was cancelled, until
// n's notification has been posted, at most cancelNoticeWait.
func awaitCancelNotice(ctx context.Context, n *cancelNotice) {
	if n == nil || ctx.Err() == nil {
		return
	}
	t := time.NewTimer(cancelNoticeWait)
	defer t.Stop()
	select {
	case <-n.posted:
	case <-t.C:
	}
}

// noteCancelPosted marks the notice in ctx (a post's) posted, when body
// is a notifications/cancelled.
func noteCancelPosted(ctx context.Context, body []byte) {
	n, _ := ctx.Value(cancelNoticeKey{}).(*cancelNotice)
	if n == nil {
		return
	}
	var m struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "notifications/cancelled" {
		return
	}
	n.once.Do(func() { close(n.posted) })
}
