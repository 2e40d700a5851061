package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestRecorderJournalKeepsFailedWrites: a record committed to the journal
// whose write to the store fails is written by the next Recorder on the
// database.
func TestRecorderJournalKeepsFailedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, FlushInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	eventually(t, "the journal is open", r.Journaling)
	s.Close() // every write fails from now on
	for i := range 3 {
		if err := r.Commit(context.Background(), testCall(fmt.Sprintf("k%d", i), i)); err != nil {
			t.Fatalf("Commit with a journal: %v", err)
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("Run returned nil after its writes failed, want the error")
	}

	s2, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := countCalls(t, s2); got != 0 {
		t.Fatalf("%d calls in the store before the next Recorder, want 0", got)
	}
	stop := runRecorder(t, store.NewRecorder(s2, store.RecorderOptions{Keep: -1}))
	stop()
	if got := countCalls(t, s2); got != 3 {
		t.Errorf("%d calls in the store after the next Recorder started, want the 3 journaled", got)
	}
}

// gateStore holds its first RecordCalls until open is closed; entered is
// closed when that first RecordCalls has begun.
type gateStore struct {
	countingStore
	once    sync.Once
	entered chan struct{}
	open    chan struct{}
}

func (g *gateStore) RecordCalls(ctx context.Context, recs []store.CallRecord) error {
	g.once.Do(func() { close(g.entered); <-g.open })
	return g.countingStore.RecordCalls(ctx, recs)
}

// TestRecorderGroupCommit: without a journal, Commit returns once its
// record is in the store, and the Commits that arrive while a
// transaction runs share the next one.
func TestRecorderGroupCommit(t *testing.T) {
	g := &gateStore{countingStore: countingStore{Store: openSQLiteTest(t)}, entered: make(chan struct{}), open: make(chan struct{})}
	r := store.NewRecorder(g, store.RecorderOptions{Keep: -1, FlushInterval: time.Hour, NoJournal: true})
	runRecorder(t, r)
	const callers = 64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		if i == 1 {
			// The first Commit's transaction has begun (and waits at the
			// gate): the others arrive while it runs.
			select {
			case <-g.entered:
			case <-time.After(20 * time.Second):
				close(g.open)
				t.Fatal("the first Commit's transaction never began")
			}
		}
		wg.Go(func() {
			if err := r.Commit(context.Background(), testCall(fmt.Sprintf("g%02d", i), i)); err != nil {
				errs <- err
				return
			}
			// Returned: the record is in the store.
			if _, err := g.Store.Calls(context.Background(), store.CallFilter{Limit: 1}); err != nil {
				errs <- err
			}
		})
	}
	eventually(t, "every Commit is queued", func() bool {
		return r.Accepted() == callers
	})
	close(g.open)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := g.records.Load(); got != callers {
		t.Errorf("%d records stored when every Commit returned, want %d", got, callers)
	}
	// The first transaction held one record; the other 63 went together.
	if got := g.txs.Load(); got != 2 {
		t.Errorf("%d transactions for %d Commits, want 2", got, callers)
	}
}

// TestRecorderCommitWait: a Commit that cannot become durable gives up
// after CommitWait, or when its context ends, saying why.
func TestRecorderCommitWait(t *testing.T) {
	// Run is not running: nothing is written.
	r := store.NewRecorder(openSQLiteTest(t), store.RecorderOptions{Keep: -1, NoJournal: true, CommitWait: 20 * time.Millisecond})
	err := r.Commit(context.Background(), testCall("late", 0))
	if err == nil || !strings.Contains(err.Error(), "not written within 20ms") {
		t.Errorf("Commit past CommitWait: got %v, want it to say it was not written within 20ms", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Commit(ctx, testCall("gone", 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Commit with a cancelled context: got %v, want context.Canceled", err)
	}
	if err := r.Commit(context.Background(), store.CallRecord{ID: "bad"}); err == nil {
		t.Error("Commit of an invalid record returned nil, want the error")
	}
}
