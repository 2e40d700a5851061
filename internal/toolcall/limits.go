package toolcall

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// gate is the ExecutionTracker of seed 001: a global slot pool, a pool per
// server, a bounded queue of waiting calls, the session count and the stop
// switch. Its limits can change while calls run (reconfigure).
type gate struct {
	global   *slots
	waiting  atomic.Int64
	inFlight atomic.Int64
	started  atomic.Int64

	mu        sync.Mutex
	perServer map[string]*slots // servers with a max_concurrent
	// queueWait bounds a call's wait for a slot: 0 fails it at once, and a
	// negative value (config.QueueWaitCallTimeout) lets it wait until its
	// context ends (its timeout).
	queueWait    time.Duration
	maxQueue     int64
	sessionLimit int64                              // -1 = unlimited
	stopped      error                              // why calls are stopped (errStopped, errShutdown); nil when they run
	active       map[string]context.CancelCauseFunc // in-flight calls, for Stop
}

func newGate(maxConcurrent int, perServer map[string]int, shares map[string]bool, queueWait time.Duration, maxQueue, sessionLimit int) *gate {
	g := &gate{global: newSlots(maxConcurrent), active: map[string]context.CancelCauseFunc{}}
	g.reconfigure(maxConcurrent, perServer, shares, queueWait, maxQueue, sessionLimit)
	return g
}

// reconfigure changes the limits for calls that start from now on. Slot
// pools are resized in place, so calls in flight still count against them
// and release into them; a server whose max_concurrent is removed keeps its
// old pool only for the calls that hold it. shares names the servers whose
// pool is their share of the global one (serverShare), not a max_concurrent
// of their own.
func (g *gate) reconfigure(maxConcurrent int, perServer map[string]int, shares map[string]bool, queueWait time.Duration, maxQueue, sessionLimit int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.global.resize(maxConcurrent)
	next := map[string]*slots{}
	for name, n := range perServer {
		if n <= 0 {
			continue
		}
		s, ok := g.perServer[name]
		if ok {
			s.resize(n)
		} else {
			s = newSlots(n)
		}
		s.setShare(shares[name])
		next[name] = s
	}
	g.perServer = next
	g.queueWait, g.maxQueue, g.sessionLimit = queueWait, int64(maxQueue), int64(sessionLimit)
}

// errStopped is the cause of calls cancelled by Stop; errShutdown, by
// Shutdown. A call that comes after either is refused with its own words
// (refusal): it was never started, which a person retrying must know.
var (
	errStopped  = fault.New(fault.Cancelled, "the call was cancelled: calls are stopped (switchboard stop); run 'switchboard resume' to allow calls again")
	errShutdown = fault.New(fault.Cancelled, "switchboard is shutting down: the call was cancelled when the shutdown timeout ran out").
			WithSuggestions("call again once switchboard is back; gateway.shutdown_timeout sets how long calls in flight may finish")
	errRefusedStopped  = fault.New(fault.Cancelled, "the call was not started: calls are stopped (switchboard stop); run 'switchboard resume' to allow calls again")
	errRefusedShutdown = fault.New(fault.Cancelled, "switchboard is shutting down: the call was not started").
				WithSuggestions("call again once switchboard is back")
)

// refusal is the error of a call that comes while calls are stopped with
// cause (errStopped, errShutdown).
func refusal(cause error) error {
	if cause == errShutdown {
		return errRefusedShutdown
	}
	return errRefusedStopped
}

// admit counts the call against the session limit and checks the stop
// switch.
func (g *gate) admit() error {
	g.mu.Lock()
	stopped, limit := g.stopped, g.sessionLimit
	g.mu.Unlock()
	if stopped != nil {
		return refusal(stopped)
	}
	if limit >= 0 {
		if n := g.started.Add(1); n > limit {
			g.started.Add(-1)
			return fault.New(fault.LimitExceeded, "the session limit of %d calls has been reached", limit).
				WithSuggestions("raise limits.session_limit (-1 for unlimited) and restart")
		}
	}
	return nil
}

// acquire takes a slot of the server and then a global slot. When none is
// free it waits in the bounded queue: until a slot frees, queueWait passes
// (when it is positive), or ctx ends — the call's context, whose deadline
// is the call's timeout, so that with queue_wait "timeout" (the default) a
// call waits as long as its timeout allows. Waiting calls are served
// fairly across users (see slots). The server's slot comes first
// so that a call waiting for a busy server never holds a global slot other
// servers could use. The returned release must be called.
//
// A call that gets no slot fails with limit_exceeded, saying why: the
// limit it met when it may not wait (queue_wait 0s), a full queue
// (limits.max_queue), or a wait that ran out — each naming the key to
// raise. When ctx ends for another reason (cancelled, stopped), acquire
// returns ctx's error and the caller tells why.
func (g *gate) acquire(ctx context.Context, server, user string, timeout time.Duration) (release func(), err error) {
	g.mu.Lock()
	srv, queueWait, maxQueue := g.perServer[server], g.queueWait, g.maxQueue
	g.mu.Unlock()
	if srv == nil || srv.tryTake() {
		if g.global.tryTake() {
			g.inFlight.Add(1)
			return g.releaser(srv), nil
		}
		if srv != nil {
			srv.release()
		}
	}
	if queueWait == 0 {
		return nil, g.limitError(server, srv)
	}
	if n := g.waiting.Add(1); n > maxQueue {
		g.waiting.Add(-1)
		return nil, g.queueFullError(server, srv, maxQueue)
	}
	defer g.waiting.Add(-1)
	var expired <-chan time.Time // nil: wait until ctx ends
	if queueWait > 0 {
		t := time.NewTimer(queueWait)
		defer t.Stop()
		expired = t.C
	}
	// waitOver says why a wait for full (srv, or the global pool when nil)
	// ended without a slot, or returns ctx's error for the caller.
	waitOver := func(err error, full *slots) error {
		switch {
		case err == errNoSlot:
			return g.waitOverError(server, full, fmt.Sprintf("within limits.queue_wait (%s)", queueWait),
				"or let calls wait longer: raise limits.queue_wait (up to 5m, or \"timeout\" to wait as long as the call's timeout allows)")
		case context.Cause(ctx) == errTimeout:
			return g.waitOverError(server, full, fmt.Sprintf("within the call's timeout (%s), which covers its wait for a slot", timeout),
				"or let calls wait longer: raise the server's request_timeout (or pass a longer timeout)")
		}
		return err
	}
	if srv != nil {
		if err := srv.take(ctx, user, expired); err != nil {
			return nil, waitOver(err, srv)
		}
	}
	if err := g.global.take(ctx, user, expired); err != nil {
		if srv != nil {
			srv.release()
		}
		return nil, waitOver(err, nil)
	}
	g.inFlight.Add(1)
	release = g.releaser(srv)
	// A slot and the end of ctx (the stop switch, a cancellation) can come
	// at once, and a wait takes either: a call whose ctx ended while it
	// waited is not made.
	if err := ctx.Err(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

func (g *gate) releaser(srv *slots) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.inFlight.Add(-1)
			if srv != nil {
				srv.release()
			}
			g.global.release()
		})
	}
}

// limitError is the error of a call over a limit that may not wait
// (limits.queue_wait 0s).
func (g *gate) limitError(server string, srv *slots) error {
	if srv != nil {
		if used, size := srv.usage(); used >= size {
			what, key := g.serverLimit(server, srv)
			return fault.New(fault.LimitExceeded, "server %s already has %d calls in flight (%s)", server, size, what).
				WithDetail("server", server).WithDetail("limit", key).
				WithSuggestions("retry later, set or raise max_concurrent for the server, or set limits.queue_wait to queue calls")
		}
	}
	_, size := g.global.usage()
	return fault.New(fault.LimitExceeded, "%d calls are already in flight (limits.max_concurrent)", size).
		WithDetail("server", server).WithDetail("limit", "limits.max_concurrent").
		WithSuggestions("retry later, raise limits.max_concurrent, or set limits.queue_wait to queue calls")
}

// queueFullError is the error of a call over a limit that found the queue
// full.
func (g *gate) queueFullError(server string, srv *slots, maxQueue int64) error {
	over := fmt.Sprintf("limits.max_concurrent: %d", g.globalSize())
	if srv != nil {
		if used, size := srv.usage(); used >= size {
			what, _ := g.serverLimit(server, srv)
			over = fmt.Sprintf("server %s's %d, %s", server, size, what)
		}
	}
	return fault.New(fault.LimitExceeded, "the queue of calls waiting for a slot is full: %d calls already wait (limits.max_queue), all slots are taken (%s)", maxQueue, over).
		WithDetail("server", server).WithDetail("limit", "limits.max_queue").
		WithSuggestions("retry later, raise limits.max_queue to let more calls wait, or raise the max_concurrent that is full to run more at once")
}

// waitOverError is the error of a call that waited for a slot of full (a
// server's pool, or the global one when nil) until its wait ran out; within
// says how long that was, and longer how to wait longer.
func (g *gate) waitOverError(server string, full *slots, within, longer string) error {
	if full != nil {
		_, size := full.usage()
		what, key := g.serverLimit(server, full)
		return fault.New(fault.LimitExceeded, "no slot of server %s freed up %s: it has %d calls in flight (%s)", server, within, size, what).
			WithDetail("server", server).WithDetail("limit", key).
			WithSuggestions("retry later, set or raise max_concurrent for the server", longer)
	}
	return fault.New(fault.LimitExceeded, "no slot freed up %s: %d calls are in flight (limits.max_concurrent)", within, g.globalSize()).
		WithDetail("server", server).WithDetail("limit", "limits.max_concurrent").
		WithSuggestions("retry later, raise limits.max_concurrent", longer)
}

func (g *gate) globalSize() int {
	_, size := g.global.usage()
	return size
}

// serverLimitKey names a server's max_concurrent setting.
func serverLimitKey(server string) string { return "servers." + server + ".max_concurrent" }

// slots is a counting semaphore whose size can change while slots are
// held, and whose waiters are served fairly across users: each user's
// calls wait in a queue of their own, first come first served, and a
// freed slot goes to the next user in turn (round robin) — so that one
// user's flood of calls delays another user's call by at most one turn
// per user waiting, not by the whole flood.
type slots struct {
	mu   sync.Mutex
	size int
	used int
	// share is set for a server's pool that is its share of the global
	// pool (serverShare) rather than its own max_concurrent.
	share bool
	// queues holds each waiting user's calls, oldest first; turn lists
	// the users that have some, in the order they are served, and next
	// is the index in turn of the user served next.
	queues  map[string][]*slotWaiter
	turn    []string
	next    int
	waiters int
}

// slotWaiter is a call waiting for a slot; granted is closed once it has
// one.
type slotWaiter struct {
	user    string
	granted chan struct{}
	got     bool // set under slots.mu when granted is closed
}

// errNoSlot is take's error when its deadline passes.
var errNoSlot = errors.New("no slot free in time")

func newSlots(n int) *slots { return &slots{size: n, queues: map[string][]*slotWaiter{}} }

// tryTake takes a free slot when no call is waiting for one.
func (s *slots) tryTake() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used < s.size && s.waiters == 0 {
		s.used++
		return true
	}
	return false
}

// take waits for a slot, in user's queue, until deadline fires (errNoSlot)
// or ctx ends.
func (s *slots) take(ctx context.Context, user string, deadline <-chan time.Time) error {
	s.mu.Lock()
	if s.used < s.size && s.waiters == 0 {
		s.used++
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{user: user, granted: make(chan struct{})}
	if len(s.queues[user]) == 0 {
		s.turn = append(s.turn, user)
	}
	s.queues[user] = append(s.queues[user], w)
	s.waiters++
	s.mu.Unlock()

	var err error
	select {
	case <-w.granted:
		return nil
	case <-deadline:
		err = errNoSlot
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.got {
		// Granted as the wait ended: give the slot to the next.
		s.used--
		s.grantLocked()
		return err
	}
	s.dequeueLocked(w)
	return err
}

// dequeueLocked removes a waiter that stopped waiting.
func (s *slots) dequeueLocked(w *slotWaiter) {
	q := s.queues[w.user]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	s.waiters--
	if len(q) > 0 {
		s.queues[w.user] = q
		return
	}
	delete(s.queues, w.user)
	for i, u := range s.turn {
		if u == w.user {
			s.turn = append(s.turn[:i], s.turn[i+1:]...)
			if i < s.next {
				s.next--
			}
			break
		}
	}
}

// grantLocked hands free slots to waiters, one user at a time in turn.
func (s *slots) grantLocked() {
	for s.used < s.size && s.waiters > 0 {
		if s.next >= len(s.turn) {
			s.next = 0
		}
		user := s.turn[s.next]
		q := s.queues[user]
		w := q[0]
		q[0] = nil
		q = q[1:]
		s.waiters--
		if len(q) > 0 {
			s.queues[user] = q
			s.next++
		} else {
			delete(s.queues, user)
			s.turn = append(s.turn[:s.next], s.turn[s.next+1:]...)
		}
		s.used++
		w.got = true
		close(w.granted)
	}
}

func (s *slots) release() {
	s.mu.Lock()
	s.used--
	s.grantLocked()
	s.mu.Unlock()
}

// resize sets the number of slots; holders above a smaller size keep
// theirs until they release them.
func (s *slots) resize(n int) {
	s.mu.Lock()
	s.size = n
	s.grantLocked()
	s.mu.Unlock()
}

func (s *slots) usage() (used, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, s.size
}

func (s *slots) setShare(share bool) {
	s.mu.Lock()
	s.share = share
	s.mu.Unlock()
}

func (s *slots) isShare() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.share
}

// serverShare is the most calls one server without a max_concurrent of its
// own may have in flight when other servers are configured: the global
// limit less a fifth of it (at least one slot), so that a server that hangs
// with calls in flight cannot take every slot and leave the others' calls
// waiting for its timeouts. 0 means no share (a global limit of 1).
func serverShare(maxConcurrent int) int {
	if maxConcurrent < 2 {
		return 0
	}
	return maxConcurrent - max(1, maxConcurrent/5)
}

// serverLimit says which limit of server the pool srv is, in words and as
// the key that sets it.
func (g *gate) serverLimit(server string, srv *slots) (what, key string) {
	if srv.isShare() {
		_, size := srv.usage()
		return fmt.Sprintf("its share of limits.max_concurrent (%d of %d; the rest is kept for the other servers)", size, g.globalSize()), serverLimitKey(server)
	}
	return "its max_concurrent", serverLimitKey(server)
}

// track registers an in-flight call so that Stop can cancel it.
func (g *gate) track(id string, cancel context.CancelCauseFunc) (untrack func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped != nil {
		return nil, refusal(g.stopped)
	}
	g.active[id] = cancel
	return func() {
		g.mu.Lock()
		delete(g.active, id)
		g.mu.Unlock()
	}, nil
}

// stop makes new calls fail and cancels those in flight, with cause
// (errStopped or errShutdown); it returns how many were cancelled.
func (g *gate) stop(cause error) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = cause
	for _, cancel := range g.active {
		cancel(cause)
	}
	return len(g.active)
}

func (g *gate) resume() {
	g.mu.Lock()
	g.stopped = nil
	g.mu.Unlock()
}

func (g *gate) isStopped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped != nil
}
