package upstream

import (
	"context"
	"sync"
	"sync/atomic"
)

// connCheck is what a supervisor concluded about a connection a failed
// request found suspect: a caller about to retry waits for the verdict,
// so that its retry does not meet the same dead session again.
type connCheck struct {
	// monitored is set once a supervisor watches the connection; nobody
	// checks any other (owned sessions, single-shot commands).
	monitored atomic.Bool

	mu      sync.Mutex
	pending chan struct{} // closed when the check asked for concludes; nil when none is asked for
}

// ask notes that a check is wanted; it reports whether anyone will make it.
func (k *connCheck) ask() bool {
	if !k.monitored.Load() {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pending == nil {
		k.pending = make(chan struct{})
	}
	return true
}

// begin takes the check asked for so far (nil if none); the checker calls
// pass with it when the connection proved fine. A request that fails
// later asks for a new check.
func (k *connCheck) begin() chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	ch := k.pending
	k.pending = nil
	return ch
}

// pass concludes a check the connection passed.
func pass(ch chan struct{}) {
	if ch != nil {
		close(ch)
	}
}

// WaitChecked returns once the connection has been checked after a
// request on it failed to reach the server (a reset or closed connection):
// either it answered a ping (it is fine), or it ended, and its supervisor
// starts a new session. It returns at once when no check is pending or no
// supervisor watches the connection, and when ctx is done. The engine
// calls it before retrying such a request, so that the retry goes to the
// renewed session rather than to the one the server no longer has.
func (c *Client) WaitChecked(ctx context.Context) {
	c.check.mu.Lock()
	ch := c.check.pending
	c.check.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-c.done:
	case <-ctx.Done():
	}
}
