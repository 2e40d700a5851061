package toolcall

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// gate is the ExecutionTracker of seed 001: a global slot pool, a pool per
// server, a bounded queue of waiting calls, the session count and the stop
// switch.
type gate struct {
	global    chan struct{}
	perServer map[string]chan struct{}
	queueWait time.Duration
	maxQueue  int64
	waiting   atomic.Int64
	inFlight  atomic.Int64

	sessionLimit int64 // -1 = unlimited
	started      atomic.Int64

	mu      sync.Mutex
	stopped bool
	active  map[string]context.CancelCauseFunc // in-flight calls, for Stop
}

func newGate(maxConcurrent int, perServer map[string]int, queueWait time.Duration, maxQueue, sessionLimit int) *gate {
	g := &gate{
		global:       make(chan struct{}, maxConcurrent),
		perServer:    map[string]chan struct{}{},
		queueWait:    queueWait,
		maxQueue:     int64(maxQueue),
		sessionLimit: int64(sessionLimit),
		active:       map[string]context.CancelCauseFunc{},
	}
	for name, n := range perServer {
		if n > 0 {
			g.perServer[name] = make(chan struct{}, n)
		}
	}
	return g
}

// errStopped is the cause of calls cancelled by Stop.
var errStopped = fault.New(fault.Cancelled, "calls are stopped (switchboard stop); run 'switchboard resume' to allow calls again")

// admit counts the call against the session limit and checks the stop
// switch.
func (g *gate) admit() error {
	g.mu.Lock()
	stopped := g.stopped
	g.mu.Unlock()
	if stopped {
		return errStopped
	}
	if g.sessionLimit >= 0 {
		if n := g.started.Add(1); n > g.sessionLimit {
			g.started.Add(-1)
			return fault.New(fault.LimitExceeded, "the session limit of %d calls has been reached", g.sessionLimit).
				WithSuggestions("raise limits.session_limit (-1 for unlimited) and restart")
		}
	}
	return nil
}

// acquire takes a slot of the server and then a global slot, waiting in
// the bounded queue up to queueWait. The server's slot comes first so that
// a call waiting for a busy server never holds a global slot other servers
// could use. The returned release must be called.
func (g *gate) acquire(ctx context.Context, server string) (release func(), err error) {
	srv := g.perServer[server]
	if srv == nil || tryTake(srv) {
		if tryTake(g.global) {
			g.inFlight.Add(1)
			return g.releaser(srv), nil
		}
		if srv != nil {
			<-srv
		}
	}
	if g.queueWait <= 0 {
		return nil, g.limitError(server, srv)
	}
	if n := g.waiting.Add(1); n > g.maxQueue {
		g.waiting.Add(-1)
		return nil, fault.New(fault.LimitExceeded, "too many calls are waiting for a slot (limits.max_queue %d); try again later", g.maxQueue).
			WithDetail("server", server)
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.queueWait)
	defer t.Stop()
	if srv != nil {
		select {
		case srv <- struct{}{}:
		case <-t.C:
			return nil, g.limitError(server, srv)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case g.global <- struct{}{}:
	case <-t.C:
		if srv != nil {
			<-srv
		}
		return nil, g.limitError(server, nil)
	case <-ctx.Done():
		if srv != nil {
			<-srv
		}
		return nil, ctx.Err()
	}
	g.inFlight.Add(1)
	return g.releaser(srv), nil
}

func tryTake(ch chan struct{}) bool {
	select {
	case ch <- struct{}{}:
		return true
	default:
		return false
	}
}

func (g *gate) releaser(srv chan struct{}) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.inFlight.Add(-1)
			if srv != nil {
				<-srv
			}
			<-g.global
		})
	}
}

func (g *gate) limitError(server string, srv chan struct{}) error {
	if srv != nil && len(srv) == cap(srv) {
		return fault.New(fault.LimitExceeded, "server %s already has %d calls in flight (its max_concurrent)", server, cap(srv)).
			WithDetail("server", server).
			WithSuggestions("retry later, raise max_concurrent for the server, or set limits.queue_wait to queue calls")
	}
	return fault.New(fault.LimitExceeded, "%d calls are already in flight (limits.max_concurrent)", cap(g.global)).
		WithDetail("server", server).
		WithSuggestions("retry later, raise limits.max_concurrent, or set limits.queue_wait to queue calls")
}

// track registers an in-flight call so that Stop can cancel it.
func (g *gate) track(id string, cancel context.CancelCauseFunc) (untrack func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return nil, errStopped
	}
	g.active[id] = cancel
	return func() {
		g.mu.Lock()
		delete(g.active, id)
		g.mu.Unlock()
	}, nil
}

// stop makes new calls fail and cancels those in flight; it returns how
// many were cancelled.
func (g *gate) stop() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	for _, cancel := range g.active {
		cancel(errStopped)
	}
	return len(g.active)
}

func (g *gate) resume() {
	g.mu.Lock()
	g.stopped = false
	g.mu.Unlock()
}

func (g *gate) isStopped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped
}
