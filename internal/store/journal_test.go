package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// journalLines encodes records for a journal, failing the test if one
// does not.
func journalLine(t *testing.T, rec CallRecord) []byte {
	t.Helper()
	b, err := encodeJournalLine(&rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// die ends j as a killed process would: its files closed (which releases
// their locks), nothing deleted.
func die(j *journal) {
	for _, s := range j.segs {
		s.f.Close()
	}
	j.segs = nil
}

// replayed is a write function for recover that keeps what it is given.
type replayed struct {
	mu   sync.Mutex
	recs []CallRecord
}

func (c *replayed) write(_ context.Context, recs []CallRecord) error {
	c.mu.Lock()
	c.recs = append(c.recs, recs...)
	c.mu.Unlock()
	return nil
}

func (c *replayed) ids() string {
	var ids []string
	for _, r := range c.recs {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, ",")
}

// TestJournalEmptiedInPlace: once all of a segment's records are
// committed it is emptied, and the records appended after that are read
// back whole by the next process.
func TestJournalEmptiedInPlace(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := j.append(uint64(i+1), journalLine(t, testCall(fmt.Sprintf("old%d", i), i))); err != nil {
			t.Fatal(err)
		}
	}
	j.settled(3, false, 0)
	if len(j.segs) != 1 || j.segs[0].size != 0 {
		t.Fatalf("after settling everything: %d segments, want the one taking appends, emptied", len(j.segs))
	}
	for i := range 2 {
		if err := j.append(uint64(i+4), journalLine(t, testCall(fmt.Sprintf("new%d", i), i))); err != nil {
			t.Fatal(err)
		}
	}
	die(j)

	next, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var c replayed
	n, err := next.recover(context.Background(), 10, c.write)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || c.ids() != "new0,new1" {
		t.Errorf("recovered %d records (%s), want new0,new1", n, c.ids())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left in the journal after recovery, want none", len(left))
	}
}

// TestJournalLeavesLiveSegments: a Recorder starting beside a live one
// (another process on the same database) leaves its segments alone, and
// writes what it left once it has stopped.
func TestJournalLeavesLiveSegments(t *testing.T) {
	dir := t.TempDir()
	live, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := live.append(1, journalLine(t, testCall("live", 0))); err != nil {
		t.Fatal(err)
	}
	other, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var c replayed
	if n, err := other.recover(context.Background(), 10, c.write); n != 0 || err != nil {
		t.Fatalf("recovering beside a live journal: %d records (%s), %v; want none", n, c.ids(), err)
	}
	// It stops without its record written: the segment is kept.
	if kept := live.close(0); kept != 1 {
		t.Fatalf("close kept %d records, want 1", kept)
	}
	if n, err := other.recover(context.Background(), 10, c.write); n != 1 || err != nil || c.ids() != "live" {
		t.Errorf("recovering after it stopped: %d records (%s), %v; want live", n, c.ids(), err)
	}
}

// TestJournalRotates: past journalSegmentBytes appends go to a new
// segment, and a segment is deleted once all of its records are
// committed.
func TestJournalRotates(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer j.close(0)
	line := journalLine(t, testCall("r", 0))
	n := uint64(3*journalSegmentBytes/len(line) + 1)
	for seq := uint64(1); seq <= n; seq++ {
		if err := j.append(seq, line); err != nil {
			t.Fatal(err)
		}
	}
	if len(j.segs) != 3 {
		t.Fatalf("%d segments after %d bytes, want 3", len(j.segs), n*uint64(len(line)))
	}
	j.settled(j.segs[1].max, false, 0)
	if left, _ := os.ReadDir(dir); len(j.segs) != 1 || len(left) != 1 {
		t.Errorf("after the first two segments are committed: %d segments, %d files; want 1", len(j.segs), len(left))
	}
}

// TestRecorderJournalKeepsFailedWrites: a record committed to the journal
// whose write to the store fails is written by the next Recorder on the
// database.
func TestRecorderJournalKeepsFailedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := OpenSQLite(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(s, RecorderOptions{Keep: -1, FlushInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	eventually(t, "the journal is open", r.journaling.Load)
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

	s2, err := OpenSQLite(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := countCalls(t, s2); got != 0 {
		t.Fatalf("%d calls in the store before the next Recorder, want 0", got)
	}
	stop := runRecorder(t, NewRecorder(s2, RecorderOptions{Keep: -1}))
	stop()
	if got := countCalls(t, s2); got != 3 {
		t.Errorf("%d calls in the store after the next Recorder started, want the 3 journaled", got)
	}
}

// gateStore holds its first RecordCalls until open is closed.
type gateStore struct {
	countingStore
	once sync.Once
	open chan struct{}
}

func (g *gateStore) RecordCalls(ctx context.Context, recs []CallRecord) error {
	g.once.Do(func() { <-g.open })
	return g.countingStore.RecordCalls(ctx, recs)
}

// TestRecorderGroupCommit: without a journal, Commit returns once its
// record is in the store, and the Commits that arrive while a
// transaction runs share the next one.
func TestRecorderGroupCommit(t *testing.T) {
	g := &gateStore{countingStore: countingStore{Store: openSQLiteTest(t)}, open: make(chan struct{})}
	r := NewRecorder(g, RecorderOptions{Keep: -1, FlushInterval: time.Hour, NoJournal: true})
	runRecorder(t, r)
	const callers = 64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			if err := r.Commit(context.Background(), testCall(fmt.Sprintf("g%02d", i), i)); err != nil {
				errs <- err
				return
			}
			// Returned: the record is in the store.
			if _, err := g.Store.Calls(context.Background(), CallFilter{Limit: 1}); err != nil {
				errs <- err
			}
		})
	}
	eventually(t, "every Commit is queued", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.accepted == callers
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
	r := NewRecorder(openSQLiteTest(t), RecorderOptions{Keep: -1, NoJournal: true, CommitWait: 20 * time.Millisecond})
	err := r.Commit(context.Background(), testCall("late", 0))
	if err == nil || !strings.Contains(err.Error(), "not written within 20ms") {
		t.Errorf("Commit past CommitWait: got %v, want it to say it was not written within 20ms", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Commit(ctx, testCall("gone", 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Commit with a cancelled context: got %v, want context.Canceled", err)
	}
	if err := r.Commit(context.Background(), CallRecord{ID: "bad"}); err == nil {
		t.Error("Commit of an invalid record returned nil, want the error")
	}
}
