package upstream

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TestApplyRetiresACallInFlight: a reload that removes or changes a
// server with a call in flight returns while the call still runs (it
// used to wait for the call to end on its own); the call is cancelled
// with the reload's cause once gateway.shutdown_timeout has passed, and
// the server's process is stopped. A pool that stops during that drain
// ends it: Run returns with the call cancelled and the process gone.
func TestApplyRetiresACallInFlight(t *testing.T) {
	for _, tc := range []struct {
		name    string
		next    []config.Server
		bound   time.Duration
		stop    bool // stop the pool during the drain
		wantMsg string
	}{
		{name: "removed", bound: 3 * time.Second, wantMsg: `a reload removed server "s", and the call did not finish within gateway.shutdown_timeout (3s)`},
		{name: "changed", bound: 3 * time.Second, next: []config.Server{markedServer(t, "s", "2")},
			wantMsg: `a reload changed server "s", and the call did not finish within gateway.shutdown_timeout (3s)`},
		{name: "stopped while draining", bound: 10 * time.Minute, stop: true,
			wantMsg: `a reload removed server "s", and switchboard stopped before the call finished`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			health := fastHealth()
			health.PingTimeout = 10 * time.Second
			cfg := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "s", "1")}}
			pool, err := NewPool(PoolOptions{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			stop := runPool(t, pool)
			c := waitConnected(t, pool, "s")["s"]
			var kid child
			eventually(t, 10*time.Second, "child s", func() bool { kid = children(t)["s"]; return kid.pid != 0 })

			mark := filepath.Join(t.TempDir(), "started")
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			ended := make(chan outcome, 1)
			go func() {
				res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow",
					Arguments: map[string]any{"seconds": 60, "mark": mark}}, nil)
				ended <- outcome{res, err}
			}()
			eventually(t, 10*time.Second, "the slow call to start", func() bool { _, err := os.Stat(mark); return err == nil })

			// A bound the reload itself never gets near: Apply must
			// return without waiting for it.
			next := &config.Config{Defaults: config.Defaults{Health: health}, Servers: tc.next}
			next.Gateway.ShutdownTimeout = tc.bound
			start := time.Now()
			if _, err := pool.Apply(context.Background(), next); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			took := time.Since(start)
			select {
			case o := <-ended:
				t.Fatalf("Apply returned after %s, once the call had ended (%v, %v); want it to return while the call runs", took, o.res, o.err)
			default:
			}
			t.Logf("Apply returned after %s with the call still in flight", took)
			if tc.next == nil {
				if _, err := pool.Client("s"); fault.KindOf(err) != fault.NotFound {
					t.Errorf("Client(s) after removal: got %v, want a not_found error", err)
				}
			}
			if tc.stop {
				stop() // checks that Run returns
			}

			var o outcome
			select {
			case o = <-ended:
			case <-time.After(30 * time.Second):
				t.Fatal("the call in flight on the retired session did not end within 30s")
			}
			fe := fault.As(o.err)
			if fe == nil || fe.Kind != fault.Cancelled || !strings.Contains(fe.Message, tc.wantMsg) {
				t.Fatalf("the call ended with %v (%v), want a cancelled error saying %q", o.err, o.res, tc.wantMsg)
			}
			eventually(t, 10*time.Second, "the old process to be reaped", func() bool { return gone(kid.pid) })
			// The server was told: its handler saw the call cancelled.
			if !strings.Contains(c.Stderr(), "slow: cancelled") {
				t.Errorf("the server's stderr does not say its call was cancelled:\n%s", c.Stderr())
			}
			eventually(t, 10*time.Second, "the retired connection to be closed", func() bool {
				select {
				case <-c.Done():
					return true
				default:
					return false
				}
			})
			if tc.next != nil {
				now := waitConnected(t, pool, "s")["s"]
				if now == c || now.Server().Env[envVersion] != "2" {
					t.Errorf("after the change: got client %p running version %q, want a new one running 2", now, now.Server().Env[envVersion])
				}
			}
			stop()
			eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
			eventually(t, 10*time.Second, "goroutines to return to the baseline", func() bool { return runtime.NumGoroutine() <= before+2 })
		})
	}
}

// TestApplyAgainWhileDraining: a reload that changes a server again
// while its first old session still drains starts the newest only once
// that session has closed (never two processes of the server at once),
// and never the one in between.
func TestApplyAgainWhileDraining(t *testing.T) {
	before := runtime.NumGoroutine()
	health := fastHealth()
	health.PingTimeout = 10 * time.Second
	cfg := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "s", "1")}}
	var old atomic.Int64 // the first process's pid, once known
	type connect struct {
		version string
		oldGone bool
	}
	connects := make(chan connect, 10)
	pool, err := NewPool(PoolOptions{Config: cfg, OnConnect: func(c *Client) {
		pid := int(old.Load())
		connects <- connect{c.Server().Env[envVersion], pid != 0 && gone(pid)}
	}})
	if err != nil {
		t.Fatal(err)
	}
	stop := runPool(t, pool)
	c := waitConnected(t, pool, "s")["s"]
	<-connects
	var kid child
	eventually(t, 10*time.Second, "child s", func() bool { kid = children(t)["s"]; return kid.pid != 0 })
	old.Store(int64(kid.pid))

	mark := filepath.Join(t.TempDir(), "started")
	ended := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow",
			Arguments: map[string]any{"seconds": 60, "mark": mark}}, nil)
		ended <- err
	}()
	eventually(t, 10*time.Second, "the slow call to start", func() bool { _, err := os.Stat(mark); return err == nil })

	for _, v := range []string{"2", "3"} {
		next := &config.Config{Defaults: config.Defaults{Health: health}, Servers: []config.Server{markedServer(t, "s", v)}}
		next.Gateway.ShutdownTimeout = 2 * time.Second
		if _, err := pool.Apply(context.Background(), next); err != nil {
			t.Fatalf("Apply (version %s): %v", v, err)
		}
	}
	select {
	case err := <-ended:
		t.Fatalf("the call ended (%v) before the reloads' bound", err)
	default:
	}
	if err := <-ended; fault.KindOf(err) != fault.Cancelled {
		t.Errorf("the call ended with %v, want it cancelled by the reload", err)
	}
	now := waitConnected(t, pool, "s")["s"]
	if v := now.Server().Env[envVersion]; v != "3" {
		t.Errorf("after two changes the server runs version %q, want 3", v)
	}
	got := <-connects
	if got.version != "3" || !got.oldGone {
		t.Errorf("the next connection after the first: version %q, first process gone %v; want version 3 once the first process was gone", got.version, got.oldGone)
	}
	stop()
	select {
	case got := <-connects:
		t.Errorf("another connection: version %q", got.version)
	default:
	}
	eventually(t, 10*time.Second, "child processes to be gone", func() bool { return len(childPIDs(t)) == 0 })
	eventually(t, 10*time.Second, "goroutines to return to the baseline", func() bool { return runtime.NumGoroutine() <= before+2 })
}
