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

// ask notes that a check is wanted and returns the channel closed when
// it passes; nil when nobody will make it.
func (k *connCheck) ask() chan struct{} {
	if !k.monitored.Load() {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pending == nil {
		k.pending = make(chan struct{})
	}
	return k.pending
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

// Recheck asks the connection's supervisor to check it now (a ping on a
// new connection) and returns once that check has concluded: the
// connection answered (it is fine), or it ended, and the supervisor starts
// a new session. It returns at once when the connection has ended or no
// supervisor watches it, and when ctx is done. The engine calls it before
// retrying a request that failed on the connection, so that the retry
// goes to the renewed session rather than to one the server no longer
// has.
func (c *Client) Recheck(ctx context.Context) {
	select {
	case <-c.done:
		return
	default:
	}
	ch := c.check.ask()
	if ch == nil {
		return
	}
	select {
	case c.suspect <- struct{}{}:
	default:
	}
	select {
	case <-ch:
	case <-c.done:
	case <-ctx.Done():
	}
}
