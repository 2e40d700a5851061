package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestSQLiteHookRuns(t *testing.T)   { testHookRuns(t, openSQLiteTest) }
func TestPostgresHookRuns(t *testing.T) { testHookRuns(t, openPostgresTest) }

// testHookRuns is the hook-run suite every Store implementation passes.
func testHookRuns(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	base := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

	t.Run("RoundTripAndFilters", func(t *testing.T) {
		s := open(t)
		runs := []store.HookRun{
			{ID: "r1", EventID: "e1", ChainID: "c1", Depth: 0, Event: "tool.after", Hook: "log", Action: "mcp a/echo",
				Status: "success", Context: json.RawMessage(`{"tool":"echo"}`), StartedAt: base, Duration: 1500 * time.Microsecond,
				CallID: "5f0c2a1e-8d3b-4c7a-9e21-0b6d4f3a2c10", Output: json.RawMessage(`{"echoed":"hi"}`)},
			{ID: "r2", EventID: "e2", ChainID: "c1", Depth: 1, Event: "review.done", Hook: "notify", Action: "http example.com",
				Status: "failure", Error: "500 Internal Server Error", StartedAt: base.Add(time.Second)},
			{ID: "r3", EventID: "e3", ChainID: "c3", Event: "tool.before", Hook: "guard",
				Status: "rejected", Error: "queue full", StartedAt: base.Add(2 * time.Second)},
			{EventID: "e4", ChainID: "c4", Event: "tool.before", Hook: "guard", Action: "command ./g",
				Status: "blocked", Error: "no\x00pe \xff", StartedAt: base.Add(3 * time.Second)},
		}
		if err := s.RecordHookRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		if runs[3].ID == "" {
			t.Fatalf("got no ID assigned, want one written back")
		}
		all, err := s.HookRuns(ctx, store.HookRunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 4 || all[0].ID != runs[3].ID || all[3].ID != "r1" {
			t.Fatalf("got %d runs (%v first), want 4 newest first", len(all), all)
		}
		if diff := cmp.Diff(runs[0], all[3]); diff != "" {
			t.Errorf("round trip mismatch (-want +got):\n%s", diff)
		}
		if got, want := all[0].Error, "nope \uFFFD"; got != want {
			t.Errorf("cleaned error: got %q, want %q", got, want)
		}
		tests := []struct {
			name string
			f    store.HookRunFilter
			want []string
		}{
			{"failed", store.HookRunFilter{Failed: true}, []string{runs[3].ID, "r3", "r2"}},
			{"hook", store.HookRunFilter{Hook: "guard"}, []string{runs[3].ID, "r3"}},
			{"event", store.HookRunFilter{Event: "tool.after"}, []string{"r1"}},
			{"status", store.HookRunFilter{Status: "rejected"}, []string{"r3"}},
			{"since", store.HookRunFilter{Since: base.Add(2 * time.Second)}, []string{runs[3].ID, "r3"}},
			{"limit", store.HookRunFilter{Limit: 1}, []string{runs[3].ID}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.HookRuns(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, r := range got {
					ids = append(ids, r.ID)
				}
				if diff := cmp.Diff(tt.want, ids); diff != "" {
					t.Errorf("ids mismatch (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("InvalidRejected", func(t *testing.T) {
		s := open(t)
		for _, r := range []store.HookRun{{ID: "x"}, {ID: "y", StartedAt: base, Context: json.RawMessage("{")}, {ID: "z", StartedAt: base, Output: json.RawMessage("[1,")}} {
			if err := s.RecordHookRuns(ctx, []store.HookRun{r}); err == nil {
				t.Errorf("RecordHookRuns(%+v): got nil error, want a validation error", r)
			}
		}
	})

	t.Run("Prune", func(t *testing.T) {
		s := open(t)
		var runs []store.HookRun
		for i := range 10 {
			runs = append(runs, store.HookRun{ID: fmt.Sprintf("p%d", i), Event: "e", Hook: "h", Status: "success", StartedAt: base.Add(time.Duration(i) * time.Second)})
		}
		if err := s.RecordHookRuns(ctx, runs); err != nil {
			t.Fatal(err)
		}
		n, err := s.PruneHookRuns(ctx, 3)
		if err != nil || n != 7 {
			t.Fatalf("PruneHookRuns(3): got %d, %v, want 7, nil", n, err)
		}
		got, err := s.HookRuns(ctx, store.HookRunFilter{})
		if err != nil || len(got) != 3 || got[2].ID != "p7" {
			t.Fatalf("after pruning: got %d runs (%v), want p9..p7", len(got), err)
		}
		if n, err := s.PruneHookRuns(ctx, 0); err != nil || n != 3 {
			t.Errorf("PruneHookRuns(0): got %d, %v, want 3, nil", n, err)
		}
		if _, err := s.PruneHookRuns(ctx, -1); err == nil {
			t.Errorf("PruneHookRuns(-1): got nil error, want one")
		}
	})
}
