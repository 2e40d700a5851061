package toolcall_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// nextConfig returns a copy of the fixture's configuration to change.
func (f *fixture) nextConfig() *config.Config {
	c := *f.pool.Config()
	c.Servers = slices.Clone(c.Servers)
	for i := range c.Servers {
		c.Servers[i].Env = maps.Clone(c.Servers[i].Env)
	}
	return &c
}

// goCall runs a call in the background; wait returns its outcome.
func (f *fixture) goCall(req toolcall.Request) (wait func() (*toolcall.Result, error)) {
	var res *toolcall.Result
	var err error
	done := make(chan struct{})
	go func() { defer close(done); res, err = f.eng.Call(context.Background(), req) }()
	return func() (*toolcall.Result, error) { <-done; return res, err }
}

func (f *fixture) waitStats(t *testing.T, what string, cond func(toolcall.Stats) bool) {
	t.Helper()
	eventually(t, 10*time.Second, what, func() bool { return cond(f.eng.Stats()) })
}

func TestSetConfigRequestTimeout(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	// A call started under the old 10 s timeout keeps it.
	inFlight := f.goCall(toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 2.5}})
	f.waitStats(t, "the slow call to be in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })

	next := f.nextConfig()
	next.Servers[0].RequestTimeout = time.Second
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	start := time.Now()
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 30}})
	if fault.KindOf(err) != fault.Timeout || !strings.Contains(err.Error(), "did not answer within 1s") {
		t.Fatalf("slow call after SetConfig: got %v, want a timeout at the new 1s", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %s, want about 1s", d)
	}
	if res, err := inFlight(); err != nil || textOf(res) != "done" {
		t.Errorf("call in flight during SetConfig: got %v, %v; want it done under its old timeout", res, err)
	}
}

// TestSetConfigRemovedServer reloads the pool, the catalog and the engine
// together, as the daemon does.
func TestSetConfigRemovedServer(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha"), okServer(t, "bravo")}, nil)
	if _, err := f.eng.Call(context.Background(), toolcall.Request{Server: "bravo", Tool: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
		t.Fatalf("call to bravo before the reload: %v", err)
	}
	next := f.nextConfig()
	next.Servers = next.Servers[:1]
	if err := f.eng.CheckConfig(next); err != nil {
		t.Fatalf("CheckConfig: %v", err)
	}
	if _, err := f.pool.Apply(context.Background(), next); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	f.cat.SetServers(next.Servers)
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "bravo", Tool: "echo", Arguments: map[string]any{"message": "x"}})
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.NotFound || !strings.Contains(fe.Message, `no server named "bravo" is configured`) {
		t.Fatalf("call to the removed bravo: got %v, want not_found saying it is not configured", err)
	}
	if got := strings.Join(fe.Suggestions, " "); !strings.Contains(got, "alpha") {
		t.Errorf("suggestions: got %q, want the configured alpha named", got)
	}
	if res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "still"}}); err != nil || textOf(res) != "still" {
		t.Errorf("call to the unchanged alpha: got %v, %v; want it answered", res, err)
	}
}

func TestSetConfigLimits(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	ctx := context.Background()
	echo := toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}}
	hold := func(ms int) toolcall.Request {
		return toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": ms}}
	}
	withLimits := func(change func(*config.Limits)) *config.Config {
		c := f.nextConfig()
		change(&c.Limits)
		return c
	}

	// Lowering max_concurrent: a new call over it fails fast.
	if err := f.eng.SetConfig(withLimits(func(l *config.Limits) { l.MaxConcurrent = 1 })); err != nil {
		t.Fatalf("SetConfig(max_concurrent 1): %v", err)
	}
	held := f.goCall(hold(3000))
	f.waitStats(t, "the hold call in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })
	if _, err := f.eng.Call(ctx, echo); fault.KindOf(err) != fault.LimitExceeded || !strings.Contains(err.Error(), "1 calls are already in flight") {
		t.Fatalf("second call under max_concurrent 1: got %v, want limit_exceeded naming 1", err)
	}

	// Raising it: the next call goes through while the first still runs.
	if err := f.eng.SetConfig(withLimits(func(l *config.Limits) { l.MaxConcurrent = 2 })); err != nil {
		t.Fatalf("SetConfig(max_concurrent 2): %v", err)
	}
	if _, err := f.eng.Call(ctx, echo); err != nil {
		t.Fatalf("second call under max_concurrent 2: %v", err)
	}

	// A call queued under max_concurrent 1 is admitted when the limit grows.
	if err := f.eng.SetConfig(withLimits(func(l *config.Limits) {
		l.MaxConcurrent, l.QueueWait, l.MaxQueue = 1, 20*time.Second, 10
	})); err != nil {
		t.Fatalf("SetConfig(queue): %v", err)
	}
	queued := f.goCall(echo)
	f.waitStats(t, "a queued call", func(s toolcall.Stats) bool { return s.Waiting == 1 })
	start := time.Now()
	if err := f.eng.SetConfig(withLimits(func(l *config.Limits) {
		l.MaxConcurrent, l.QueueWait, l.MaxQueue = 2, 20*time.Second, 10
	})); err != nil {
		t.Fatalf("SetConfig(max_concurrent 2 again): %v", err)
	}
	if _, err := queued(); err != nil {
		t.Fatalf("queued call: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the queued call waited %s after the limit grew, want it admitted at once", d)
	}
	if _, err := held(); err != nil {
		t.Fatalf("hold call: %v", err)
	}
	f.waitStats(t, "nothing in flight", func(s toolcall.Stats) bool { return s.InFlight == 0 && s.Waiting == 0 })

	// A per-server max_concurrent can be added by a reload too.
	next := f.nextConfig()
	next.Servers[0].MaxConcurrent = 1
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatalf("SetConfig(server max_concurrent 1): %v", err)
	}
	held = f.goCall(hold(2000))
	f.waitStats(t, "the hold call in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })
	if _, err := f.eng.Call(ctx, echo); fault.KindOf(err) != fault.LimitExceeded || !strings.Contains(err.Error(), "its max_concurrent") {
		t.Errorf("call over the server's new max_concurrent: got %v, want limit_exceeded naming it", err)
	}
	if _, err := held(); err != nil {
		t.Fatalf("hold call: %v", err)
	}
}

func TestCheckConfigRefuses(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	tests := []struct {
		name   string
		change func(*config.Config)
		field  string
	}{
		{"negative max_concurrent", func(c *config.Config) { c.Limits.MaxConcurrent = -1 }, "limits.max_concurrent"},
		{"negative max_queue", func(c *config.Config) { c.Limits.MaxQueue = -5 }, "limits.max_queue"},
		{"negative queue_wait", func(c *config.Config) { c.Limits.QueueWait = -time.Second }, "limits.queue_wait"},
		{"session_limit below -1", func(c *config.Config) { c.Limits.SessionLimit = -2 }, "limits.session_limit"},
		{"negative server max_concurrent", func(c *config.Config) { c.Servers[0].MaxConcurrent = -1 }, "servers.alpha.max_concurrent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := f.nextConfig()
			tt.change(next)
			for what, err := range map[string]error{"CheckConfig": f.eng.CheckConfig(next), "SetConfig": f.eng.SetConfig(next)} {
				if fault.KindOf(err) != fault.Config || !strings.Contains(err.Error(), tt.field) {
					t.Errorf("%s: got %v, want a config error naming %s", what, err, tt.field)
				}
			}
			// Nothing changed: calls still go through under the old limits.
			if _, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
				t.Errorf("call after a refused SetConfig: %v", err)
			}
		})
	}
	if err := f.eng.CheckConfig(nil); fault.KindOf(err) != fault.Config {
		t.Errorf("CheckConfig(nil): got %v, want a config error", err)
	}
}

func TestSetConfigSecrets(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	const secret = "reloaded-secret-value-77"
	req := toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "key " + secret}}
	res, err := f.eng.Call(context.Background(), req)
	if err != nil || !strings.Contains(textOf(res), secret) {
		t.Fatalf("before the reload: got %v, %v; want the text unredacted", res, err)
	}
	next := f.nextConfig()
	next.Servers[0].RedactResults = true
	next.Servers[0].Env["RELOADED_TOKEN"] = secret
	next.Servers[0].Secrets = []string{"RELOADED_TOKEN"}
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatalf("SetConfig: %v", err)
	}
	res, err = f.eng.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); strings.Contains(got, secret) || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("after the reload: got %q, want the new secret redacted", got)
	}
	if got := f.eng.Redactor().String(secret); strings.Contains(got, secret) {
		t.Errorf("Redactor() after the reload: got %q, want the new secret redacted", got)
	}
}

// TestSetConfigRaces changes the configuration while calls run; run it
// with -race.
func TestSetConfigRaces(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 4 {
		wg.Go(func() {
			for range 10 {
				_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}})
				if err != nil && fault.KindOf(err) != fault.LimitExceeded {
					errs <- err
				}
				_ = f.eng.Redactor()
				_ = f.eng.Stats()
			}
		})
	}
	for i := range 20 {
		next := f.nextConfig()
		next.Limits.MaxConcurrent = 1 + i%3
		next.Servers[0].MaxConcurrent = i % 2
		next.Servers[0].RedactResults = i%2 == 0
		if err := f.eng.SetConfig(next); err != nil {
			t.Fatalf("SetConfig %d: %v", i, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("call during SetConfig: %v", err)
	}
	if st := f.eng.Stats(); st.InFlight != 0 || st.Waiting != 0 {
		t.Errorf("after the calls: got %+v, want nothing in flight or waiting", st)
	}
}
