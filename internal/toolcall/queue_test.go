package toolcall_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// TestBurstQueuesByDefault fires 64 callers, each making calls back to
// back, at the default limits (max_concurrent 25, queue_wait "timeout"):
// the calls over the limit wait for a slot instead of failing, so every
// call succeeds, and the server never sees more than 25 at once.
func TestBurstQueuesByDefault(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) {
		c.Limits = config.Default().Limits
	})
	if got := f.pool.Config().Limits.QueueWait; got != config.QueueWaitCallTimeout {
		t.Fatalf("the default queue_wait is %s, want the call's timeout", config.FormatQueueWait(got))
	}
	const callers, each = 64, 5
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []error
	var sawWaiting bool
	for range callers {
		wg.Go(func() {
			for range each {
				_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 20}})
				mu.Lock()
				if err != nil {
					failures = append(failures, err)
				}
				if f.eng.Stats().Waiting > 0 {
					sawWaiting = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d calls failed, want none (the first: %v)", len(failures), callers*each, failures[0])
	}
	if !sawWaiting {
		t.Error("no call ever waited for a slot; the burst did not test the queue")
	}
	if n := len(f.rec.all()); n != callers*each {
		t.Errorf("records: got %d, want %d", n, callers*each)
	}
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "maxseen"})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(textOf(res)); err != nil || n > config.DefaultMaxConcurrent || n < 2 {
		t.Errorf("the server saw %q concurrent calls, want between 2 and %d", textOf(res), config.DefaultMaxConcurrent)
	}
	if st := f.eng.Stats(); st.InFlight != 0 || st.Waiting != 0 {
		t.Errorf("after the burst: %+v, want nothing in flight or waiting", st)
	}
}

// TestQueueRefusals checks the three ways a call over a limit fails, each
// saying which and naming the key to raise: the queue is full, the wait
// ran out at the call's timeout, and the wait ran out at queue_wait.
func TestQueueRefusals(t *testing.T) {
	srv := okServer(t, "alpha")
	f := newFixture(t, []config.Server{srv}, func(c *config.Config) {
		c.Limits.MaxConcurrent, c.Limits.MaxQueue, c.Limits.QueueWait = 1, 1, config.QueueWaitCallTimeout
	})
	hold := toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 4000}}
	echo := toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}, Timeout: time.Second}
	held := f.goCall(hold)
	f.waitStats(t, "the hold call in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })

	// One call may wait; it gives up at its own timeout (1s).
	start := time.Now()
	waiting := f.goCall(echo)
	f.waitStats(t, "a waiting call", func(s toolcall.Stats) bool { return s.Waiting == 1 })

	// The next finds the queue full, at once.
	_, err := f.eng.Call(context.Background(), echo)
	wantLimit(t, "a call over a full queue", err, "limits.max_queue", "queue of calls waiting for a slot is full", "raise limits.max_queue")

	_, err = waiting()
	wantLimit(t, "a call that waited its whole timeout", err, "limits.max_concurrent", "within the call's timeout (1s)", "raise the server's request_timeout")
	if d := time.Since(start); d < time.Second || d > 3*time.Second {
		t.Errorf("the waiting call failed after %s, want after its 1s timeout", d)
	}

	// With queue_wait set, that bounds the wait (and names the key).
	// A server's own max_concurrent is named when that is the limit met.
	next := f.nextConfig()
	next.Limits.MaxConcurrent, next.Limits.QueueWait = 25, 200*time.Millisecond
	next.Servers[0].MaxConcurrent = 1
	if err := f.eng.SetConfig(next); err != nil {
		t.Fatal(err)
	}
	held2 := f.goCall(toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 2000}})
	f.waitStats(t, "two hold calls in flight", func(s toolcall.Stats) bool { return s.InFlight == 2 })
	_, err = f.eng.Call(context.Background(), echo)
	wantLimit(t, "a call that waited queue_wait", err, "servers.alpha.max_concurrent", "within limits.queue_wait (200ms)", "raise limits.queue_wait")
	if _, err := held2(); err != nil {
		t.Fatal(err)
	}

	recs := f.rec.all()
	var refused int
	for _, r := range recs {
		if r.ErrorKind == string(fault.LimitExceeded) {
			refused++
		}
	}
	if refused != 3 {
		t.Errorf("history has %d limit_exceeded calls, want 3: %+v", refused, recs)
	}
	if _, err := held(); err != nil {
		t.Fatal(err)
	}
}

func wantLimit(t *testing.T, what string, err error, limit string, wants ...string) {
	t.Helper()
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.LimitExceeded {
		t.Fatalf("%s: got %v, want limit_exceeded", what, err)
	}
	if got := fe.Details["limit"]; got != limit {
		t.Errorf("%s: details.limit is %v, want %s", what, got, limit)
	}
	text := fe.Message + " " + strings.Join(fe.Suggestions, "; ")
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s: %q does not say %q", what, text, w)
		}
	}
}

// TestTimeoutCoversTheWait: the wait for a slot counts against the call's
// timeout, and a call that times out after waiting says how long it
// waited.
func TestTimeoutCoversTheWait(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) {
		c.Limits.MaxConcurrent, c.Limits.QueueWait = 1, config.QueueWaitCallTimeout
	})
	held := f.goCall(toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 1500}})
	f.waitStats(t, "the hold call in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })
	start := time.Now()
	_, err := f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "slow", Arguments: map[string]any{"seconds": 30}, Timeout: 2 * time.Second})
	if fe := fault.As(err); fe == nil || fe.Kind != fault.Timeout || !strings.Contains(fe.Message, "of it waiting for a slot") {
		t.Fatalf("a call that waited, then ran out of time: got %v, want a timeout saying how long it waited", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call ended after %s, want within its 2s timeout (the wait included)", d)
	}
	if _, err := held(); err != nil {
		t.Fatal(err)
	}
}

// TestStopEndsWaitingCalls: the stop switch ends calls waiting for a slot
// at once, as well as those in flight.
func TestStopEndsWaitingCalls(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha")}, func(c *config.Config) {
		c.Limits.MaxConcurrent, c.Limits.QueueWait = 1, config.QueueWaitCallTimeout
	})
	held := f.goCall(toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 5000}})
	f.waitStats(t, "the hold call in flight", func(s toolcall.Stats) bool { return s.InFlight == 1 })
	waiting := f.goCall(toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}})
	f.waitStats(t, "a waiting call", func(s toolcall.Stats) bool { return s.Waiting == 1 })
	start := time.Now()
	if n := f.eng.Stop(); n != 2 {
		t.Errorf("Stop cancelled %d calls, want 2 (one running, one waiting)", n)
	}
	for _, wait := range []func() (*toolcall.Result, error){waiting, held} {
		if _, err := wait(); fault.KindOf(err) != fault.Cancelled || !strings.Contains(err.Error(), "switchboard resume") {
			t.Errorf("got %v, want cancelled by the stop switch", err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the calls ended %s after Stop, want at once", d)
	}
}

// TestOneServerCannotTakeEverySlot: with several servers, one that hangs
// with calls in flight (here: holds them) takes at most its share of the
// global limit, so another server's call still gets a slot at once
// instead of waiting for the hung calls' timeouts.
func TestOneServerCannotTakeEverySlot(t *testing.T) {
	f := newFixture(t, []config.Server{okServer(t, "alpha"), okServer(t, "beta")}, func(c *config.Config) {
		c.Limits.MaxConcurrent, c.Limits.QueueWait = 5, config.QueueWaitCallTimeout
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var held sync.WaitGroup
	var returned atomic.Int64
	for range 5 {
		held.Go(func() {
			_, _ = f.eng.Call(ctx, toolcall.Request{Server: "alpha", Tool: "hold", Arguments: map[string]any{"ms": 60000}})
			returned.Add(1)
		})
	}
	// Four hold alpha's share (5 less a fifth); the fifth waits for one.
	deadline := time.Now().Add(30 * time.Second)
	for st := f.eng.Stats(); st.InFlight != 4 || st.Waiting != 1; st = f.eng.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("got %+v, want 4 of alpha's calls in flight and 1 waiting", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	res, err := f.eng.Call(context.Background(), toolcall.Request{Server: "beta", Tool: "echo", Arguments: map[string]any{"message": "still here"}})
	if err != nil || textOf(res) != "still here" {
		t.Fatalf("beta's call: got %v, %v; want its answer", res, err)
	}
	if n := returned.Load(); n != 0 {
		t.Errorf("beta's call was answered after %d of alpha's held calls ended, want before any", n)
	}
	// alpha's waiting call is told which limit it waits for.
	_, err = f.eng.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "x"}, Timeout: time.Second})
	if fe := fault.As(err); fe == nil || fe.Kind != fault.LimitExceeded || !strings.Contains(fe.Message, "its share of limits.max_concurrent (4 of 5") {
		t.Errorf("a call over alpha's share: got %v, want limit_exceeded naming its share", err)
	}
	cancel()
	held.Wait()
}
