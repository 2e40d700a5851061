package store_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpg"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// BenchmarkRecorderSQLite measures calls recorded through a Recorder into
// SQLite: calls/s sustained from the first Record until all are written,
// and the time a caller spends in Record. The buffer holds all b.N records,
// so none is dropped and the rate is what the writer sustains.
func BenchmarkRecorderSQLite(b *testing.B) {
	s, err := store.OpenSQLite(context.Background(), b.TempDir()+"/history.db", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	recs := benchCalls(b.N)
	r := store.NewRecorder(s, store.RecorderOptions{Buffer: b.N + 1, Keep: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()

	b.ResetTimer()
	start := time.Now()
	for i := range recs {
		r.Record(recs[i])
	}
	inRecord := time.Since(start)
	if err := r.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	total := time.Since(start)
	b.StopTimer()
	if d := r.Dropped(); d != 0 {
		b.Fatalf("%d records dropped", d)
	}
	b.ReportMetric(float64(b.N)/total.Seconds(), "calls/s")
	b.ReportMetric(float64(inRecord.Nanoseconds())/float64(b.N), "ns/Record")
}

// BenchmarkRecordCalls measures raw RecordCalls transactions of 1, 64 and
// 256 records on both engines.
func BenchmarkRecordCalls(b *testing.B) {
	engines := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"sqlite", func(b *testing.B) store.Store {
			s, err := store.OpenSQLite(context.Background(), b.TempDir()+"/history.db", store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"postgres", func(b *testing.B) store.Store {
			dsn := postgresBenchDSN(b)
			s, err := store.OpenPostgres(context.Background(), dsn, store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, e := range engines {
		for _, size := range []int{1, 64, 256} {
			b.Run(fmt.Sprintf("%s/batch=%d", e.name, size), func(b *testing.B) {
				s := e.open(b)
				defer s.Close()
				recs := benchCalls(b.N * size)
				ctx := context.Background()
				b.ResetTimer()
				for i := range b.N {
					if err := s.RecordCalls(ctx, recs[i*size:(i+1)*size]); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}

// postgresBenchDSN makes a schema for a benchmark, as postgresTestDSN does
// for a test.
func postgresBenchDSN(b *testing.B) string {
	return testpg.Schema(b, testpg.Shared(b))
}

func benchCalls(n int) []store.CallRecord {
	recs := make([]store.CallRecord, n)
	for i := range recs {
		recs[i] = testCall(fmt.Sprintf("bench-%09d", i), i)
	}
	return recs
}

// BenchmarkRecord measures Record alone: the writer discards batches, so
// it keeps up and this is the cost a caller pays.
func BenchmarkRecord(b *testing.B) {
	r := store.NewRecorder(discardStore{}, store.RecorderOptions{Keep: -1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	rec := testCall("", 0)
	b.ResetTimer()
	for range b.N {
		r.Record(rec)
	}
	b.StopTimer()
	b.ReportMetric(float64(r.Dropped()), "dropped")
}

// discardStore is a Store whose RecordCalls stores nothing.
type discardStore struct{ store.Store }

func (discardStore) RecordCalls(context.Context, []store.CallRecord) error { return nil }

// BenchmarkRecorderCommit measures what a caller spends handing its
// record over before it may answer, with 16 callers at once: Record (in
// memory, not durable: the old path), Commit with the journal (SQLite's
// default), and Commit waiting for the group commit (no journal, as on
// PostgreSQL, here on SQLite).
func BenchmarkRecorderCommit(b *testing.B) {
	for _, mode := range []string{"record", "commit-journal", "commit-group"} {
		b.Run(mode, func(b *testing.B) {
			s, err := store.OpenSQLite(context.Background(), b.TempDir()+"/history.db", store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			r := store.NewRecorder(s, store.RecorderOptions{Buffer: 1 << 20, Keep: -1, NoJournal: mode == "commit-group"})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					b.Error(err)
				}
			}()
			if mode == "commit-journal" {
				for !r.Journaling() {
					time.Sleep(time.Millisecond)
				}
			}
			recs := benchCalls(1 << 14)
			var next atomic.Int64
			b.SetParallelism(8) // 16 callers on 2 CPUs
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					rec := recs[i%int64(len(recs))]
					rec.ID = fmt.Sprintf("b%09d", i)
					if mode == "record" {
						r.Record(rec)
					} else if err := r.Commit(ctx, rec); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			if err := r.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
