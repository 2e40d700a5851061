package daemon

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimit bounds the connections open at once on the listen address.
// Every connection costs a file descriptor, a goroutine and about 25 KB
// until it closes, and before any token is checked: without a bound, a
// client that opened connections and left them idle (after one 401 each;
// they are kept 2 minutes) used up the daemon's file descriptors — 20,000
// here —, after which it accepted no client, probe or console, and could
// not open a file, a socket or a stdio server's pipes. At the bound a new
// connection closes the oldest idle one (a client reconnects to send its
// next request, as after the idle timeout), else the oldest that has not
// finished its first request's headers within newConnGrace (a slow loris).
// When every connection is serving a request, the new one is let in over
// the bound only to be answered 503, with the key to raise, and closed;
// at most overflowConns such at once, past which a new one is closed at
// once.
type connLimit struct {
	net.Listener
	// max is the bound now: gateway.max_connections, and at most
	// fdBound.
	max     func() int
	fdBound int
	log     countedWarn

	mu       sync.Mutex
	conns    map[net.Conn]*connEntry
	closing  int // entries closed by the limit, not gone yet
	overflow int // entries let in to be refused
	// idle and fresh hold the idle connections and those that have not
	// sent their first request's headers yet, oldest first: the ones the
	// limit may close.
	idle, fresh list.List

	refused atomic.Int64 // for tests
	evicted atomic.Int64
}

// connEntry is what connLimit knows of one connection.
type connEntry struct {
	conn     net.Conn
	state    http.ConnState
	since    time.Time     // of the state
	queued   *list.Element // in idle or fresh, by since
	closing  bool
	overflow bool
}

// overConn is a connection let in over the bound, to be refused.
type overConn struct{ net.Conn }

// overflowConns bounds the connections let in over the bound at once.
const overflowConns = 64

// newConnGrace is how long a new connection may take to send its first
// request's headers before a connection over the bound may close it.
var newConnGrace = time.Second

// fdReserve is what the bound keeps of the open-file limit for everything
// else: servers' pipes and sockets, the store, the console's files.
func fdReserve(limit int) int { return max(64, limit/4) }

func newConnLimit(ln net.Listener, maxConns func() int, logger *slog.Logger) *connLimit {
	l := &connLimit{Listener: ln, max: maxConns, log: countedWarn{logger: logger, more: "refused more connections over the connection limit"},
		conns: map[net.Conn]*connEntry{}}
	l.idle.Init()
	l.fresh.Init()
	if n := openFileLimit(); n > 0 {
		l.fdBound = max(n-fdReserve(n), 16)
	}
	return l
}

// limit is the bound now (0 for none), and what sets it.
func (l *connLimit) limit() (int, string) {
	n, by := l.max(), "gateway.max_connections"
	if l.fdBound > 0 && (n <= 0 || n > l.fdBound) {
		n, by = l.fdBound, "the open-file limit (ulimit -n) less a quarter kept for servers and files"
	}
	return n, by
}

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c = l.admit(c); c != nil {
			return c, nil
		}
	}
}

// admit registers c if it is under the bound, closing an idle or
// unfinished connection to make room if need be; else it returns c as an
// overConn, to be refused, or closes it and returns nil.
func (l *connLimit) admit(c net.Conn) net.Conn {
	limit, by := l.limit()
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := &connEntry{conn: c, state: http.StateNew, since: now}
	if limit > 0 && len(l.conns)-l.closing-l.overflow >= limit {
		victim := l.victimLocked(now)
		if victim == nil {
			l.refused.Add(1)
			l.log.warn("refused a connection over the connection limit: every connection is serving a request; further refusals are counted, and logged every 10s",
				"client", c.RemoteAddr().String(), "limit", limit, "set_by", by)
			if l.overflow >= overflowConns {
				_ = c.Close()
				return nil
			}
			l.overflow++
			e.overflow = true
			e.conn = &overConn{c}
			l.conns[e.conn] = e
			return e.conn
		}
		l.unqueueLocked(victim)
		victim.closing = true
		l.closing++
		l.evicted.Add(1)
		_ = victim.conn.Close() // its server goroutine reports it closed
	}
	e.queued = l.fresh.PushBack(e)
	l.conns[c] = e
	return c
}

// victimLocked is the connection to close for a new one: the oldest idle,
// else the oldest that has not sent its first request's headers within
// newConnGrace; nil if every connection is busy.
func (l *connLimit) victimLocked(now time.Time) *connEntry {
	if f := l.idle.Front(); f != nil {
		return f.Value.(*connEntry)
	}
	if f := l.fresh.Front(); f != nil && now.Sub(f.Value.(*connEntry).since) >= newConnGrace {
		return f.Value.(*connEntry)
	}
	return nil
}

// unqueueLocked takes e off the idle or fresh list.
func (l *connLimit) unqueueLocked(e *connEntry) {
	if e.queued == nil {
		return
	}
	if e.state == http.StateIdle {
		l.idle.Remove(e.queued)
	} else {
		l.fresh.Remove(e.queued)
	}
	e.queued = nil
}

// connState follows each connection's state (http.Server.ConnState).
func (l *connLimit) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.conns[c]
	if e == nil || s == http.StateNew {
		return
	}
	l.unqueueLocked(e)
	switch s {
	case http.StateClosed, http.StateHijacked:
		if e.closing {
			l.closing--
		}
		if e.overflow {
			l.overflow--
		}
		delete(l.conns, c)
	default:
		e.state, e.since = s, time.Now()
		if s == http.StateIdle && !e.closing && !e.overflow {
			e.queued = l.idle.PushBack(e)
		}
	}
}

// active counts the connections serving a request (for tests).
func (l *connLimit) active() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.conns {
		if e.state == http.StateActive {
			n++
		}
	}
	return n
}

type overKey struct{}

// connContext marks the requests of a connection let in over the bound
// (http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if _, ok := c.(*overConn); ok {
		return context.WithValue(ctx, overKey{}, true)
	}
	return ctx
}

// refuseOver answers the requests of a connection let in over the bound
// with 503, naming the key, and closes it.
func (l *connLimit) refuseOver(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(overKey{}) == nil {
			next.ServeHTTP(w, r)
			return
		}
		limit, by := l.limit()
		msg := fmt.Sprintf("Too many connections: the gateway already has %d connections open, every one serving a request (the limit: %s); retry later, or raise gateway.max_connections (and the open-file limit)", limit, by)
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32000, "message": msg}})
	})
}

// maxHeaderBytes bounds a request's headers on the listen address (Go's
// default is 1 MiB). Each connection holds its headers while they come,
// for up to ReadHeaderTimeout: 1,000 clients sending 1 MiB of headers each
// took the daemon from 48 MB to 1,980 MB. 64 KiB holds any real request
// (an OAuth access token with its groups, the console's cookies); a
// larger one is answered 431 by the HTTP server.
const maxHeaderBytes = 64 << 10
