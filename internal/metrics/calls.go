package metrics

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Commit counts one finished call, then hands it to Options.Next and
// returns what that returns. Counting never blocks: after a call's label
// set has been seen once, it takes only a read lock and updates three
// atomic counters.
func (m *Metrics) Commit(ctx context.Context, r store.CallRecord) error {
	m.count(r)
	m.countUser(r)
	if m.next != nil {
		return m.next.Commit(ctx, r)
	}
	return nil
}

// Begin passes the start of a call on to Options.Next when that accounts
// for calls as they start (toolcall.Beginner), so that the history still
// accounts for a call running when the process dies.
func (m *Metrics) Begin(r store.CallRecord) (end func()) {
	if b, ok := m.next.(toolcall.Beginner); ok {
		return b.Begin(r)
	}
	return func() {}
}

// count counts one finished call.
func (m *Metrics) count(r store.CallRecord) {
	s := m.series(callKey{server: r.Server, tool: r.Tool, status: r.Status, source: r.Source})
	s.calls.Inc()
	s.duration.Observe(max(r.Duration.Seconds(), 0))
	if r.Retries > 0 {
		s.retries.Add(float64(r.Retries))
	}
}

// callKey is the label set of one call series, as recorded.
type callKey struct{ server, tool, status, source string }

// pairKey is one (server, tool) pair.
type pairKey struct{ server, tool string }

// callSeries holds the metric handles of one callKey, so that Commit does
// not hash label values on every call.
type callSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
	retries  prometheus.Counter
}

// callTable caches callSeries and bounds the tool label. The engine
// records calls to unknown servers and tools under the names the client
// asked for, so those names are not bounded by the configuration.
type callTable struct {
	max    int
	mu     sync.RWMutex
	series map[callKey]*callSeries
	// pairs holds the (server, tool) pairs counted under their own names;
	// servers holds the servers of those pairs.
	pairs   map[pairKey]struct{}
	servers map[string]struct{}
}

func (t *callTable) init(n int) {
	t.max = n
	t.series = map[callKey]*callSeries{}
	t.pairs = map[pairKey]struct{}{}
	t.servers = map[string]struct{}{}
}

// bound returns the key a call is counted under: k itself when its pair is
// admitted or (when admit is set) can be, otherwise k with tool "_other",
// and server "_other" too unless the server has an admitted pair. The
// caller holds t.mu, for writing when admit is set.
func (t *callTable) bound(k callKey, admit bool) callKey {
	p := pairKey{k.server, k.tool}
	if _, ok := t.pairs[p]; ok {
		return k
	}
	if len(t.pairs) < t.max {
		if admit {
			t.pairs[p] = struct{}{}
			t.servers[k.server] = struct{}{}
		}
		return k
	}
	k.tool = OtherLabel
	if _, ok := t.servers[k.server]; !ok {
		k.server = OtherLabel
	}
	return k
}

// series returns the handles for a call's labels, creating them the first
// time the (bounded) label set is seen.
func (m *Metrics) series(k callKey) *callSeries {
	t := &m.table
	t.mu.RLock()
	s, ok := t.series[k]
	if !ok {
		// Past the limit, an unknown pair maps to an existing _other
		// series without taking the write lock.
		if b := t.bound(k, false); b != k {
			s, ok = t.series[b]
		}
	}
	t.mu.RUnlock()
	if ok {
		return s
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	k = t.bound(k, true)
	if s, ok := t.series[k]; ok {
		return s
	}
	server, tool, status, source := labelValue(k.server), labelValue(k.tool), labelValue(k.status), labelValue(k.source)
	s = &callSeries{
		calls:    m.calls.WithLabelValues(server, tool, status, source),
		duration: m.duration.WithLabelValues(server, status),
		retries:  m.retries.WithLabelValues(server),
	}
	t.series[k] = s
	return s
}
