package upstream

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Environment markers that let a test find a server's child process.
const (
	envName    = "SB_TEST_NAME"
	envVersion = "SB_TEST_VERSION"
)

// markedServer is an "ok" test server whose child carries its name and a
// version in its environment.
func markedServer(t *testing.T, name, version string) config.Server {
	return testserver.Server(t, name, "ok", envName+"="+name, envVersion+"="+version)
}

// children maps the name marker of each live child of this process to its
// pid and version marker.
func children(t *testing.T) map[string]child {
	t.Helper()
	out := map[string]child{}
	for _, pid := range childPIDs(t) {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue // exited meanwhile
		}
		var c child
		c.pid = pid
		for _, kv := range strings.Split(string(data), "\x00") {
			if v, ok := strings.CutPrefix(kv, envName+"="); ok {
				c.name = v
			}
			if v, ok := strings.CutPrefix(kv, envVersion+"="); ok {
				c.version = v
			}
		}
		if c.name != "" {
			out[c.name] = c
		}
	}
	return out
}

type child struct {
	pid           int
	name, version string
}

// gone reports whether pid has exited and been reaped.
func gone(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return os.IsNotExist(err)
}

// runPool runs p and returns a stop function that cancels Run and checks
// that it returned.
func runPool(t *testing.T, p *Pool) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Error("Pool.Run did not return within 20s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitConnected(t *testing.T, p *Pool, names ...string) map[string]*Client {
	t.Helper()
	out := map[string]*Client{}
	for _, n := range names {
		c, err := p.WaitConnected(context.Background(), n, 20*time.Second)
		if err != nil {
			t.Fatalf("waiting for %s to connect: %v", n, err)
		}
		out[n] = c
	}
	return out
}

func TestApply(t *testing.T) {
	before := runtime.NumGoroutine()
	// Pings a busy machine answers in time: one ping unanswered within
	// fastHealth's 200ms ends a's connection, and the reconnect would be
	// taken for Apply's doing.
	health := fastHealth()
	health.PingTimeout = 10 * time.Second
	cfg := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
		markedServer(t, "a", "1"), markedServer(t, "b", "1"), markedServer(t, "c", "1"),
	}}
	// a must never leave the connected state once it has got there.
	var mu sync.Mutex
	aConnected, aLeft := false, []State(nil)
	connects := map[string]int{}
	pool, err := NewPool(PoolOptions{
		Config: cfg,
		OnChange: func(s Snapshot) {
			if s.Server != "a" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if s.State == StateConnected {
				aConnected = true
			} else if aConnected {
				aLeft = append(aLeft, s.State)
			}
		},
		OnConnect: func(c *Client) {
			mu.Lock()
			connects[c.Server().Name]++
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := runPool(t, pool)
	old := waitConnected(t, pool, "a", "b", "c")
	var kids map[string]child
	eventually(t, 10*time.Second, "children a, b and c", func() bool {
		kids = children(t)
		return len(kids) == 3
	})

	next := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
		markedServer(t, "d", "1"), markedServer(t, "a", "1"), markedServer(t, "b", "2"),
	}}
	next.Servers[1].Pos = config.Pos{File: "other.yaml", Line: 42} // Pos alone is no change
	got, err := pool.Apply(context.Background(), next)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := Changes{Added: []string{"d"}, Removed: []string{"c"}, Changed: []string{"b"}, Unchanged: []string{"a"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Apply changes (-want +got):\n%s", diff)
	}
	// Apply returns once the old connections are closed: c's and the old
	// b's processes are reaped by then.
	for _, n := range []string{"b", "c"} {
		if !gone(kids[n].pid) {
			t.Errorf("old %s (pid %d) still exists after Apply returned, want it reaped", n, kids[n].pid)
		}
		select {
		case <-old[n].Done():
		default:
			t.Errorf("old %s connection not closed after Apply returned", n)
		}
	}
	if _, err := pool.Client("c"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("Client(c) after removal: got %v, want a not_found error", err)
	}
	if got, want := pool.Names(), []string{"d", "a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("Names: got %v, want %v", got, want)
	}
	if pool.Config() != next {
		t.Errorf("Config: got %p, want the applied %p", pool.Config(), next)
	}

	now := waitConnected(t, pool, "a", "b", "d")
	if now["a"] != old["a"] {
		t.Errorf("Client(a): got a new connection %p, want the same %p", now["a"], old["a"])
	}
	select {
	case <-old["a"].Done():
		t.Errorf("a's connection closed by Apply: %v", old["a"].Err())
	default:
	}
	if now["b"] == old["b"] {
		t.Errorf("Client(b): got the old connection, want a new one")
	}
	if v := now["b"].Server().Env[envVersion]; v != "2" {
		t.Errorf("b's new connection runs version %q, want 2", v)
	}
	eventually(t, 10*time.Second, "children a, b (version 2) and d", func() bool {
		kids2 := children(t)
		return len(kids2) == 3 && kids2["a"].pid == kids["a"].pid && kids2["b"].version == "2" && kids2["d"].pid != 0
	})
	// The supervisor hands out a new client before it calls OnConnect:
	// wait for b's second and d's first, then check that no more came.
	counted := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return connects["b"] >= 2 && connects["d"] >= 1
	}
	eventually(t, 10*time.Second, "OnConnect for b's new connection and d's", counted)
	mu.Lock()
	if len(aLeft) > 0 {
		t.Errorf("a left the connected state during Apply: %v", aLeft)
	}
	if connects["a"] != 1 || connects["b"] != 2 || connects["c"] != 1 || connects["d"] != 1 {
		t.Errorf("OnConnect counts: got %v, want a:1 b:2 c:1 d:1", connects)
	}
	mu.Unlock()

	stop()
	eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
	eventually(t, 10*time.Second, "goroutines to return to the baseline", func() bool { return runtime.NumGoroutine() <= before+2 })
}

// TestApplyRaces applies configurations over and over while other
// goroutines use the pool; run it with -race.
func TestApplyRaces(t *testing.T) {
	health := fastHealth()
	cfgs := []*config.Config{
		{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "a", "1"), markedServer(t, "b", "1")}},
		{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "a", "1"), markedServer(t, "b", "2"), markedServer(t, "c", "1")}},
		{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "c", "2"), markedServer(t, "a", "1")}},
	}
	pool, err := NewPool(PoolOptions{Config: cfgs[0]})
	if err != nil {
		t.Fatal(err)
	}
	stop := runPool(t, pool)
	waitConnected(t, pool, "a")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls [4]atomic.Int64 // per goroutine, to show each one ran while configurations were applied
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				for _, name := range []string{"a", "b", "c"} {
					if c, err := pool.Client(name); err == nil {
						_ = c.Server()
					}
					if s, ok := pool.Supervisor(name); ok {
						_ = s.Snapshot()
					}
				}
				for _, s := range pool.Snapshots() {
					_ = s.State
				}
				_ = pool.Names()
				_ = pool.Config()
				if i == 0 {
					wctx, wcancel := context.WithTimeout(ctx, 20*time.Millisecond)
					_, _ = pool.WaitConnected(wctx, "b", 20*time.Millisecond)
					wcancel()
				}
				calls[i].Add(1)
			}
		}()
	}
	// At least two cycles of the three configurations, and as many more
	// as it takes for every goroutine to have used the pool while they
	// were applied (on a loaded machine six rounds can end before one of
	// them is scheduled); whole cycles, so the last one applied is
	// cfgs[0] again.
	var before [4]int64
	for i := range calls {
		before[i] = calls[i].Load()
	}
	ran := func() bool {
		for i := range calls {
			if calls[i].Load() == before[i] {
				return false
			}
		}
		return true
	}
	for round := 0; round < 6 || (round%len(cfgs) != 0 || !ran()) && round < 600; round++ {
		cfg := cfgs[(round+1)%len(cfgs)]
		if _, err := pool.Apply(context.Background(), cfg); err != nil {
			t.Fatalf("Apply round %d: %v", round, err)
		}
	}
	cancel()
	wg.Wait()
	for i := range calls {
		if calls[i].Load() == before[i] {
			t.Errorf("goroutine %d made no calls while configurations were applied, want some", i)
		}
	}
	// The last applied configuration is cfgs[0] again: a and b serve.
	waitConnected(t, pool, "a", "b")
	if _, err := pool.Client("c"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("Client(c): got %v, want not_found", err)
	}
	stop()
	eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
}

// TestApplyKeepsDisableState checks that a server a user disabled stays
// disabled through Apply, whether its configuration changed or not.
func TestApplyKeepsDisableState(t *testing.T) {
	health := fastHealth()
	cfg := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
		markedServer(t, "same", "1"), markedServer(t, "edited", "1"),
	}}
	pool, err := NewPool(PoolOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	runPool(t, pool)
	waitConnected(t, pool, "same", "edited")
	for _, n := range []string{"same", "edited"} {
		s, _ := pool.Supervisor(n)
		if err := s.Disable(context.Background()); err != nil {
			t.Fatalf("Disable(%s): %v", n, err)
		}
		waitSnapshot(t, s, 10*time.Second, n+" disconnected", func(sn Snapshot) bool { return sn.State == StateDisconnected })
	}
	next := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
		markedServer(t, "same", "1"), markedServer(t, "edited", "2"),
	}}
	ch, err := pool.Apply(context.Background(), next)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if want := (Changes{Changed: []string{"edited"}, Unchanged: []string{"same"}}); !cmp.Equal(ch, want) {
		t.Fatalf("Apply changes: got %+v, want %+v", ch, want)
	}
	for _, n := range []string{"same", "edited"} {
		s, _ := pool.Supervisor(n)
		snap := waitSnapshot(t, s, 10*time.Second, n+" disabled and disconnected", func(sn Snapshot) bool {
			return !sn.Enabled && sn.State == StateDisconnected
		})
		if snap.DisabledReason != "disabled by a user" {
			t.Errorf("%s disabled reason: got %q, want %q", n, snap.DisabledReason, "disabled by a user")
		}
		if _, err := pool.Client(n); err == nil || !strings.Contains(err.Error(), "is disabled") {
			t.Errorf("Client(%s): got %v, want a disabled error", n, err)
		}
	}
	if got := children(t); len(got) != 0 {
		t.Errorf("children of disabled servers: got %v, want none", got)
	}
}

// TestApplyBeforeRun checks that Apply before Run only swaps the servers,
// and that a change of the health defaults changes every server. The
// applies are steps of one sequence, each on the pool the one before left,
// not subtests: a subtest that does not run (-run naming another, or
// -failfast after any failure) would leave the pool without e, and the
// end would fail with 'no server named "e"', hiding the cause.
func TestApplyBeforeRun(t *testing.T) {
	health := fastHealth()
	cfg := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
		markedServer(t, "a", "1"), markedServer(t, "b", "1"),
	}}
	pool, err := NewPool(PoolOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	slower := health
	slower.PingInterval = time.Second
	steps := []struct {
		name string
		cfg  *config.Config
		want Changes
	}{
		{"same", &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{
			markedServer(t, "a", "1"), markedServer(t, "b", "1")}},
			Changes{Unchanged: []string{"a", "b"}}},
		{"health changed", &config.Config{Defaults: config.Defaults{Health: slower}, Servers: []config.Server{
			markedServer(t, "a", "1"), markedServer(t, "b", "1")}},
			Changes{Changed: []string{"a", "b"}}},
		{"request timeout only", &config.Config{Defaults: config.Defaults{Health: slower, RequestTimeout: time.Minute}, Servers: []config.Server{
			markedServer(t, "a", "1"), markedServer(t, "e", "1")}},
			Changes{Added: []string{"e"}, Removed: []string{"b"}, Unchanged: []string{"a"}}},
	}
	for _, st := range steps {
		got, err := pool.Apply(context.Background(), st.cfg)
		if err != nil {
			t.Fatalf("%s: Apply: %v", st.name, err)
		}
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", st.name, diff)
		}
	}
	if got := children(t); len(got) != 0 {
		t.Fatalf("children before Run: got %v, want none", got)
	}
	stop := runPool(t, pool)
	waitConnected(t, pool, "a", "e")
	stop()
	eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
}
