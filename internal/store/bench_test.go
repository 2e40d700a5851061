package store_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
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
	_, stop := runBenchRecorder(b, r)
	defer stop()

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

// runBenchRecorder runs r until stop, which reports an error of Run's;
// ctx ends with it.
func runBenchRecorder(b *testing.B, r *store.Recorder) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return ctx, func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
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
			ctx, stop := runBenchRecorder(b, r)
			defer stop()
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

// BenchmarkRecorderInFlightPostgres measures what accounting for calls in
// flight costs a call on PostgreSQL: each caller Begins a call, Commits
// its record and ends it, as the engine does (inflight=on), against the
// same Commits without Begin, as before calls in flight were kept there
// (inflight=off). Calls are fast (hold=0: each ends right after it
// began, so its start is mostly dropped before it is written) or each
// caller keeps 8 calls open (hold=8: a call ends 8 calls after it began,
// so nearly every start is written and deleted). rows/call is the share
// of calls whose start reached the database.
func BenchmarkRecorderInFlightPostgres(b *testing.B) {
	for _, callers := range []int{1, 16} {
		for _, hold := range []int{0, 8} {
			for _, on := range []bool{false, true} {
				name := fmt.Sprintf("callers=%d/hold=%d/inflight=%s", callers, hold, map[bool]string{false: "off", true: "on"}[on])
				b.Run(name, func(b *testing.B) { benchInFlight(b, callers, hold, on) })
			}
		}
	}
}

func benchInFlight(b *testing.B, callers, hold int, on bool) {
	s, err := store.OpenPostgres(context.Background(), postgresBenchDSN(b), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := store.NewRecorder(s, store.RecorderOptions{Buffer: 1 << 20, Keep: -1})
	ctx, stop := runBenchRecorder(b, r)
	defer stop()
	for !r.Registered() {
		time.Sleep(time.Millisecond)
	}
	var next atomic.Int64
	caller := func(n func() bool) {
		type open struct {
			rec store.CallRecord
			end func()
		}
		var window []open
		finish := func(o open) bool {
			if err := r.Commit(ctx, o.rec); err != nil {
				b.Error(err)
				return false
			}
			o.end()
			return true
		}
		for n() {
			i := next.Add(1)
			rec := testCall(fmt.Sprintf("b%09d", i), int(i))
			end := func() {}
			if on {
				end = r.Begin(rec)
			}
			window = append(window, open{rec, end})
			if len(window) > hold {
				if !finish(window[0]) {
					return
				}
				window = window[1:]
			}
		}
		for _, o := range window {
			if !finish(o) {
				return
			}
		}
	}
	server := serverCPU(b, s)
	client := processCPU()
	b.ResetTimer()
	if callers == 1 {
		i := 0
		caller(func() bool { i++; return i <= b.N })
	} else {
		b.SetParallelism(callers / 2) // on 2 CPUs
		b.RunParallel(func(pb *testing.PB) { caller(pb.Next) })
	}
	b.StopTimer()
	b.ReportMetric(float64(r.FlightRows())/float64(b.N), "rows/call")
	// CPU time rather than wall time: on a loaded machine it says what
	// the work costs, not how long it waited for a CPU.
	b.ReportMetric(float64((processCPU()-client).Microseconds())/float64(b.N), "client-cpu-µs/call")
	if server != nil {
		b.ReportMetric(float64(server().Microseconds())/float64(b.N), "db-cpu-µs/call")
	}
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU returns a function that reports the CPU time the PostgreSQL
// server of s (on this machine) has used since: its postmaster's, with
// that of its children that exited, and its live children's. nil where
// /proc does not tell.
func serverCPU(b *testing.B, s store.Store) func() time.Duration {
	backend, err := store.Count(context.Background(), s, "SELECT pg_backend_pid()")
	if err != nil {
		b.Fatal(err)
	}
	master, _, _, ok := procStat(backend)
	if !ok {
		return nil
	}
	total := func() time.Duration {
		_, self, children, _ := procStat(master)
		sum := self + children
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if ppid, cpu, _, ok := procStat(pid); ok && ppid == master {
				sum += cpu
			}
		}
		return sum
	}
	start := total()
	return func() time.Duration { return total() - start }
}

// procStat reads a process's parent, its CPU time and that of its
// children it waited for, from /proc.
func procStat(pid int) (ppid int, cpu, children time.Duration, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	// Fields after the command (in parentheses, which may hold spaces).
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(f[k], 10, 64); return n }
	const tick = 10 * time.Millisecond // USER_HZ 100
	ppid = int(num(1))
	cpu = time.Duration(num(11)+num(12)) * tick
	children = time.Duration(num(13)+num(14)) * tick
	return ppid, cpu, children, true
}
