package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

// TestRecorderKeepsRecordsThroughDatabaseOutage: PostgreSQL is cut off
// (restarted, unreachable: connections refused) or stops answering (hung,
// or the network drops its packets) while calls end. Their Commits give
// up waiting after CommitWait, as before, but the records stay queued and
// are written once the database is back, rather than being dropped after
// a quarter of a second of retries — or waiting, unseen, for as long as
// the hung connection lasts.
func TestRecorderKeepsRecordsThroughDatabaseOutage(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"cut", "hung"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			direct := openPostgresTest(t)
			dsn := testDB(t, postgresTestDSN) // the database direct opened
			proxy, via := testpg.NewProxy(t, dsn)
			s, err := store.OpenPostgres(ctx, via, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() }) // after the recorder stops
			var logs syncBuffer
			r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, CommitWait: 200 * time.Millisecond, WriteTimeout: 300 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			stop := runRecorder(t, r)
			defer func() { t.Logf("the recorder logged:\n%s", logs.String()) }()
			eventually(t, "the recorder registers", r.Registered)
			if err := r.Commit(ctx, testCall("before", 0)); err != nil {
				t.Fatal(err)
			}

			if mode == "cut" {
				proxy.Cut()
			} else {
				proxy.Hang()
				// A call that runs longer than a start waits: its start
				// is written alone, and that write must not hang the
				// writer either.
				r.Begin(testCall("running", 2))
				eventually(t, "the start's write gives up", func() bool {
					return strings.Contains(logs.String(), "noting the calls in flight in the history failed")
				})
			}
			err = r.Commit(ctx, testCall("during", 1))
			if err == nil || !strings.Contains(err.Error(), "stays queued") {
				t.Fatalf("Commit while the database is %s: got %v, want it to say the record stays queued", mode, err)
			}
			// Longer than the retries of a batch that fails for another
			// reason (or until the record is dropped, as it was).
			eventually(t, "the database is down for a second", func() bool {
				since, _, _ := r.Unavailable()
				return (!since.IsZero() && time.Since(since) > time.Second) || strings.Contains(logs.String(), "records dropped")
			})
			if since, waiting, err := r.Unavailable(); since.IsZero() || waiting != 1 || err == nil {
				t.Errorf("Unavailable while the database is %s: got since %v, %d records waiting, error %v; want a time, 1 and the error", mode, since, waiting, err)
			}
			proxy.Restore()
			fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := r.Flush(fctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("Flush: %v", err)
			}
			if c, err := direct.Call(ctx, "during"); err != nil || c.Status != "success" {
				t.Errorf("the call that ended while the database was %s: got %+v (%v), want its record", mode, c, err)
			}
			if since, _, _ := r.Unavailable(); !since.IsZero() {
				t.Errorf("Unavailable once the database is back: got since %v, want zero", since)
			}
			if n := r.WriteFailures(); n != 0 {
				t.Errorf("write failures: got %d, want none (the records waited for the database)", n)
			}
			stop()
		})
	}
}

// TestFlightSurvivesDatabaseOutage: PostgreSQL is cut off from two
// replicas, each running a call, for longer than either's lease, so that
// both leases have expired when it is back. The replica that looks first
// must not take the call of the other, which is alive and renews its
// lease once it can: each judges the other only once it has itself been
// in contact for longer than the other's lease.
func TestFlightSurvivesDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct := openPostgresTest(t)
	proxy, via := testpg.NewProxy(t, testDB(t, postgresTestDSN))
	open := func(lease time.Duration) *store.Recorder {
		s, err := store.OpenPostgres(ctx, via, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, Lease: lease})
		runRecorder(t, r)
		return r
	}
	a, b := open(3*time.Second), open(900*time.Millisecond)
	eventually(t, "both replicas register", func() bool { return a.Registered() && b.Registered() })
	calls := []store.CallRecord{testCall("outlivedA", 0), testCall("outlivedB", 1)}
	ends := []func(){a.Begin(calls[0]), b.Begin(calls[1])}
	eventually(t, "the replicas note their calls in flight", func() bool { return a.FlightUnwritten() == 0 && b.FlightUnwritten() == 0 })

	proxy.Cut()
	count := func(q string) int {
		n, err := store.Count(ctx, direct, q)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	eventually(t, "both leases expire", func() bool { return count("SELECT count(*) FROM replicas WHERE expires_at < now()") == 2 })
	proxy.Restore()
	eventually(t, "both replicas renew their leases", func() bool {
		return count("SELECT count(*) FROM replicas WHERE expires_at > now()") == 2
	})
	for _, c := range calls {
		if got, err := direct.Call(ctx, c.ID); err == nil {
			t.Errorf("the call %s of a live replica: got %+v, want no record while it runs", c.ID, got)
		}
	}
	if n := count("SELECT count(*) FROM calls_in_flight"); n != 2 {
		t.Errorf("calls in flight: got %d, want both", n)
	}
	for i, r := range []*store.Recorder{a, b} {
		if err := r.Commit(ctx, calls[i]); err != nil {
			t.Fatal(err)
		}
		ends[i]()
		if c, err := direct.Call(ctx, calls[i].ID); err != nil || c.Status != "success" {
			t.Errorf("the call %s once it ended: got %+v (%v), want its success record", calls[i].ID, c, err)
		}
	}
}

// TestRecorderWaitsForSpaceOnSQLite: the disk of a SQLite history fills up
// (here its file reaches max_page_count, which fails writes with the same
// SQLITE_FULL). The records of the calls that end meanwhile wait, and are
// written once there is room again — not kept in the journal until the
// next start while the history, and whoever reads it, misses those calls.
func TestRecorderWaitsForSpaceOnSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLiteTest(t)
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1})
	stop := runRecorder(t, r)
	eventually(t, "the journal opens", r.Journaling)
	if err := r.Commit(ctx, testCall("before", 0)); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	pages, err := store.Count(ctx, s, "PRAGMA page_count")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Exec(ctx, s, fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	for i := range 300 { // more than the pages' free room
		if err := r.Commit(ctx, testCall(fmt.Sprintf("full%03d", i), i+1)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the history is full for a second", func() bool {
		since, _, _ := r.Unavailable()
		return (!since.IsZero() && time.Since(since) > time.Second) || r.WriteFailures() > 0
	})
	if since, _, err := r.Unavailable(); since.IsZero() || !strings.Contains(fmt.Sprint(err), "full") {
		t.Errorf("Unavailable while the disk is full: got since %v, error %v; want a time and the error", since, err)
	}
	if err := store.Exec(ctx, s, "PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the records are written", func() bool {
		since, _, _ := r.Unavailable()
		return since.IsZero() || r.WriteFailures() > 0
	})
	if err := r.Flush(ctx); err != nil {
		t.Errorf("Flush once there is room: %v", err)
	}
	for i := range 300 {
		id := fmt.Sprintf("full%03d", i)
		if _, err := s.Call(ctx, id); err != nil {
			t.Errorf("call %s that ended while the disk was full: %v, want its record", id, err)
		}
	}
	if n := r.WriteFailures(); n != 0 {
		t.Errorf("write failures: got %d, want none", n)
	}
	stop()
}

// hungPruneStore is a history whose database stops answering when it is
// pruned.
type hungPruneStore struct{ store.Store }

func (hungPruneStore) Prune(ctx context.Context, _ int) (int64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}

// TestRecorderPruneOfAHungDatabase: a prune whose database does not answer
// gives up after the write timeout, as a write does, rather than holding
// the writer and every record behind it.
func TestRecorderPruneOfAHungDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := hungPruneStore{openSQLiteTest(t)}
	r := store.NewRecorder(s, store.RecorderOptions{Keep: 10, PruneEvery: 1, NoJournal: true, WriteTimeout: 200 * time.Millisecond})
	runRecorder(t, r)
	if err := r.Commit(ctx, testCall("first", 0)); err != nil {
		t.Fatal(err)
	}
	// The writer prunes after that write; the next record waits for it.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Commit(fctx, testCall("second", 1)); err != nil {
		t.Errorf("a Commit after a prune that hangs: %v", err)
	}
}
