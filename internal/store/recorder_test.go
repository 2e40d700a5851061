package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// countingStore counts RecordCalls transactions of the Store it wraps.
type countingStore struct {
	store.Store
	txs     atomic.Int64
	records atomic.Int64
}

// RecordCalls counts a batch once it has been committed, so that a test
// that sees the count can read the records.
func (c *countingStore) RecordCalls(ctx context.Context, recs []store.CallRecord) error {
	err := c.Store.RecordCalls(ctx, recs)
	c.txs.Add(1)
	if err == nil {
		c.records.Add(int64(len(recs)))
	}
	return err
}

var _ store.Store = (*countingStore)(nil)

// runRecorder runs r until the test ends and checks that Run returns nil.
func runRecorder(t *testing.T, r *store.Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func countCalls(t *testing.T, s store.Store) int {
	t.Helper()
	all, err := s.Calls(context.Background(), store.CallFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// eventually polls cond until it holds or ten seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		<-tick.C
	}
}

func TestRecorderBatches(t *testing.T) {
	cs := &countingStore{Store: openSQLiteTest(t)}
	// A long interval: only full batches and Flush cause writes.
	r := store.NewRecorder(cs, store.RecorderOptions{MaxBatch: 100, FlushInterval: time.Hour, Keep: -1})
	runRecorder(t, r)
	const n = 1050
	for i := range n {
		r.Record(testCall(fmt.Sprintf("b%04d", i), i))
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := countCalls(t, cs); got != n {
		t.Errorf("got %d calls stored, want %d", got, n)
	}
	// 10 full batches and the remainder at Flush.
	if got, want := cs.txs.Load(), int64(n/100+1); got != want {
		t.Errorf("got %d transactions for %d records, want %d", got, n, want)
	}
	if d := r.Dropped(); d != 0 {
		t.Errorf("got %d dropped, want 0", d)
	}
}

func TestRecorderFlushInterval(t *testing.T) {
	cs := &countingStore{Store: openSQLiteTest(t)}
	r := store.NewRecorder(cs, store.RecorderOptions{FlushInterval: 10 * time.Millisecond, Keep: -1})
	runRecorder(t, r)
	r.Record(testCall("lonely", 0))
	// No Flush: the interval alone gets it written.
	eventually(t, "the record is written", func() bool { return cs.records.Load() == 1 })
	if _, err := cs.Call(context.Background(), "lonely"); err != nil {
		t.Error(err)
	}
}

func TestRecorderFlushConcurrent(t *testing.T) {
	s := openSQLiteTest(t)
	r := store.NewRecorder(s, store.RecorderOptions{FlushInterval: time.Hour, Keep: -1})
	runRecorder(t, r)
	const writers, each = 8, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r.Record(testCall(fmt.Sprintf("f%d-%d", w, i), i))
				if i%100 == 99 {
					if err := r.Flush(context.Background()); err != nil {
						t.Errorf("Flush: %v", err)
					}
					// Everything this writer recorded is readable now.
					if _, err := s.Call(context.Background(), fmt.Sprintf("f%d-%d", w, i)); err != nil {
						t.Errorf("after Flush: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	if got := countCalls(t, s); got != writers*each {
		t.Errorf("got %d calls stored, want %d", got, writers*each)
	}
	// Nothing pending: Flush returns at once.
	if err := r.Flush(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestRecorderRunFlushesOnShutdown(t *testing.T) {
	cs := &countingStore{Store: openSQLiteTest(t)}
	r := store.NewRecorder(cs, store.RecorderOptions{MaxBatch: 10000, FlushInterval: time.Hour, Keep: -1})
	base := runtime.NumGoroutine()
	stop := runRecorder(t, r)
	for i := range 500 {
		r.Record(testCall(fmt.Sprintf("s%03d", i), i))
	}
	stop()
	if got := countCalls(t, cs); got != 500 {
		t.Errorf("got %d calls stored after Run returned, want 500", got)
	}
	// Stopped: records are refused, counted, and Flush does not hang.
	r.Record(testCall("late", 0))
	if d := r.Dropped(); d != 1 {
		t.Errorf("got %d dropped after Run returned, want 1", d)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Errorf("Flush after Run returned: %v", err)
	}
	if err := r.Run(context.Background()); err == nil {
		t.Error("a second Run returned nil, want an error")
	}
	eventually(t, "Run's goroutines are gone", func() bool { return runtime.NumGoroutine() <= base })
}

func TestRecorderFullBufferDrops(t *testing.T) {
	s := openSQLiteTest(t)
	r := store.NewRecorder(s, store.RecorderOptions{Buffer: 10, Keep: -1})
	// Run is not running yet, so nothing drains the buffer: Record must
	// still return at once.
	for i := range 25 {
		r.Record(testCall(fmt.Sprintf("d%02d", i), i))
	}
	if d := r.Dropped(); d != 15 {
		t.Errorf("got %d dropped, want 15", d)
	}
	// Invalid records are refused up front, not written with a batch.
	bad := testCall("invalid", 0)
	bad.Args = []byte("{")
	r.Record(bad)
	if d := r.Dropped(); d != 16 {
		t.Errorf("got %d dropped after an invalid record, want 16", d)
	}
	runRecorder(t, r)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := countCalls(t, s); got != 10 {
		t.Errorf("got %d calls stored, want the 10 that fitted", got)
	}
}

func TestRecorderWriteFailure(t *testing.T) {
	s := openSQLiteTest(t)
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1})
	runRecorder(t, r)
	s.Close() // every write fails from now on
	for i := range 3 {
		r.Record(testCall(fmt.Sprintf("x%d", i), i))
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Error("Flush returned nil after failed writes, want the error")
	}
	if d := r.Dropped(); d != 3 {
		t.Errorf("got %d dropped, want 3", d)
	}
	if f := r.WriteFailures(); f != 3 {
		t.Errorf("got %d write failures, want 3", f)
	}
}

// A SQLite history whose writes fail (its disk full) keeps the answered
// calls in its journal for the next start; the log says that, not that
// they were dropped.
func TestRecorderWriteFailureKeptInJournal(t *testing.T) {
	dir := t.TempDir()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "history.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	stop := runRecorder(t, r)
	s.Close() // every write fails from now on
	for i := range 3 {
		if err := r.Commit(context.Background(), testCall(fmt.Sprintf("j%d", i), i)); err != nil {
			t.Fatalf("Commit: %v, want the record journaled", err)
		}
	}
	eventually(t, "the failed write is counted", func() bool { return r.WriteFailures() == 3 })
	stop()
	out := logs.String()
	if !strings.Contains(out, "the records stay in its journal and are written at the next start") || strings.Contains(out, "records dropped") {
		t.Errorf("log: got\n%s\nwant the records said to stay in the journal, not dropped", out)
	}
	s2, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "history.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	r2 := store.NewRecorder(s2, store.RecorderOptions{Keep: -1})
	stop2 := runRecorder(t, r2)
	eventually(t, "the next start writes the journaled calls", func() bool { return countCalls(t, s2) == 3 })
	stop2()
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRecorderPrunes(t *testing.T) {
	s := openSQLiteTest(t)
	const keep = 50
	r := store.NewRecorder(s, store.RecorderOptions{MaxBatch: 64, Keep: keep, PruneEvery: 1}) // prune after every batch: the last prune follows the last write
	runRecorder(t, r)
	for i := range 1000 {
		r.Record(testCall(fmt.Sprintf("p%04d", i), i))
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The last prune follows the last write.
	eventually(t, fmt.Sprintf("history is pruned to %d calls", keep), func() bool { return countCalls(t, s) == keep })
	all, err := s.Calls(context.Background(), store.CallFilter{Limit: keep})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := all[0].ID, "p0999"; got != want {
		t.Errorf("newest kept call: got %s, want %s", got, want)
	}
	if got, want := all[keep-1].ID, "p0950"; got != want {
		t.Errorf("oldest kept call: got %s, want %s", got, want)
	}
}

func TestRecorderFlushContext(t *testing.T) {
	r := store.NewRecorder(openSQLiteTest(t), store.RecorderOptions{Keep: -1})
	r.Record(testCall("waiting", 0))
	// Run is not running: Flush gives up when its context does.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Flush(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush with a cancelled context: got %v, want context.Canceled", err)
	}
}
