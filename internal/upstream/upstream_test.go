package upstream

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

func dial(t *testing.T, srv config.Server) *Client {
	t.Helper()
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err != nil {
		t.Fatalf("Dial(%s): %v", srv.Name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestDialStdio(t *testing.T) {
	t.Parallel()
	c := dial(t, testserver.Server(t, "ok", "ok"))
	ctx := context.Background()

	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if len(tools) < 5 {
		t.Fatalf("got %d tools, want at least 5", len(tools))
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}, nil)
	if err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if got := textOf(t, res); got != "hi" {
		t.Errorf("echo: got %q, want %q", got, "hi")
	}

	// Progress notifications reach the caller's callback, in order.
	var mu sync.Mutex
	var seen []float64
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 5}},
		func(p *mcp.ProgressNotificationParams) {
			mu.Lock()
			seen = append(seen, p.Progress)
			mu.Unlock()
		})
	if err != nil {
		t.Fatalf("CallTool(progress): %v", err)
	}
	if got := textOf(t, res); got != "5 steps" {
		t.Errorf("progress: got %q, want %q", got, "5 steps")
	}
	// The SDK hands the response to the caller directly but notifications
	// through a handler, so the last ones can arrive after the result (and
	// are then dropped). What did arrive must be in order.
	mu.Lock()
	if len(seen) == 0 {
		t.Errorf("progress: got no notifications, want some")
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Errorf("progress out of order: %v", seen)
		}
	}
	mu.Unlock()

	// Binary content arrives byte for byte.
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "image"}, nil)
	if err != nil {
		t.Fatalf("CallTool(image): %v", err)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || !bytes.Equal(img.Data, testserver.PNG) || img.MIMEType != "image/png" {
		t.Errorf("image: got %#v, want the PNG bytes", res.Content[0])
	}

	lat, err := c.Ping(ctx)
	if err != nil || lat <= 0 {
		t.Errorf("Ping: got %v, %v; want a positive latency", lat, err)
	}
}

// TestFaults checks that each misbehaving server gives the right kind of
// error, with the server's own words from stderr where there are any.
func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mode     string
		env      []string
		timeout  time.Duration
		wantKind fault.Kind
		wantMsg  []string
	}{
		// The exit ends the wait, not the timeout: 20 s is longer than a
		// loaded machine takes to start the child (5 s was not), and longer
		// than the 10 s within which the failure must come.
		{"exit at start", "exit", nil, 20 * time.Second, fault.Connection, []string{"fatal: missing API key GIZMO_TOKEN"}},
		// A line that is no MCP message is skipped (stdout.go): a server
		// that writes nothing else never completes the handshake (5 s: on
		// a loaded machine the child may take seconds to write its line).
		{"garbage on stdout", "garbage", nil, 5 * time.Second, fault.Timeout, []string{"oops: printed a banner to stdout", "this is not JSON-RPC at all"}},
		{"never answers", "hang", nil, 300 * time.Millisecond, fault.Timeout, []string{"did not complete the MCP handshake within 300ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.Server(t, "bad", tt.mode, tt.env...)
			srv.ConnectTimeout = tt.timeout
			start := time.Now()
			c, err := Dial(context.Background(), srv, DialOptions{})
			if err == nil {
				c.Close()
				t.Fatalf("Dial succeeded, want a %s error", tt.wantKind)
			}
			if got := fault.KindOf(err); got != tt.wantKind {
				t.Errorf("kind: got %s, want %s (err: %v)", got, tt.wantKind, err)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("failing took %s; want a prompt failure", d)
			}
		})
	}

	t.Run("stderr with a secret", func(t *testing.T) {
		const secret = "supersecretvalue123"
		fe := dialFault(t, testserver.Server(t, "leaky", "leak-secret", "GIZMO_TOKEN="+secret))
		stderr, _ := fe.Details["stderr"].(string)
		for what, s := range map[string]string{"message": fe.Message, "details.stderr": stderr} {
			if strings.Contains(s, secret) || !strings.Contains(s, "token is [REDACTED]") {
				t.Errorf("%s: got %q, want the server's words with its secret env value redacted", what, s)
			}
		}
	})

	t.Run("slow start within the timeout", func(t *testing.T) {
		srv := testserver.Server(t, "slow", "slow-start", testserver.EnvDelay+"=300ms")
		c := dial(t, srv)
		if _, err := c.ListTools(context.Background()); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
	})

	t.Run("crash during a call", func(t *testing.T) {
		c := dial(t, testserver.Server(t, "crashy", "ok"))
		_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "crash"}, nil)
		if got := fault.KindOf(err); got != fault.Connection {
			t.Fatalf("kind: got %s, want connection (err: %v)", got, err)
		}
		// The call's own error says how the server ended, not the
		// SDK's `calling "tools/call": EOF`.
		for _, w := range []string{"exited with code 2", "panic: crashing on purpose"} {
			if !strings.Contains(fault.As(err).Message, w) {
				t.Errorf("the call's error %q does not say %q", fault.As(err).Message, w)
			}
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed after the server exited")
		}
		end := c.Err()
		for _, w := range []string{"exited with code 2", "panic: crashing on purpose"} {
			if end == nil || !strings.Contains(end.Error(), w) {
				t.Errorf("end error %v does not contain %q", end, w)
			}
		}
	})

	t.Run("cancellation reaches the server", func(t *testing.T) {
		c := dial(t, testserver.Server(t, "slow", "ok"))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 30}}, nil)
		if got := fault.KindOf(err); got != fault.Timeout {
			t.Fatalf("kind: got %s, want timeout (err: %v)", got, err)
		}
		eventually(t, 5*time.Second, "the server to log its cancellation", func() bool {
			return strings.Contains(c.Stderr(), "slow: cancelled")
		})
	})
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fastHealth() config.Health {
	return config.Health{
		PingInterval: 50 * time.Millisecond,
		PingTimeout:  200 * time.Millisecond,
		Backoff:      []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond},
		MaxFailures:  3,
	}
}

// runSupervisor starts s and stops it at cleanup, checking it returned.
func runSupervisor(t *testing.T, s *Supervisor) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("supervisor did not stop")
		}
	})
}

func waitSnapshot(t *testing.T, s *Supervisor, d time.Duration, what string, cond func(Snapshot) bool) Snapshot {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		ch := s.Changed()
		snap := s.Snapshot()
		if cond(snap) {
			return snap
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out waiting for %s; last snapshot: %+v", what, snap)
		}
	}
}

func TestSupervisorAutoDisableAndEnable(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	store := NewMemoryStore()
	var mu sync.Mutex
	var states []State
	s := NewSupervisor(SupervisorOptions{
		Server: testserver.Server(t, "flaky", "flaky", testserver.EnvFlag+"="+flag),
		Health: fastHealth(),
		Store:  store,
		OnChange: func(sn Snapshot) {
			mu.Lock()
			if len(states) == 0 || states[len(states)-1] != sn.State {
				states = append(states, sn.State)
			}
			mu.Unlock()
		},
	})
	runSupervisor(t, s)

	snap := waitSnapshot(t, s, 20*time.Second, "auto-disable", func(sn Snapshot) bool { return sn.AutoDisabled })
	if snap.Enabled || snap.AutoDisabledAt.IsZero() || !strings.Contains(snap.LastError, "flaky: refusing to start") {
		t.Errorf("auto-disabled snapshot: got %+v, want disabled with time and the stderr in the last error", snap)
	}
	// The first failure plus one per reconnect attempt.
	if snap.ConsecutiveFailures != 4 {
		t.Errorf("consecutive failures: got %d, want 4", snap.ConsecutiveFailures)
	}
	rec, err := store.LoadState(context.Background(), "flaky")
	if err != nil || !rec.AutoDisabled || !rec.Disabled || rec.LastError == "" {
		t.Errorf("persisted record: got %+v, %v; want auto-disabled with the last error", rec, err)
	}
	if _, err := s.Client(); fault.KindOf(err) != fault.Connection || !strings.Contains(err.Error(), "auto-disabled") {
		t.Errorf("Client() of an auto-disabled server: got %v, want a connection error saying auto-disabled", err)
	}

	// Fix the cause and re-enable: the counters reset and it connects.
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if err := s.Enable(context.Background()); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	snap = waitSnapshot(t, s, 10*time.Second, "connected after enable", func(sn Snapshot) bool { return sn.State == StateConnected })
	if snap.ConsecutiveFailures != 0 || snap.AutoDisabled || !snap.Enabled {
		t.Errorf("after enable: got %+v, want counters reset", snap)
	}
	mu.Lock()
	got := append([]State(nil), states...)
	mu.Unlock()
	if got[0] != StateConnecting || got[1] != StateError {
		t.Errorf("state sequence: got %v, want connecting, error, ...", got)
	}
}

func TestSupervisorNoticesDeathAtOnce(t *testing.T) {
	t.Parallel()
	health := fastHealth()
	health.PingInterval = time.Hour // death must be noticed without a ping
	// The process dies when the test creates the flag (not after a fixed
	// time, which a loaded machine can spend starting it).
	flag := filepath.Join(t.TempDir(), "die")
	s := NewSupervisor(SupervisorOptions{
		Server: testserver.Server(t, "mortal", "die-on-flag", testserver.EnvFlag+"="+flag),
		Health: health,
	})
	runSupervisor(t, s)
	waitSnapshot(t, s, 10*time.Second, "connected", func(sn Snapshot) bool { return sn.State == StateConnected })
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	snap := waitSnapshot(t, s, 10*time.Second, "error after the process died", func(sn Snapshot) bool { return sn.State == StateError })
	if !strings.Contains(snap.LastError, "exited with code 2") || !strings.Contains(snap.Stderr, "panic: simulated crash") {
		t.Errorf("after death: last error %q, stderr %q; want the exit status and the stderr", snap.LastError, snap.Stderr)
	}
	// It reconnects (the dead process took the flag with it).
	waitSnapshot(t, s, 10*time.Second, "reconnected", func(sn Snapshot) bool { return sn.State == StateConnected })
}

func TestSupervisorPingFailure(t *testing.T) {
	t.Parallel()
	health := fastHealth()
	health.MaxFailures = 1
	s := NewSupervisor(SupervisorOptions{
		Server: testserver.Server(t, "frozen", "freeze"),
		Health: health,
	})
	runSupervisor(t, s)
	// The server answers two pings and freezes at the third. A failure
	// before any ping was answered is the machine being slow (a 200 ms
	// timeout on a loaded machine), not the freeze: the supervisor
	// reconnects and the next process freezes in its turn.
	snap := waitSnapshot(t, s, 20*time.Second, "a ping failure after answered pings", func(sn Snapshot) bool {
		return sn.State == StateError && strings.Contains(sn.LastError, "ping") && !sn.LastPingAt.IsZero()
	})
	if !strings.Contains(snap.LastError, "no answer within 200ms") {
		t.Errorf("last error: got %q, want it to name the ping timeout", snap.LastError)
	}
	if snap.Latency <= 0 {
		t.Errorf("pings before the freeze: got latency %v, want recorded", snap.Latency)
	}
}

func TestSupervisorDisable(t *testing.T) {
	t.Parallel()
	s := NewSupervisor(SupervisorOptions{Server: testserver.Server(t, "ok", "ok"), Health: fastHealth()})
	runSupervisor(t, s)
	waitSnapshot(t, s, 10*time.Second, "connected", func(sn Snapshot) bool { return sn.State == StateConnected })
	if err := s.Disable(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, s, 10*time.Second, "disconnected", func(sn Snapshot) bool { return sn.State == StateDisconnected })
	if _, err := s.Client(); err == nil || !strings.Contains(err.Error(), "switchboard servers enable ok") && !strings.Contains(strings.Join(fault.As(err).Suggestions, " "), "servers enable ok") {
		t.Errorf("Client() of a disabled server: got %v, want a hint to enable it", err)
	}
	if err := s.Enable(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitSnapshot(t, s, 10*time.Second, "connected again", func(sn Snapshot) bool { return sn.State == StateConnected })
}

// TestShutdownLeavesNothing runs a pool of several servers, stops it, and
// checks that no goroutine and no child process is left behind.
func TestShutdownLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := &config.Config{Defaults: config.Defaults{Health: fastHealth()}}
	for i := range 4 {
		cfg.Servers = append(cfg.Servers, testserver.Server(t, "s"+strconv.Itoa(i), "ok"))
	}
	cfg.Servers = append(cfg.Servers, testserver.Server(t, "dead", "exit"))
	pool, err := NewPool(PoolOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = pool.Run(ctx) }()
	if err := pool.WaitSettled(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := pool.WaitConnected(context.Background(), "s"+strconv.Itoa(i), 10*time.Second); err != nil {
			t.Fatalf("s%d: %v", i, err)
		}
	}
	if len(childPIDs(t)) < 4 {
		t.Fatalf("got %d child processes, want at least 4 while running", len(childPIDs(t)))
	}
	cancel()
	<-done
	eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
	eventually(t, 10*time.Second, "goroutines to return to the baseline", func() bool { return runtime.NumGoroutine() <= before+2 })
}

// childPIDs lists the live (non-zombie) children of this process.
func childPIDs(t *testing.T) []int {
	t.Helper()
	me := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out = append(out, pid)
		}
	}
	return out
}
