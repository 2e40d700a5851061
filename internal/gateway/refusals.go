package gateway

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// This file keeps the log of sessions refused over a limit short: a
// client that opens sessions in a loop past gateway.max_sessions would
// otherwise write a WARN per request (thousands a second). The first
// refusal of a (limit, client address) is logged at once; the ones after
// it are counted, and the count is logged once per refusalLogEvery while
// they go on (by the next refusal past the interval, by the janitor, and
// at shutdown), so the log says which limit, which client and how many,
// and never floods.

// refusalLogEvery is how often the count of refusals is logged.
const refusalLogEvery = 10 * time.Second

// Log keys of the refusal lines.
const (
	logKeyLimit   = "limit"
	logKeyClient  = "client"
	logKeyRefused = "refused"
	logKeyDuring  = "during"
)

// refusalKey is what refusals are counted by.
type refusalKey struct{ limit, client string }

// refusalWindow counts the refusals of one key since it was last logged.
type refusalWindow struct {
	since time.Time
	count int
	view  string
}

// refusalLog logs the sessions refused over a limit, at most once per
// refusalLogEvery for each limit and client address.
type refusalLog struct {
	mu      sync.Mutex
	pending map[refusalKey]*refusalWindow
}

// clientAddr is the address a request came from, without its port (a
// client opening sessions in a loop opens connections from many ports).
func clientAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// refused records a session refused by the limit named limit for client;
// it logs the first at once, and then the count once per interval.
func (l *refusalLog) refused(log *slog.Logger, now time.Time, limit, client, view string) {
	k := refusalKey{limit, client}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.pending[k]
	if w == nil {
		if l.pending == nil {
			l.pending = map[refusalKey]*refusalWindow{}
		}
		l.pending[k] = &refusalWindow{since: now, view: view}
		log.Warn("refused a client session over a limit; further refusals of this client are counted, and logged every 10s",
			logKeyLimit, limit, logKeyClient, client, logKeyView, view)
		return
	}
	w.count++
	w.view = view
	l.flushLocked(log, now, k, w, false)
}

// flush logs the counts whose interval has passed, or every count when
// all is set (at shutdown).
func (l *refusalLog) flush(log *slog.Logger, now time.Time, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, w := range l.pending {
		l.flushLocked(log, now, k, w, all)
	}
}

// flushLocked logs w's count if its interval has passed (or all is set):
// a window with refusals starts another; one without is forgotten, so the
// next refusal of its client is logged at once.
func (l *refusalLog) flushLocked(log *slog.Logger, now time.Time, k refusalKey, w *refusalWindow, all bool) {
	if !all && now.Sub(w.since) < refusalLogEvery {
		return
	}
	if w.count == 0 {
		delete(l.pending, k)
		return
	}
	log.Warn("refused more client sessions over a limit",
		logKeyLimit, k.limit, logKeyClient, k.client, logKeyView, w.view,
		logKeyRefused, w.count, logKeyDuring, now.Sub(w.since).Round(time.Millisecond).String())
	if all {
		delete(l.pending, k)
		return
	}
	w.since, w.count = now, 0
}
