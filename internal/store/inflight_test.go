package store_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestInflightCrash kills a process while it runs calls: on SQLite the
// next Recorder on the database, on PostgreSQL any Recorder on the history
// once the dead process's lease has expired, records each call that was
// running as an error saying its process stopped, and leaves the calls
// that ended as they were recorded.
func TestInflightCrash(t *testing.T) {
	for _, e := range crashEngines {
		t.Run(e.name, func(t *testing.T) {
			db := e.db(t)
			cmd, out := startCrashChild(t, "inflight-writer", e.name, db)
			sc := bufio.NewScanner(out)
			var ended, running []string
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "ended "):
					ended = append(ended, strings.TrimPrefix(line, "ended "))
				case strings.HasPrefix(line, "running "):
					running = append(running, strings.TrimPrefix(line, "running "))
				case line == "ready":
					cmd.Process.Signal(syscall.SIGKILL)
				default:
					t.Errorf("child printed %q", line)
				}
			}
			waitKilled(t, cmd, true, len(ended))
			if len(ended) != 20 || len(running) != 3 {
				t.Fatalf("the child reported %d calls ended and %d running, want 20 and 3", len(ended), len(running))
			}

			s := openAfterCrash(t, e.name, db)
			var logs syncBuffer
			r := store.NewRecorder(s, store.RecorderOptions{Keep: -1, Lease: childLease, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			stop := runRecorder(t, r)
			defer func() { t.Logf("the recorder logged:\n%s", logs.String()) }()
			ctx := context.Background()
			if e.name == "sqlite" {
				eventually(t, "the recorder replays the journal", r.Journaling)
			} else {
				eventually(t, "the recorder records the calls of the killed process", func() bool {
					c, err := s.Call(ctx, running[len(running)-1])
					return err == nil && c.Status == "error"
				})
			}
			stop()
			for _, id := range ended {
				c, err := s.Call(ctx, id)
				if err != nil || c.Status != "success" {
					t.Errorf("call %s that ended: got %+v (%v), want its success record", id, c, err)
				}
			}
			pid := fmt.Sprintf("pid %d", cmd.Process.Pid)
			for i, id := range running {
				c, err := s.Call(ctx, id)
				if err != nil {
					t.Errorf("call %s that was running: %v, want a record", id, err)
					continue
				}
				if c.Status != "error" || c.ErrorKind != "internal" || !strings.HasPrefix(c.ErrorMessage, store.InterruptedMessage) || !strings.Contains(c.ErrorMessage, pid) {
					t.Errorf("call %s that was running: got status %q, kind %q, message %q; want an internal error saying its process (%s) stopped",
						id, c.Status, c.ErrorKind, c.ErrorMessage, pid)
				}
				if c.Server != "files" || c.Tool != "slow" || !c.FinishedAt.IsZero() || c.Duration != 0 || c.ResultBytes != 0 || c.Origin != fmt.Sprintf("document /srv/doc.md:%d", i+1) || c.StartedAt.IsZero() {
					t.Errorf("call %s that was running: got %+v, want what was known when it started", id, c)
				}
			}
			if e.name == "sqlite" {
				if left, err := os.ReadDir(store.DefaultJournal(s)); err != nil || len(left) != 0 {
					t.Errorf("the journal after recovery: %d files (%v), want none: %v", len(left), err, left)
				}
				return
			}
			// Nothing is left of either process: the killed one was taken
			// away, the recorder retired as it stopped.
			for _, table := range []string{"calls_in_flight", "replicas"} {
				if n, err := store.Count(ctx, s, "SELECT count(*) FROM "+table); err != nil || n != 0 {
					t.Errorf("rows left in %s: %d (%v), want none", table, n, err)
				}
			}
		})
	}
}

// inflightWriter is the child of TestInflightCrash: it begins 23 calls,
// ends 20 of them (their records committed), prints each, then "ready"
// once the 3 still running are accounted for, and waits to be killed.
func inflightWriter(engine, db string) int {
	ctx, rec, stop, err := childRecorder(engine, db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	for !rec.Journaling() && !rec.Registered() {
		time.Sleep(5 * time.Millisecond)
	}
	for n := range 23 {
		c := testCall(fmt.Sprintf("f%03d", n), n)
		if n >= 20 {
			c.Tool, c.Origin = "slow", fmt.Sprintf("document /srv/doc.md:%d", n-19)
			rec.Begin(c) // never ends
			fmt.Println("running " + c.ID)
			continue
		}
		end := rec.Begin(c)
		if err := rec.Commit(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		end()
		fmt.Println("ended " + c.ID)
	}
	// On PostgreSQL the starts are written after Begin returns (SQLite's
	// are in the file when it does).
	for engine == "postgres" && rec.FlightUnwritten() > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("ready")
	<-ctx.Done()
	return 1
}

// TestInflightFileStaysSmall: the file of calls in flight is rewritten
// with only the calls running once it holds half the calls the history
// keeps, so that it neither grows without bound nor names a call whose
// record was pruned.
func TestInflightFileStaysSmall(t *testing.T) {
	s := openSQLiteTest(t)
	r := store.NewRecorder(s, store.RecorderOptions{Keep: 40})
	stop := runRecorder(t, r)
	eventually(t, "the journal opens", r.Journaling)
	ctx := context.Background()
	long := testCall("long", 0)
	endLong := r.Begin(long)
	for n := 1; n <= 100; n++ {
		c := testCall(fmt.Sprintf("s%03d", n), n)
		end := r.Begin(c)
		if err := r.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		end()
	}
	files, _ := filepath.Glob(filepath.Join(store.DefaultJournal(s), "*.inflight"))
	if len(files) != 1 {
		t.Fatalf("got in-flight files %v, want one", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines > 20 || !strings.Contains(string(b), `"ID":"long"`) {
		t.Errorf("the in-flight file has %d lines (want at most 20, half of keep 40) and holds the running call: %v\n%s",
			lines, strings.Contains(string(b), `"ID":"long"`), b)
	}
	endLong()
	stop()
	if files, _ := filepath.Glob(filepath.Join(store.DefaultJournal(s), "*.inflight")); len(files) != 0 {
		t.Errorf("in-flight files left after the recorder stopped: %v", files)
	}
}
