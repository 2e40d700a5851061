package metrics_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/metrics"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// A history that cannot be written (its disk full, its database down)
// shows on /metrics, not only in the daemon's log.
func TestHistoryWriteFailuresAreExported(t *testing.T) {
	t.Parallel()
	s, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "h.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := store.NewRecorder(s, store.RecorderOptions{Keep: -1, NoJournal: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() { cancel(); <-done }()
	m := metrics.New(metrics.Options{Next: rec, HistoryWriteFailures: rec.WriteFailures})
	sc := serve(t, m)
	sc.compare(`# HELP switchboard_history_write_failures_total Call records the history store failed to write, after retries (refused, or still waiting for an unavailable store at shutdown). A SQLite history keeps them in its journal for the next start; the daemon's log says why.
# TYPE switchboard_history_write_failures_total counter
switchboard_history_write_failures_total 0
`, "switchboard_history_write_failures_total")

	s.Close() // every write fails from now on
	for i := range 3 {
		rec.Record(store.CallRecord{ID: fmt.Sprintf("c%d", i), Source: "cli", Server: "alpha", Tool: "echo", Status: "success", StartedAt: time.Now()})
	}
	if err := rec.Flush(context.Background()); err == nil {
		t.Fatal("Flush: got nil after writes to a closed store, want an error")
	}
	if got, ok := value(sc.families(), "switchboard_history_write_failures_total", map[string]string{}); !ok || got != 3 {
		t.Errorf("switchboard_history_write_failures_total: got %v (present %v), want 3", got, ok)
	}
}
