package upstream

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A reload that removes or changes a server retires its session rather
// than closing it outright: the session takes no new requests (the
// pool no longer hands it out), the requests in flight on it may finish
// until a bound (gateway.shutdown_timeout, or the pool's stop), and
// those still running then are cancelled with the reload's cause — the
// server told with notifications/cancelled as for any cancelled request
// — before the session closes and its process is stopped. Closing
// outright waited for them to end on their own: a hung call held the
// reload, and every reload after it, for good.

// trackedRequests are the requests in flight on a session that Retire
// may cancel: tools/call, prompts/get, completion/complete,
// resources/read and Request's.
type trackedRequests struct {
	mu   sync.Mutex
	m    map[*trackedRequest]struct{}
	idle chan struct{} // closed when m empties, while someone waits
	// cause, once set, cancels every request that begins: one whose
	// caller took the client just before the pool let it go.
	cause error
}

type trackedRequest struct {
	cancel context.CancelCauseFunc
	// notice is set when the request's cancellation is to be posted
	// before the session closes (withCancelNotice, cancelnotice.go).
	notice atomic.Pointer[cancelNotice]
}

// trackedKey is the context key of a request's *trackedRequest.
type trackedKey struct{}

// track returns ctx for one request of c's, which Retire can cancel with
// its cause, and the function to call with the request's error once it
// has returned: it gives the retirement's cause (a *fault.Error) in place
// of the error of a request that Retire cancelled.
func (c *Client) track(ctx context.Context) (context.Context, func(error) error) {
	tctx, cancel := context.WithCancelCause(ctx)
	r := &trackedRequest{cancel: cancel}
	t := &c.tracked
	t.mu.Lock()
	if t.m == nil {
		t.m = map[*trackedRequest]struct{}{}
	}
	t.m[r] = struct{}{}
	if t.cause != nil {
		cancel(t.cause)
	}
	t.mu.Unlock()
	return context.WithValue(tctx, trackedKey{}, r), func(err error) error {
		retired := err != nil && ctx.Err() == nil && tctx.Err() != nil
		cancel(nil)
		t.mu.Lock()
		delete(t.m, r)
		if len(t.m) == 0 && t.idle != nil {
			close(t.idle)
			t.idle = nil
		}
		t.mu.Unlock()
		if n := r.notice.Load(); n != nil {
			close(n.returned)
		}
		if retired {
			return context.Cause(tctx)
		}
		return err
	}
}

// Retire closes the session once the requests in flight on it have
// returned, or, when bound ends first, once they have been cancelled
// with bound's cause when that is a *fault.Error (the reload's
// deadline), with stopping otherwise (the pool stopped). A request that
// begins meanwhile (its caller took the client just before the pool let
// it go) is cancelled at once. onDrain, when not nil, is called when
// Retire begins to wait for requests in flight (not when there are
// none). It returns Close's error.
func (c *Client) Retire(bound context.Context, stopping error, onDrain func()) error {
	t := &c.tracked
	t.mu.Lock()
	var idle chan struct{}
	if len(t.m) > 0 {
		if t.idle == nil {
			t.idle = make(chan struct{})
		}
		idle = t.idle
	}
	t.mu.Unlock()
	cause := fault.New(fault.Cancelled, "the call was cancelled: a reload removed or changed server %q as the call began", c.server.Name).
		WithDetail("server", c.server.Name).
		WithSuggestions("call again; if the server is still configured, its new session takes the call")
	if idle != nil {
		if onDrain != nil {
			onDrain()
		}
		select {
		case <-idle:
		case <-bound.Done():
			var fe *fault.Error
			if !errors.As(context.Cause(bound), &fe) {
				fe = fault.As(stopping)
			}
			cause = fe
		}
	}
	t.mu.Lock()
	t.cause = cause
	for r := range t.m {
		r.cancel(cause)
	}
	t.mu.Unlock()
	return c.Close()
}
