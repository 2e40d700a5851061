// Internal on purpose: drives the rate slots (take, release, sweep) directly and inspects their queues.

package toolcall

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// retryAfter returns a rate_limited error's details.retry_after, failing
// the test for any other error.
func retryAfter(t *testing.T, err error) float64 {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.RateLimited {
		t.Fatalf("got %v, want a rate_limited error", err)
	}
	v, ok := fe.Details["retry_after"].(float64)
	if !ok {
		t.Fatalf("details.retry_after is %#v, want seconds", fe.Details["retry_after"])
	}
	return v
}

// TestRateBuckets drives limits.rate's buckets with a clock of the test's
// own.
func TestRateBuckets(t *testing.T) {
	var l rateLimits
	l.reconfigure(config.Rate{
		PerUser:       config.Bucket{PerSecond: 2, Burst: 3},
		PerUserServer: config.Bucket{PerSecond: 1, Burst: 2},
	})
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	// alice's burst to one server is 2 (per user × server) ...
	for i := range 2 {
		if err := l.allow(at(0), "alice", "a"); err != nil {
			t.Fatalf("alice's call %d to a: %v", i, err)
		}
	}
	// ... then that server refuses her until a token comes back (1/s) ...
	if got := retryAfter(t, l.allow(at(0), "alice", "a")); got != 1 {
		t.Errorf("retry_after: got %v, want 1", got)
	}
	if got := retryAfter(t, l.allow(at(400*time.Millisecond), "alice", "a")); got != 0.6 {
		t.Errorf("retry_after 400ms later: got %v, want 0.6", got)
	}
	// ... while another server takes her third call of the user's burst
	// of 3: the refused calls took no token from it.
	if err := l.allow(at(400*time.Millisecond), "alice", "b"); err != nil {
		t.Fatalf("alice's call to b: %v", err)
	}
	// Now her own bucket is empty (3 taken, 0.8 back at 2/s after 400ms).
	err := l.allow(at(400*time.Millisecond), "alice", "b")
	if got := retryAfter(t, err); got != 0.1 {
		t.Errorf("retry_after for the user's bucket: got %v, want 0.1", got)
	}
	var fe *fault.Error
	errors.As(err, &fe)
	if fe.Details["limit"] != "limits.rate.per_user" || fe.Kind.ErrorType() != "rate_limited_error" {
		t.Errorf("the error names %v (%s), want limits.rate.per_user (rate_limited_error)", fe.Details["limit"], fe.Kind.ErrorType())
	}
	// bob is not alice.
	if err := l.allow(at(400*time.Millisecond), "bob", "a"); err != nil {
		t.Errorf("bob's first call: %v", err)
	}
	// Once retry_after has passed, alice's call goes through.
	if err := l.allow(at(time.Second), "alice", "a"); err != nil {
		t.Errorf("alice's call to a after retry_after: %v", err)
	}

	// No limits: nothing is refused or kept.
	l.reconfigure(config.Rate{})
	for range 100 {
		if err := l.allow(at(0), "alice", "a"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRateForgetsFullBuckets: buckets of users who stopped calling are
// dropped once there are many, so that memory follows the active users.
func TestRateForgetsFullBuckets(t *testing.T) {
	var l rateLimits
	l.reconfigure(config.Rate{PerUser: config.Bucket{PerSecond: 1, Burst: 1}})
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := range 3 * minRateSweep {
		// Each user calls once; an hour later their bucket is full.
		if err := l.allow(t0.Add(time.Duration(i)*time.Hour), fmt.Sprintf("u%d", i), "a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(l.users); n > minRateSweep+1 {
		t.Errorf("%d buckets kept for users who called once long ago, want at most %d", n, minRateSweep+1)
	}
}

// TestSlotsFairAcrossUsers: when a slot frees, the next user in turn gets
// it, not the user with the most calls waiting.
func TestSlotsFairAcrossUsers(t *testing.T) {
	s := newSlots(1)
	if !s.tryTake() {
		t.Fatal("the first slot was not free")
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	wait := func(user string, queued int) {
		wg.Go(func() {
			if err := s.take(context.Background(), user, nil); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, user)
			mu.Unlock()
			s.release()
		})
		// Queued in this order: wait until it is.
		for {
			s.mu.Lock()
			n := s.waiters
			s.mu.Unlock()
			if n == queued {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 6 {
		wait("flood", i+1)
	}
	wait("quiet", 7)
	wait("quiet", 8)
	s.release()
	wg.Wait()
	want := "flood quiet flood quiet flood flood flood flood"
	if got := fmt.Sprint(order); got != "["+want+"]" {
		t.Errorf("slots went to %v, want [%s]", order, want)
	}
	if used, _ := s.usage(); used != 0 || s.waiters != 0 || len(s.turn) != 0 || len(s.queues) != 0 {
		t.Errorf("after everyone: used %d, waiters %d, turn %v, queues %d; want all empty", used, s.waiters, s.turn, len(s.queues))
	}
}

// TestSlotsWaitEnds: a call that stops waiting leaves its queue, and one
// granted a slot as it stopped gives the slot to the next.
func TestSlotsWaitEnds(t *testing.T) {
	s := newSlots(1)
	s.tryTake()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.take(ctx, "a", nil) }()
	expired := make(chan time.Time, 1)
	expired <- time.Now()
	if err := s.take(context.Background(), "b", expired); !errors.Is(err, errNoSlot) {
		t.Errorf("a wait whose deadline passed: got %v, want errNoSlot", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: got %v, want context.Canceled", err)
	}
	s.release()
	if !s.tryTake() || s.waiters != 0 || len(s.turn) != 0 {
		t.Errorf("after the waits ended: the slot is not free, or waiters are left (%d, %v)", s.waiters, s.turn)
	}
}
