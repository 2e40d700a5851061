package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestFlightLiveReplicas: two processes on one PostgreSQL history (two
// replicas), each sweeping for expired leases every third of its lease.
// The calls one of them runs stay in flight, unrecorded, for many of the
// other's sweeps, and their records are written as they end; when a
// replica was cut off for longer than its lease (here: its registration
// made to have expired), the other records its calls as
// interrupted, and the record of each replaces that as the call ends; a
// replica that stops records the calls it still runs as cut short, and
// leaves nothing in flight.
func TestFlightLiveReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const lease = 600 * time.Millisecond
	sa, sb := openPostgresTest(t), openPostgresTest(t)
	a := store.NewRecorder(sa, store.RecorderOptions{Keep: -1, Lease: lease})
	b := store.NewRecorder(sb, store.RecorderOptions{Keep: -1, Lease: lease})
	stopA := runRecorder(t, a)
	runRecorder(t, b)
	eventually(t, "both replicas register", func() bool { return a.Registered() && b.Registered() })

	calls := make([]store.CallRecord, 3)
	ends := make([]func(), 3)
	for i := range calls {
		calls[i] = testCall(fmt.Sprintf("live%d", i), i)
		ends[i] = a.Begin(calls[i])
	}
	eventually(t, "replica A notes its calls in flight", func() bool { return a.FlightUnwritten() == 0 })
	inFlight := func() int {
		n, err := store.Count(ctx, sb, "SELECT count(*) FROM calls_in_flight")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := inFlight(); n != 3 {
		t.Fatalf("calls in flight: got %d, want 3", n)
	}
	// Three leases' worth of B's sweeps: A renews, so none takes its calls.
	from := b.Sweeps()
	eventually(t, "replica B sweeps 9 times", func() bool { return b.Sweeps() >= from+9 })
	for _, c := range calls {
		if got, err := sb.Call(ctx, c.ID); fault.KindOf(err) != fault.NotFound {
			t.Errorf("call %s of the live replica A: got %+v (%v), want no record while it runs", c.ID, got, err)
		}
	}
	if n := inFlight(); n != 3 {
		t.Errorf("calls in flight after B's sweeps: got %d, want 3", n)
	}

	// The first call ends: its record is written and its row goes with it.
	if err := a.Commit(ctx, calls[0]); err != nil {
		t.Fatal(err)
	}
	ends[0]()
	if c, err := sb.Call(ctx, calls[0].ID); err != nil || c.Status != "success" {
		t.Errorf("call %s that ended: got %+v (%v), want its success record", calls[0].ID, c, err)
	}
	if n := inFlight(); n != 2 {
		t.Errorf("calls in flight after one ended: got %d, want 2", n)
	}

	// A third replica, C, is cut off from the database for longer than
	// its lease (an hour: it does not renew while the test runs, so its
	// lease is made to have been a second long and to have expired). B records its two calls as
	// interrupted; each call's own record replaces that as it ends.
	sc := openPostgresTest(t)
	c := store.NewRecorder(sc, store.RecorderOptions{Keep: -1, Lease: time.Hour})
	runRecorder(t, c)
	eventually(t, "replica C registers", c.Registered)
	cut := []store.CallRecord{testCall("cut0", 10), testCall("cut1", 11)}
	cutEnds := []func(){c.Begin(cut[0]), c.Begin(cut[1])}
	eventually(t, "replica C notes its calls in flight", func() bool { return c.FlightUnwritten() == 0 })
	if err := store.Exec(ctx, sc, "UPDATE replicas SET renewed_at = now() - interval '2 seconds', expires_at = now() - interval '1 second' WHERE id IN (SELECT replica FROM calls_in_flight WHERE id = 'cut0')"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "replica B records C's calls as interrupted", func() bool {
		c, err := sb.Call(ctx, cut[1].ID)
		return err == nil && c.Status == "error"
	})
	if got, _ := sb.Call(ctx, cut[0].ID); !strings.HasPrefix(got.ErrorMessage, store.InterruptedMessage) || !strings.Contains(got.ErrorMessage, "last renewed its lease") {
		t.Errorf("call %s of a replica whose lease expired: got message %q, want it to say its process stopped renewing its lease", got.ID, got.ErrorMessage)
	}
	for i := range cut {
		if err := c.Commit(ctx, cut[i]); err != nil {
			t.Fatal(err)
		}
		cutEnds[i]()
		if got, err := sb.Call(ctx, cut[i].ID); err != nil || got.Status != "success" {
			t.Errorf("call %s that ended after its lease expired: got %+v (%v), want its success record", cut[i].ID, got, err)
		}
	}
	for i := 1; i < 3; i++ {
		if err := a.Commit(ctx, calls[i]); err != nil {
			t.Fatal(err)
		}
		ends[i]()
	}

	// A call A still runs as it stops is recorded as cut short by the stop.
	last := testCall("live-last", 9)
	a.Begin(last)
	stopA()
	if c, err := sb.Call(ctx, last.ID); err != nil || c.Status != "error" || !strings.Contains(c.ErrorMessage, "shut down while the call still ran") {
		t.Errorf("call %s running when its replica stopped: got %+v (%v), want an error saying so", last.ID, c, err)
	}
	if n := inFlight(); n != 0 {
		t.Errorf("calls in flight after A stopped: got %d, want none", n)
	}
	if n, err := store.Count(ctx, sb, "SELECT count(*) FROM replicas"); err != nil || n != 1 {
		t.Errorf("replicas after A stopped: got %d (%v), want B alone (C's was taken away)", n, err)
	}
}
