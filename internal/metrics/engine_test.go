package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/metrics"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestWithEngineAndPool wires Metrics the way the daemon does: the engine
// records into it, it reads the engine's Stats and the pool's Snapshots,
// and the upstream is a real subprocess server.
func TestWithEngineAndPool(t *testing.T) {
	srv := testserver.Server(t, "alpha", "ok")
	cfg := &config.Config{Servers: []config.Server{srv}, Defaults: config.Defaults{
		RequestTimeout: 10 * time.Second,
		Health: config.Health{PingInterval: 50 * time.Millisecond, PingTimeout: time.Second,
			Backoff: []time.Duration{20 * time.Millisecond}, MaxFailures: 3},
	}}
	cfg.Limits = config.Limits{MaxConcurrent: 4, MaxQueue: 10, SessionLimit: -1, MaxOutputBytes: 1 << 20}

	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = pool.Run(ctx) })
	wg.Go(func() { _ = cat.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	if _, err := pool.WaitConnected(ctx, "alpha", 20*time.Second); err != nil {
		t.Fatalf("connecting alpha: %v", err)
	}
	if err := cat.Refresh(ctx, "alpha"); err != nil {
		t.Fatalf("discovering alpha: %v", err)
	}

	var (
		eng     *toolcall.Engine
		mu      sync.Mutex
		history []store.CallRecord
	)
	m := metrics.New(metrics.Options{
		Stats:     func() toolcall.Stats { return eng.Stats() },
		Snapshots: pool.Snapshots,
		Next: &fakeRecorder{record: func(r store.CallRecord) {
			mu.Lock()
			history = append(history, r)
			mu.Unlock()
		}},
	})
	eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: cat, Recorder: m})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, m)

	// waitFor scrapes until check passes or the deadline passes.
	waitFor := func(what string, check func(map[string]*dto.MetricFamily) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if check(s.families()) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; last scrape:\n%s", what, s.body())
			}
			time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
		}
	}
	is := func(name string, labels map[string]string, want float64) func(map[string]*dto.MetricFamily) bool {
		return func(fams map[string]*dto.MetricFamily) bool {
			got, ok := value(fams, name, labels)
			return ok && got == want
		}
	}

	waitFor("alpha up", is("switchboard_upstream_up", map[string]string{"server": "alpha"}, 1))
	waitFor("alpha's ping latency", func(fams map[string]*dto.MetricFamily) bool {
		got, ok := value(fams, "switchboard_upstream_latency_seconds", map[string]string{"server": "alpha"})
		return ok && got > 0 && got < 5
	})

	calls := []toolcall.Request{
		{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "hi"}},
		{Server: "alpha", Tool: "fail", Source: toolcall.SourceGateway, Identity: "alice"},
		{Server: "nope", Tool: "echo"},
	}
	for _, req := range calls {
		_, _ = eng.Call(ctx, req)
	}
	waitFor("the calls counted", func(fams map[string]*dto.MetricFamily) bool {
		return is("switchboard_calls_total", map[string]string{"server": "alpha", "tool": "echo", "status": "success", "source": "cli"}, 1)(fams) &&
			is("switchboard_calls_total", map[string]string{"server": "alpha", "tool": "fail", "status": "error", "source": "gateway"}, 1)(fams) &&
			is("switchboard_calls_total", map[string]string{"server": "nope", "tool": "echo", "status": "error", "source": "cli"}, 1)(fams)
	})
	mu.Lock()
	if got := len(history); got != len(calls) {
		t.Errorf("history: got %d records, want %d", got, len(calls))
	}
	mu.Unlock()

	// A call in flight shows in calls_in_flight while it runs.
	callCtx, cancelCall := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = eng.Call(callCtx, toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 30}})
	}()
	waitFor("one call in flight", is("switchboard_calls_in_flight", nil, 1))
	cancelCall()
	<-done
	waitFor("no call in flight", is("switchboard_calls_in_flight", nil, 0))
	waitFor("the cancelled call counted",
		is("switchboard_calls_total", map[string]string{"server": "alpha", "tool": "slow", "status": "cancelled", "source": "cli"}, 1))

	eng.Stop()
	waitFor("calls stopped", is("switchboard_calls_stopped", nil, 1))
	eng.Resume()
	waitFor("calls resumed", is("switchboard_calls_stopped", nil, 0))
}
