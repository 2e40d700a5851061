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
// returned (waitNoticed) — as the SDK's close would wait for them,
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
	returned chan struct{} // closed when its request has returned (track's end)
}

// withCancelNotice marks the request of ctx (track's) as one whose
// notifications/cancelled is to be waited for (awaitCancelNotice) and
// posted before the session closes (waitNoticed): a streamable-HTTP
// server's, whose posts headerTransport sees. It returns nil otherwise
// (over stdio, SSE and WebSocket a session's close ends the server's
// side of it without waiting for its handlers). The SDK posts the
// notification with the request's context's values, where
// noteCancelPosted finds it.
func (c *Client) withCancelNotice(ctx context.Context) *cancelNotice {
	r, _ := ctx.Value(trackedKey{}).(*trackedRequest)
	if c.pool == nil || r == nil {
		return nil
	}
	n := &cancelNotice{posted: make(chan struct{}), returned: make(chan struct{})}
	r.notice.Store(n)
	return n
}

// waitNoticed waits until the requests in flight now that withCancelNotice
// marked have returned.
func (t *trackedRequests) waitNoticed() {
	t.mu.Lock()
	var pending []chan struct{}
	for r := range t.m {
		if n := r.notice.Load(); n != nil {
			pending = append(pending, n.returned)
		}
	}
	t.mu.Unlock()
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
	r, _ := ctx.Value(trackedKey{}).(*trackedRequest)
	if r == nil {
		return
	}
	n := r.notice.Load()
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
