package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

// TestHistoryOutageOnPostgres: the daemon's PostgreSQL database becomes
// unreachable (restarted, the network down) while clients call. Calls
// are still answered (after the history's commit wait); the daemon's
// status (what `switchboard servers` and the console show) and /metrics
// say since when the history is unavailable and how many records wait;
// once the database is back the records are written, none lost, and the
// status says nothing more.
func TestHistoryOutageOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testpg.Database(t, testpg.Shared(t))
	direct := openPostgres(t, dsn)
	proxy, via := testpg.NewProxy(t, dsn)
	r := startReplica(t, testConfig(okServer(t, "alpha")), openPostgres(t, via))
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__echo"))
	call(t, cs, "alpha__echo", map[string]any{"message": "before"})

	proxy.Cut()
	if res := call(t, cs, "alpha__echo", map[string]any{"message": "during"}); res.IsError || !strings.Contains(textOf(res), "during") {
		t.Fatalf("a call while the database is cut off: got %+v, want its answer", res)
	}
	ctl := r.ctl(t)
	st, err := ctl.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o := st.HistoryUnavailable; o == nil || o.Since.IsZero() || o.Waiting < 1 || o.Error == "" {
		t.Errorf("status while the database is cut off: got %+v, want since when, the records waiting and the error", o)
	}
	if _, metrics := get(t, r.url+"/metrics"); !strings.Contains(metrics, "switchboard_history_unavailable_seconds ") ||
		strings.Contains(metrics, "switchboard_history_unavailable_seconds 0\n") {
		t.Errorf("/metrics while the database is cut off: want switchboard_history_unavailable_seconds above 0")
	}

	proxy.Restore()
	eventually(t, "the status says the history is back", func() bool {
		st, err := ctl.Status(ctx)
		return err == nil && st.HistoryUnavailable == nil
	})
	recs, err := direct.Calls(ctx, store.CallFilter{Tool: "echo"})
	if err != nil || len(recs) != 2 {
		t.Errorf("the history once the database is back: got %d calls (%v), want both", len(recs), err)
	}
	if st, err := ctl.Status(ctx); err != nil || st.HistoryWriteFailures != 0 {
		t.Errorf("history write failures: got %d (%v), want none", st.HistoryWriteFailures, err)
	}
}
