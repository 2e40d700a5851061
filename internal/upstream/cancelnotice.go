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

// cancelNoticeWait bounds how long a cancelled request waits for its
// notifications/cancelled to be posted.
const cancelNoticeWait = 2 * time.Second

// cancelNotice is the notifications/cancelled of one request, posted or
// not yet.
type cancelNotice struct {
	once   sync.Once
	posted chan struct{}
}

// cancelNoticeKey is the context key of a request's *cancelNotice: the
// SDK posts the notification with the request's context's values.
type cancelNoticeKey struct{}

// withCancelNotice returns ctx for a request of c's whose
// notifications/cancelled is to be waited for (awaitCancelNotice): a
// streamable-HTTP server's, whose posts headerTransport sees; nil
// otherwise (over stdio, SSE and WebSocket a session's close ends the
// server's side of it without waiting for its handlers).
func (c *Client) withCancelNotice(ctx context.Context) (context.Context, *cancelNotice) {
	if c.pool == nil {
		return ctx, nil
	}
	n := &cancelNotice{posted: make(chan struct{})}
	return context.WithValue(ctx, cancelNoticeKey{}, n), n
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
