package store_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// The crash tests kill -9 a process that is writing through a Recorder,
// on each engine, and check that the database opens, is intact, and holds
// what the process saw committed.

// crashEngine is an engine the crash tests kill a writer of.
type crashEngine struct {
	name string
	// db makes a database for the child to write to.
	db func(t *testing.T) string
	// intact checks the database before the store opens it; nil when the
	// store's opening is the check.
	intact func(t *testing.T, db string)
}

var crashEngines = []crashEngine{
	{name: "sqlite", db: func(t *testing.T) string { return filepath.Join(t.TempDir(), "crash", "history.db") }, intact: sqliteIntact},
	{name: "postgres", db: postgresTestDSN},
}

// sqliteIntact checks that the file opens and is intact before anything of
// the store's touches it.
func sqliteIntact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if check != "ok" {
		t.Fatalf("integrity_check: got %q, want ok", check)
	}
}

// openAfterCrash opens the engine's store on db, closed when the test ends.
func openAfterCrash(t *testing.T, engine, db string) store.Store {
	t.Helper()
	s, err := openChildStore(context.Background(), engine, db)
	if err != nil {
		t.Fatalf("opening the database after the crash: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCrash kills a writer that flushes batches and checks that every
// batch it saw committed is in the database.
func TestCrash(t *testing.T) {
	for _, e := range crashEngines {
		t.Run(e.name, func(t *testing.T) {
			db := e.db(t)
			last := runCrashWriter(t, e.name, db)
			if e.intact != nil {
				e.intact(t, db)
			}
			checkCommitted(t, openAfterCrash(t, e.name, db), last)
		})
	}
}

// runCrashWriter starts a child writing to db, kills it with SIGKILL in
// the middle of writing, and returns the last count it reported
// committed.
func runCrashWriter(t *testing.T, engine, db string) int {
	t.Helper()
	cmd, out := startCrashChild(t, "crash-writer", engine, db)
	// Committed records before the kill: three batches, so that what
	// must survive spans several transactions. The count is not the
	// point (the kill comes at a random moment of the writing that
	// goes on after it); each record costs CPU in a race-built child.
	const killAfter = 1500
	sc := bufio.NewScanner(out)
	last, killed := 0, false
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "committed "))
		if err != nil {
			t.Errorf("child printed %q", sc.Text())
			continue
		}
		last = n
		if !killed && n >= killAfter {
			// The child goes straight on recording and writing: kill it
			// at a random moment in that stream, most likely in the
			// middle of a transaction. (Not synchronisation: any moment
			// will do.)
			time.AfterFunc(rand.N(250*time.Millisecond), func() { cmd.Process.Signal(syscall.SIGKILL) })
			killed = true
		}
	}
	waitKilled(t, cmd, killed, last)
	t.Logf("killed the writer after it reported %d records committed", last)
	return last
}

// checkCommitted checks that s holds every one of the first n records the
// crash writer recorded.
func checkCommitted(t *testing.T, s store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	total, err := s.Calls(ctx, store.CallFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, c := range total {
		if c.ID <= crashID(n-1) {
			got++
		}
	}
	if got != n {
		t.Errorf("got %d of the %d records reported committed", got, n)
	}
	t.Logf("the database holds %d records, %d reported committed", len(total), n)
	// And the store works: it takes new records.
	if err := s.RecordCalls(ctx, []store.CallRecord{testCall("after-crash", 0)}); err != nil {
		t.Errorf("recording after the crash: %v", err)
	}
}

func crashID(i int) string { return fmt.Sprintf("c%09d", i) }

// crashWriter is the child: it records calls as fast as a Recorder takes
// them, flushing every 500 and printing how many are committed, until it is
// killed (or a minute passes, so a lost child does not run for ever).
func crashWriter(engine, db string) int {
	ctx, rec, stop, err := childRecorder(engine, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	for n := 0; ctx.Err() == nil; {
		for range 500 {
			c := testCall(crashID(n), n)
			c.ErrorMessage = strings.Repeat("x", n%200)
			rec.Record(c)
			n++
		}
		if err := rec.Flush(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if d := rec.Dropped(); d != 0 {
			fmt.Fprintf(os.Stderr, "%d records dropped\n", d)
			return 1
		}
		fmt.Printf("committed %d\n", n)
	}
	return 1
}

// TestCommitCrash kills a process whose callers Commit records
// concurrently, as the engine does before it answers, and checks that
// every record whose Commit returned is in the history once the next
// Recorder on the database has started: in the store already, or in the
// journal it replays (which is then empty).
func TestCommitCrash(t *testing.T) {
	for _, e := range crashEngines {
		t.Run(e.name, func(t *testing.T) {
			db := e.db(t)
			committed := runCommitWriter(t, e.name, db)
			s := openAfterCrash(t, e.name, db)
			checkCommitCrash(t, s, committed)
			if j := store.DefaultJournal(s); j != "" {
				if left, err := os.ReadDir(j); err != nil || len(left) != 0 {
					t.Errorf("the journal after recovery: %d files (%v), want none", len(left), err)
				}
			}
		})
	}
}

// runCommitWriter starts a commit writer on db, kills it with SIGKILL
// while its callers are committing, and returns the IDs of the records
// whose Commit returned nil before it died.
func runCommitWriter(t *testing.T, engine, db string) []string {
	t.Helper()
	cmd, out := startCrashChild(t, "commit-writer", engine, db)
	const killAfter = 1000 // committed records
	sc := bufio.NewScanner(out)
	var committed []string
	killed := false
	for sc.Scan() {
		id, ok := strings.CutPrefix(sc.Text(), "committed ")
		if !ok {
			t.Errorf("child printed %q", sc.Text())
			continue
		}
		committed = append(committed, id)
		if !killed && len(committed) >= killAfter {
			// Kill it at a random moment while its callers go on.
			time.AfterFunc(rand.N(100*time.Millisecond), func() { cmd.Process.Signal(syscall.SIGKILL) })
			killed = true
		}
	}
	waitKilled(t, cmd, killed, len(committed))
	t.Logf("killed the writer after %d commits returned", len(committed))
	return committed
}

// checkCommitCrash starts a Recorder on s, as the next process does, and
// checks that s then holds every committed record.
func checkCommitCrash(t *testing.T, s store.Store, committed []string) {
	t.Helper()
	var logs strings.Builder
	r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))})
	stop := runRecorder(t, r)
	if store.DefaultJournal(s) != "" {
		// Run replays the journal before it takes new records: a
		// minute at most for a few thousand records, even with -race
		// on a loaded machine.
		deadline := time.Now().Add(time.Minute)
		for !r.Journaling() {
			if time.Now().After(deadline) {
				t.Fatalf("the journal was not replayed within a minute; the recorder logged:\n%s", logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop()
	if logs.Len() > 0 {
		t.Logf("the recorder logged:\n%s", logs.String())
	}
	all, err := s.Calls(context.Background(), store.CallFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(all))
	for _, c := range all {
		have[c.ID] = true
	}
	var missing []string
	for _, id := range committed {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of the %d records whose Commit returned are not in the history, e.g. %s",
			len(missing), len(committed), missing[0])
	}
	t.Logf("the history holds %d records, %d committed before the kill", len(all), len(committed))
}

// commitWriter is the child of the commit crash tests: 32 callers Commit
// records as fast as they can, each printing a record's ID once its
// Commit returns nil, until it is killed (or a minute passes).
func commitWriter(engine, db string) int {
	ctx, rec, stop, err := childRecorder(engine, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				id := fmt.Sprintf("w%02d-%07d", w, n)
				c := testCall(id, n)
				c.ErrorMessage = strings.Repeat("x", n%200)
				if err := rec.Commit(ctx, c); err != nil {
					fmt.Fprintln(os.Stderr, err)
					continue
				}
				fmt.Println("committed " + id)
			}
		})
	}
	wg.Wait()
	return 1
}

// childLease is the lease of a crash-test child on a PostgreSQL history.
const childLease = time.Second

// childRecorder opens a crash-test child's store and runs a Recorder on
// it until stop, or for a minute at most (so that a lost child does not
// run for ever); ctx ends with it.
func childRecorder(engine, db string) (ctx context.Context, rec *store.Recorder, stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s, err := openChildStore(ctx, engine, db)
	if err != nil {
		cancel()
		return nil, nil, nil, err
	}
	// A short lease: the next process on a PostgreSQL history takes the
	// calls this one was running soon after it is killed.
	rec = store.NewRecorder(s, store.RecorderOptions{Keep: -1, Lease: childLease})
	go rec.Run(ctx)
	return ctx, rec, cancel, nil
}

// openChildStore opens a crash-test child's store.
func openChildStore(ctx context.Context, engine, db string) (store.Store, error) {
	switch engine {
	case "sqlite":
		return store.OpenSQLite(ctx, db, store.Options{})
	case "postgres":
		return store.OpenPostgres(ctx, db, store.Options{})
	}
	return nil, fmt.Errorf("unknown engine %q", engine)
}

// startCrashChild starts the test binary as a crash-test child in mode,
// writing to db, and returns its stdout.
func startCrashChild(t *testing.T, mode, engine, db string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envChildEngine+"="+engine, envChildDB+"="+db)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childProcAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// waitKilled waits for a crash-test child and checks that SIGKILL ended
// it, after n records.
func waitKilled(t *testing.T, cmd *exec.Cmd, killed bool, n int) {
	t.Helper()
	err := cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed, after %d records: %v", n, err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", cmd.ProcessState)
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
