package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/metrics"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// fakeRecorder is a toolcall.Recorder whose behaviour a test sets.
type fakeRecorder struct {
	record func(store.CallRecord)
}

var _ toolcall.Recorder = (*fakeRecorder)(nil)

func (f *fakeRecorder) Commit(_ context.Context, r store.CallRecord) error {
	f.record(r)
	return nil
}

// record hands r to m as the engine does, for tests whose next recorder
// never fails.
func record(m *metrics.Metrics, r store.CallRecord) { _ = m.Commit(context.Background(), r) }

// scraper serves a Metrics over a real HTTP server.
type scraper struct {
	t   *testing.T
	url string
}

func serve(t *testing.T, m *metrics.Metrics) *scraper {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return &scraper{t: t, url: srv.URL + "/metrics"}
}

// body fetches the text exposition.
func (s *scraper) body() string {
	s.t.Helper()
	resp, err := http.Get(s.url)
	if err != nil {
		s.t.Fatalf("scraping: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("reading the scrape: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("scrape: got status %d, want 200; body:\n%s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		s.t.Fatalf("scrape: got Content-Type %q, want text/plain", ct)
	}
	return string(b)
}

// families scrapes and parses the text exposition.
func (s *scraper) families() map[string]*dto.MetricFamily {
	s.t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(s.body()))
	if err != nil {
		s.t.Fatalf("parsing the scrape: %v", err)
	}
	return fams
}

// compare checks the named metrics against the expected exposition.
func (s *scraper) compare(want string, names ...string) {
	s.t.Helper()
	if err := testutil.ScrapeAndCompare(s.url, strings.NewReader(want), names...); err != nil {
		s.t.Error(err)
	}
}

// value returns the value of the counter or gauge sample of name with
// exactly the given labels.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if !maps.Equal(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// series counts the samples of a family.
func series(fams map[string]*dto.MetricFamily, name string) int {
	return len(fams[name].GetMetric())
}

func call(server, tool, status, source string, d time.Duration, retries int) store.CallRecord {
	return store.CallRecord{ID: "id-" + tool, Server: server, Tool: tool, Status: status, Source: source,
		Duration: d, Retries: retries, StartedAt: time.Now()}
}

func TestRecordCountsCalls(t *testing.T) {
	var (
		mu  sync.Mutex
		got []store.CallRecord
	)
	next := &fakeRecorder{record: func(r store.CallRecord) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
	}}
	m := metrics.New(metrics.Options{Next: next})
	s := serve(t, m)

	recs := []store.CallRecord{
		call("alpha", "echo", "success", "cli", 2*time.Millisecond, 0),
		call("alpha", "echo", "success", "cli", 40*time.Millisecond, 0),
		call("alpha", "echo", "error", "gateway", 3*time.Second, 2),
		call("beta", "search", "timeout", "hook", 4*time.Minute, 1),
	}
	recs[2].Identity, recs[2].ErrorMessage = "alice@example.com", "the gizmo is broken"
	for _, r := range recs {
		record(m, r)
	}

	s.compare(`
# HELP switchboard_calls_total Tool calls finished, by server, tool, final status and source (cli, gateway, hook, document, agent).
# TYPE switchboard_calls_total counter
switchboard_calls_total{server="alpha",source="cli",status="success",tool="echo"} 2
switchboard_calls_total{server="alpha",source="gateway",status="error",tool="echo"} 1
switchboard_calls_total{server="beta",source="hook",status="timeout",tool="search"} 1
# HELP switchboard_call_retries_total Retries of tool calls after a transient failure, by server.
# TYPE switchboard_call_retries_total counter
switchboard_call_retries_total{server="alpha"} 2
switchboard_call_retries_total{server="beta"} 1
`, "switchboard_calls_total", "switchboard_call_retries_total")

	s.compare(`
# HELP switchboard_call_duration_seconds Time from the start of a tool call to its end, retries included, by server and final status.
# TYPE switchboard_call_duration_seconds histogram
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.001"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.0025"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.005"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.01"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.025"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.05"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.1"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.25"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="0.5"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="1"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="2.5"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="5"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="10"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="30"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="60"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="120"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="300"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="error",le="+Inf"} 1
switchboard_call_duration_seconds_sum{server="alpha",status="error"} 3
switchboard_call_duration_seconds_count{server="alpha",status="error"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.001"} 0
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.0025"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.005"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.01"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.025"} 1
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.05"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.1"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.25"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="0.5"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="1"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="2.5"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="5"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="10"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="30"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="60"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="120"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="300"} 2
switchboard_call_duration_seconds_bucket{server="alpha",status="success",le="+Inf"} 2
switchboard_call_duration_seconds_sum{server="alpha",status="success"} 0.042
switchboard_call_duration_seconds_count{server="alpha",status="success"} 2
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.001"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.0025"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.005"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.01"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.025"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.05"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.1"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.25"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="0.5"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="1"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="2.5"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="5"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="10"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="30"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="60"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="120"} 0
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="300"} 1
switchboard_call_duration_seconds_bucket{server="beta",status="timeout",le="+Inf"} 1
switchboard_call_duration_seconds_sum{server="beta",status="timeout"} 240
switchboard_call_duration_seconds_count{server="beta",status="timeout"} 1
`, "switchboard_call_duration_seconds")

	body := s.body()
	for _, secret := range []string{"alice@example.com", "gizmo", "id-echo"} {
		if strings.Contains(body, secret) {
			t.Errorf("scrape contains %q; identities, error text and ids must never be exported", secret)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("Next got different records (-want +got):\n%s", diff)
	}
}

func TestRecordWithoutNext(t *testing.T) {
	m := metrics.New(metrics.Options{})
	record(m, call("alpha", "echo", "success", "cli", time.Millisecond, 0))
	if got := testutil.ToFloat64(metrics.CallsVec(m).WithLabelValues("alpha", "echo", "success", "cli")); got != 1 {
		t.Errorf("calls_total: got %v, want 1", got)
	}
}

func TestNextIsTheHistory(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "history.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rec := store.NewRecorder(st, store.RecorderOptions{})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rec.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("recorder: %v", err)
		}
	})

	m := metrics.New(metrics.Options{Next: rec})
	for i := range 5 {
		r := call("alpha", "echo", "success", "cli", time.Millisecond, 0)
		r.ID = fmt.Sprintf("call-%d", i)
		if err := m.Commit(ctx, r); err != nil {
			t.Fatalf("committing %s: %v", r.ID, err)
		}
	}
	flushCtx, cancelFlush := context.WithTimeout(ctx, 10*time.Second)
	defer cancelFlush()
	if err := rec.Flush(flushCtx); err != nil {
		t.Fatalf("flushing the history: %v", err)
	}
	calls, err := st.Calls(ctx, store.CallFilter{Server: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 5 {
		t.Errorf("history: got %d calls, want 5", len(calls))
	}
	if got := testutil.ToFloat64(metrics.CallsVec(m).WithLabelValues("alpha", "echo", "success", "cli")); got != 5 {
		t.Errorf("calls_total: got %v, want 5", got)
	}
}

func TestEngineStatsAtScrapeTime(t *testing.T) {
	var (
		mu    sync.Mutex
		stats toolcall.Stats
		reads int
	)
	set := func(s toolcall.Stats) { mu.Lock(); stats = s; mu.Unlock() }
	m := metrics.New(metrics.Options{Stats: func() toolcall.Stats {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return stats
	}})
	s := serve(t, m)

	steps := []struct {
		stats                     toolcall.Stats
		inFlight, queued, stopped float64
	}{
		{toolcall.Stats{}, 0, 0, 0},
		{toolcall.Stats{InFlight: 7, Waiting: 3, Started: 100}, 7, 3, 0},
		{toolcall.Stats{InFlight: 0, Waiting: 0, Started: 100, Stopped: true}, 0, 0, 1},
	}
	for i, step := range steps {
		set(step.stats)
		fams := s.families()
		for _, c := range []struct {
			name string
			want float64
		}{
			{"switchboard_calls_in_flight", step.inFlight},
			{"switchboard_calls_queued", step.queued},
			{"switchboard_calls_stopped", step.stopped},
		} {
			got, ok := value(fams, c.name, nil)
			if !ok {
				t.Fatalf("step %d: %s missing from the scrape", i, c.name)
			}
			if got != c.want {
				t.Errorf("step %d: %s: got %v, want %v", i, c.name, got, c.want)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != len(steps) {
		t.Errorf("Stats was read %d times, want once per scrape (%d)", reads, len(steps))
	}
}

func TestNoStatsNoSnapshots(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.Handler() // a second handler on the same registry must not panic
	fams := serve(t, m).families()
	for _, name := range []string{"switchboard_calls_in_flight", "switchboard_upstream_up", "switchboard_upstream_state"} {
		if _, ok := fams[name]; ok {
			t.Errorf("%s exported without a source", name)
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "promhttp_metric_handler_errors_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing: the Go and process collectors must be registered", name)
		}
	}
}

func TestUpstreamsAtScrapeTime(t *testing.T) {
	var (
		mu    sync.Mutex
		snaps []upstream.Snapshot
	)
	set := func(s ...upstream.Snapshot) { mu.Lock(); snaps = s; mu.Unlock() }
	m := metrics.New(metrics.Options{Snapshots: func() []upstream.Snapshot {
		mu.Lock()
		defer mu.Unlock()
		return snaps
	}})
	s := serve(t, m)

	set(
		upstream.Snapshot{Server: "alpha", State: upstream.StateConnected, LastPingAt: time.Now(), Latency: 1500 * time.Microsecond},
		upstream.Snapshot{Server: "beta", State: upstream.StateError, ConsecutiveFailures: 4, AutoDisabled: true,
			LastError: "secret detail must not leak"},
		upstream.Snapshot{Server: "gamma", State: upstream.StateConnecting, Sessions: 3, LogsDropped: 12},
	)
	s.compare(`
# HELP switchboard_upstream_state Connection state of an upstream server: 1 for its current state, 0 for the others.
# TYPE switchboard_upstream_state gauge
switchboard_upstream_state{server="alpha",state="cannot_start"} 0
switchboard_upstream_state{server="alpha",state="connected"} 1
switchboard_upstream_state{server="alpha",state="connecting"} 0
switchboard_upstream_state{server="alpha",state="created"} 0
switchboard_upstream_state{server="alpha",state="disconnected"} 0
switchboard_upstream_state{server="alpha",state="error"} 0
switchboard_upstream_state{server="beta",state="cannot_start"} 0
switchboard_upstream_state{server="beta",state="connected"} 0
switchboard_upstream_state{server="beta",state="connecting"} 0
switchboard_upstream_state{server="beta",state="created"} 0
switchboard_upstream_state{server="beta",state="disconnected"} 0
switchboard_upstream_state{server="beta",state="error"} 1
switchboard_upstream_state{server="gamma",state="cannot_start"} 0
switchboard_upstream_state{server="gamma",state="connected"} 0
switchboard_upstream_state{server="gamma",state="connecting"} 1
switchboard_upstream_state{server="gamma",state="created"} 0
switchboard_upstream_state{server="gamma",state="disconnected"} 0
switchboard_upstream_state{server="gamma",state="error"} 0
# HELP switchboard_upstream_up 1 when an upstream server is connected, 0 otherwise.
# TYPE switchboard_upstream_up gauge
switchboard_upstream_up{server="alpha"} 1
switchboard_upstream_up{server="beta"} 0
switchboard_upstream_up{server="gamma"} 0
# HELP switchboard_upstream_latency_seconds Round-trip time of the last health ping to an upstream server; absent until the first ping.
# TYPE switchboard_upstream_latency_seconds gauge
switchboard_upstream_latency_seconds{server="alpha"} 0.0015
# HELP switchboard_upstream_consecutive_failures Failures (connect, crash, ping) of an upstream server since it was last connected.
# TYPE switchboard_upstream_consecutive_failures gauge
switchboard_upstream_consecutive_failures{server="alpha"} 0
switchboard_upstream_consecutive_failures{server="beta"} 4
switchboard_upstream_consecutive_failures{server="gamma"} 0
# HELP switchboard_upstream_auto_disabled 1 when an upstream server was disabled after repeated failures, 0 otherwise.
# TYPE switchboard_upstream_auto_disabled gauge
switchboard_upstream_auto_disabled{server="alpha"} 0
switchboard_upstream_auto_disabled{server="beta"} 1
switchboard_upstream_auto_disabled{server="gamma"} 0
# HELP switchboard_upstream_sessions Per-client or per-user upstream sessions of a server open besides its shared one (session: per_client, per_user).
# TYPE switchboard_upstream_sessions gauge
switchboard_upstream_sessions{server="alpha"} 0
switchboard_upstream_sessions{server="beta"} 0
switchboard_upstream_sessions{server="gamma"} 3
# HELP switchboard_upstream_log_messages_dropped_total Log messages of a server dropped because they came faster than the gateway's clients read them; each client was told how many, with a warning.
# TYPE switchboard_upstream_log_messages_dropped_total counter
switchboard_upstream_log_messages_dropped_total{server="alpha"} 0
switchboard_upstream_log_messages_dropped_total{server="beta"} 0
switchboard_upstream_log_messages_dropped_total{server="gamma"} 12
`, "switchboard_upstream_state", "switchboard_upstream_up", "switchboard_upstream_latency_seconds",
		"switchboard_upstream_consecutive_failures", "switchboard_upstream_auto_disabled", "switchboard_upstream_sessions",
		"switchboard_upstream_log_messages_dropped_total")
	if body := s.body(); strings.Contains(body, "secret detail") {
		t.Errorf("scrape contains an upstream's error text")
	}

	// beta is removed from the configuration and alpha reconnects.
	set(
		upstream.Snapshot{Server: "alpha", State: upstream.StateDisconnected, ConsecutiveFailures: 1},
		upstream.Snapshot{Server: "gamma", State: upstream.StateConnected},
	)
	fams := s.families()
	for _, name := range []string{"switchboard_upstream_up", "switchboard_upstream_consecutive_failures",
		"switchboard_upstream_auto_disabled"} {
		if _, ok := value(fams, name, map[string]string{"server": "beta"}); ok {
			t.Errorf("%s{server=beta} still exported after beta was removed", name)
		}
		if got, want := series(fams, name), 2; got != want {
			t.Errorf("%s: got %d series, want %d", name, got, want)
		}
	}
	if got, want := series(fams, "switchboard_upstream_state"), 2*len(metrics.States); got != want {
		t.Errorf("switchboard_upstream_state: got %d series, want %d", got, want)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"switchboard_upstream_up", map[string]string{"server": "alpha"}, 0},
		{"switchboard_upstream_up", map[string]string{"server": "gamma"}, 1},
		{"switchboard_upstream_state", map[string]string{"server": "alpha", "state": "disconnected"}, 1},
		{"switchboard_upstream_state", map[string]string{"server": "alpha", "state": "connected"}, 0},
		{"switchboard_upstream_consecutive_failures", map[string]string{"server": "alpha"}, 1},
	} {
		got, ok := value(fams, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v: got %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}

	// Every server removed: the families disappear, the scrape still works.
	set()
	fams = s.families()
	if _, ok := fams["switchboard_upstream_up"]; ok {
		t.Errorf("switchboard_upstream_up exported with no upstreams")
	}
}

func TestUpstreamDuplicatesAndBadNames(t *testing.T) {
	m := metrics.New(metrics.Options{Snapshots: func() []upstream.Snapshot {
		return []upstream.Snapshot{
			{Server: "alpha", State: upstream.StateConnected},
			{Server: "alpha", State: upstream.StateError},
			{Server: "bad\xffname", State: upstream.StateCreated},
		}
	}})
	fams := serve(t, m).families()
	if got, want := series(fams, "switchboard_upstream_up"), 2; got != want {
		t.Errorf("switchboard_upstream_up: got %d series, want %d", got, want)
	}
	if got, ok := value(fams, "switchboard_upstream_up", map[string]string{"server": "alpha"}); !ok || got != 1 {
		t.Errorf("alpha: got up=%v (present %v), want the first snapshot's 1", got, ok)
	}
	if _, ok := value(fams, "switchboard_upstream_up", map[string]string{"server": "bad\uFFFDname"}); !ok {
		t.Errorf("a server name with invalid UTF-8 was not exported with a replacement character")
	}
}

func TestToolCardinalityGuard(t *testing.T) {
	m := metrics.New(metrics.Options{})
	s := serve(t, m)
	// DefaultMaxTools pairs over two servers: alpha/tool-0..499, beta/tool-500..999.
	for i := range metrics.DefaultMaxTools {
		server := "alpha"
		if i >= metrics.DefaultMaxTools/2 {
			server = "beta"
		}
		record(m, call(server, fmt.Sprintf("tool-%d", i), "success", "gateway", time.Millisecond, 0))
	}
	// Past the limit: new tools on known servers, a new server, and a
	// tool that was admitted before.
	extra := []store.CallRecord{
		call("alpha", "new-1", "success", "gateway", time.Millisecond, 0),
		call("alpha", "new-2", "success", "gateway", time.Millisecond, 0),
		call("beta", "new-3", "error", "gateway", time.Millisecond, 1),
		call("no-such-server", "x", "error", "cli", time.Millisecond, 0),
		call("another-unknown", "y", "error", "cli", time.Millisecond, 0),
		call("alpha", "tool-0", "success", "gateway", time.Millisecond, 0),
		call("alpha", "tool-0", "error", "cli", time.Millisecond, 0),
	}
	for _, r := range extra {
		record(m, r)
	}

	fams := s.families()
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"server": "alpha", "tool": metrics.OtherLabel, "status": "success", "source": "gateway"}, 2},
		{map[string]string{"server": "beta", "tool": metrics.OtherLabel, "status": "error", "source": "gateway"}, 1},
		{map[string]string{"server": metrics.OtherLabel, "tool": metrics.OtherLabel, "status": "error", "source": "cli"}, 2},
		{map[string]string{"server": "alpha", "tool": "tool-0", "status": "success", "source": "gateway"}, 2},
		{map[string]string{"server": "alpha", "tool": "tool-0", "status": "error", "source": "cli"}, 1},
		{map[string]string{"server": "beta", "tool": "tool-999", "status": "success", "source": "gateway"}, 1},
	} {
		got, ok := value(fams, "switchboard_calls_total", c.labels)
		if !ok || got != c.want {
			t.Errorf("calls_total%v: got %v (present %v), want %v", c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"new-1", "new-2", "new-3", "no-such-server", "another-unknown"} {
		if strings.Contains(s.body(), `"`+name+`"`) {
			t.Errorf("%q exported as a label past the cardinality limit", name)
		}
	}
	// 1000 admitted pairs (one with a second status/source), 3 _other series.
	if got, want := series(fams, "switchboard_calls_total"), metrics.DefaultMaxTools+1+3; got != want {
		t.Errorf("calls_total: got %d series, want %d", got, want)
	}
	if got, ok := value(fams, "switchboard_call_retries_total", map[string]string{"server": "beta"}); !ok || got != 1 {
		t.Errorf("call_retries_total{beta}: got %v (present %v), want 1", got, ok)
	}
	var total float64
	for _, mt := range fams["switchboard_calls_total"].GetMetric() {
		total += mt.GetCounter().GetValue()
	}
	if want := float64(metrics.DefaultMaxTools + len(extra)); total != want {
		t.Errorf("calls_total summed: got %v, want %v (nothing may be lost past the limit)", total, want)
	}
}

func TestMaxToolsOption(t *testing.T) {
	m := metrics.New(metrics.Options{MaxTools: 2})
	for _, tool := range []string{"a", "b", "c", "d"} {
		record(m, call("alpha", tool, "success", "cli", time.Millisecond, 0))
	}
	if got := testutil.ToFloat64(metrics.CallsVec(m).WithLabelValues("alpha", metrics.OtherLabel, "success", "cli")); got != 2 {
		t.Errorf("calls_total{tool=_other}: got %v, want 2", got)
	}
	if got := testutil.CollectAndCount(metrics.CallsVec(m)); got != 3 {
		t.Errorf("calls_total: got %d series, want 3", got)
	}
}

func TestInvalidUTF8Labels(t *testing.T) {
	m := metrics.New(metrics.Options{})
	record(m, call("al\xffpha", "ec\xfeho", "success", "cli", time.Millisecond, 0))
	m.SessionOpened("v\xff")
	m.Forwarded("prompts/\xffget", nil)
	fams := serve(t, m).families()
	got, ok := value(fams, "switchboard_calls_total",
		map[string]string{"server": "al\uFFFDpha", "tool": "ec\uFFFDho", "status": "success", "source": "cli"})
	if !ok || got != 1 {
		t.Errorf("calls_total with replaced names: got %v (present %v), want 1", got, ok)
	}
}

func TestConcurrentRecord(t *testing.T) {
	var forwarded sync.Map // id -> struct{}
	m := metrics.New(metrics.Options{Next: &fakeRecorder{record: func(r store.CallRecord) { forwarded.Store(r.ID, struct{}{}) }}})
	s := serve(t, m)
	const (
		workers = 16
		each    = 500
	)
	servers := []string{"alpha", "beta", "gamma"}
	statuses := []string{"success", "error", "timeout"}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				r := call(servers[i%len(servers)], fmt.Sprintf("tool-%d", i%7), statuses[(i+w)%len(statuses)], "gateway",
					time.Duration(i)*time.Millisecond, i%2)
				r.ID = fmt.Sprintf("%d-%d", w, i)
				record(m, r)
			}
		})
	}
	// Scrape while recording: the handler must not race with Record.
	wg.Go(func() {
		for range 5 {
			resp, err := http.Get(s.url)
			if err != nil {
				t.Errorf("scraping while recording: %v", err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	wg.Wait()

	fams := s.families()
	var calls, count, retries float64
	for _, mt := range fams["switchboard_calls_total"].GetMetric() {
		calls += mt.GetCounter().GetValue()
	}
	for _, mt := range fams["switchboard_call_duration_seconds"].GetMetric() {
		count += float64(mt.GetHistogram().GetSampleCount())
	}
	for _, mt := range fams["switchboard_call_retries_total"].GetMetric() {
		retries += mt.GetCounter().GetValue()
	}
	if want := float64(workers * each); calls != want || count != want {
		t.Errorf("got calls_total %v and duration count %v, want %v each", calls, count, want)
	}
	if want := float64(workers * each / 2); retries != want {
		t.Errorf("retries: got %v, want %v", retries, want)
	}
	n := 0
	forwarded.Range(func(any, any) bool { n++; return true })
	if n != workers*each {
		t.Errorf("Next got %d distinct records, want %d", n, workers*each)
	}
}

func TestGateway(t *testing.T) {
	m := metrics.New(metrics.Options{})
	s := serve(t, m)
	m.SessionOpened("default")
	m.SessionOpened("default")
	m.SessionOpened("readonly")
	m.SessionClosed("default")
	m.Forwarded("prompts/get", nil)
	m.Forwarded("prompts/get", nil)
	m.Forwarded("prompts/get", fault.New(fault.NotFound, "no prompt named %q for alice@example.com", "x"))
	m.Forwarded("resources/read", fmt.Errorf("reading: %w", fault.New(fault.Connection, "server down")))
	m.Forwarded("resources/read", context.Canceled)
	m.Forwarded("completion/complete", errors.New("something unexpected"))

	s.compare(`
# HELP switchboard_gateway_sessions Gateway client sessions open, by view.
# TYPE switchboard_gateway_sessions gauge
switchboard_gateway_sessions{view="default"} 1
switchboard_gateway_sessions{view="readonly"} 1
# HELP switchboard_gateway_requests_total Gateway requests other than tools/call forwarded upstream, by method and outcome (success or the error kind).
# TYPE switchboard_gateway_requests_total counter
switchboard_gateway_requests_total{method="completion/complete",outcome="internal"} 1
switchboard_gateway_requests_total{method="prompts/get",outcome="not_found"} 1
switchboard_gateway_requests_total{method="prompts/get",outcome="success"} 2
switchboard_gateway_requests_total{method="resources/read",outcome="cancelled"} 1
switchboard_gateway_requests_total{method="resources/read",outcome="connection"} 1
`, "switchboard_gateway_sessions", "switchboard_gateway_requests_total")
	if body := s.body(); strings.Contains(body, "alice") || strings.Contains(body, "unexpected") {
		t.Errorf("scrape contains error text")
	}
}

func TestGatewayMethodGuard(t *testing.T) {
	m := metrics.New(metrics.Options{})
	for i := range metrics.MaxMethods + 10 {
		m.Forwarded(fmt.Sprintf("method/%d", i), nil)
	}
	if got, want := testutil.CollectAndCount(metrics.RequestsVec(m)), metrics.MaxMethods+1; got != want {
		t.Errorf("gateway_requests_total: got %d series, want %d", got, want)
	}
	if got := testutil.ToFloat64(metrics.RequestsVec(m).WithLabelValues(metrics.OtherLabel, metrics.OutcomeSuccess)); got != 10 {
		t.Errorf("gateway_requests_total{method=_other}: got %v, want 10", got)
	}
}

func TestPrivateRegistry(t *testing.T) {
	a, b := metrics.New(metrics.Options{}), metrics.New(metrics.Options{}) // the default registry would panic on the second
	record(a, call("alpha", "echo", "success", "cli", time.Millisecond, 0))
	fams, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), metrics.Namespace+"_") {
			t.Errorf("%s is in the default registry", f.GetName())
		}
	}
	if _, ok := serve(t, b).families()["switchboard_calls_total"]; ok {
		t.Errorf("a call recorded on one Metrics shows on another")
	}
}

func TestNegativeDuration(t *testing.T) {
	m := metrics.New(metrics.Options{})
	record(m, call("alpha", "echo", "success", "cli", -time.Second, 0))
	fams := serve(t, m).families()
	h := fams["switchboard_call_duration_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleSum() != 0 || h.GetSampleCount() != 1 || math.Signbit(h.GetSampleSum()) {
		t.Errorf("got sum %v count %d, want 0 and 1", h.GetSampleSum(), h.GetSampleCount())
	}
}

func BenchmarkRecord(b *testing.B) {
	m := metrics.New(metrics.Options{})
	recs := make([]store.CallRecord, 64)
	for i := range recs {
		recs[i] = call(fmt.Sprintf("server-%d", i%4), fmt.Sprintf("tool-%d", i%16), "success", "gateway",
			time.Duration(i)*time.Millisecond, i%3)
	}
	for _, r := range recs {
		record(m, r) // warm the cache: the benchmark measures the steady state
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			record(m, recs[i%len(recs)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				record(m, recs[i%len(recs)])
				i++
			}
		})
	})
}

// TestUserCalls: calls are counted per user the configuration names;
// anyone else is _other, calls without a user _none, and rate-limited
// calls are counted apart.
func TestUserCalls(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.SetUsers([]string{"alice", "bob", ""})
	s := serve(t, m)
	for _, c := range []struct{ user, status, kind string }{
		{"alice", "success", ""},
		{"alice", "success", ""},
		{"alice", "error", "rate_limited"},
		{"bob", "error", "rate_limited"},
		{"mallory@example.com", "success", ""}, // a user the file does not name
		{"eve", "error", "rate_limited"},
		{"", "success", ""},
	} {
		r := call("alpha", "echo", c.status, "gateway", time.Millisecond, 0)
		r.Identity, r.ErrorKind = c.user, c.kind
		record(m, r)
	}
	s.compare(`
# HELP switchboard_user_calls_total Tool calls finished, by user (the users the configuration names; _other for anyone else, _none without one) and final status.
# TYPE switchboard_user_calls_total counter
switchboard_user_calls_total{status="error",user="_other"} 1
switchboard_user_calls_total{status="error",user="alice"} 1
switchboard_user_calls_total{status="error",user="bob"} 1
switchboard_user_calls_total{status="success",user="_none"} 1
switchboard_user_calls_total{status="success",user="_other"} 1
switchboard_user_calls_total{status="success",user="alice"} 2
# HELP switchboard_user_rate_limited_total Tool calls refused by limits.rate, by user (bounded as in user_calls_total).
# TYPE switchboard_user_rate_limited_total counter
switchboard_user_rate_limited_total{user="_other"} 1
switchboard_user_rate_limited_total{user="alice"} 1
switchboard_user_rate_limited_total{user="bob"} 1
`, "switchboard_user_calls_total", "switchboard_user_rate_limited_total")
	if strings.Contains(s.body(), "mallory") {
		t.Error("the scrape names a user the configuration does not")
	}
}
