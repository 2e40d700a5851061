package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestSQLiteStore(t *testing.T)   { testStore(t, openSQLiteTest) }
func TestPostgresStore(t *testing.T) { testStore(t, openPostgresTest) }

// testStore is the suite every Store implementation passes. open returns a
// new store for t; called again in the same test, it opens the same
// database again.
func testStore(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()

	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		want := store.CallRecord{
			ID: "c1", Source: "agent", Identity: "bob", Server: "github", Tool: "create_issue",
			Args:   []byte(`{"title":"string","labels":["string"]}`),
			Status: "error", ErrorKind: "backend", ErrorMessage: "upstream said no",
			StartedAt:  time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600)),
			FinishedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
			Duration:   876543210 * time.Nanosecond, Retries: 2, ResultBytes: 1 << 40,
			Truncated: true, Partial: true, URLElicitations: 3, InputRounds: 2,
			Origin: "agent step 2, tool call call_7",
		}
		if err := s.RecordCalls(ctx, []store.CallRecord{want}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Call(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		// Times come back in UTC, to the microsecond.
		want.StartedAt = time.Date(2026, 1, 2, 2, 4, 5, 123456000, time.UTC)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Call mismatch (-want +got):\n%s", diff)
		}
		if got.StartedAt.Location() != time.UTC {
			t.Errorf("got StartedAt in %v, want UTC", got.StartedAt.Location())
		}

		// Empty and unset fields stay empty.
		min := store.CallRecord{ID: "c2", StartedAt: testStart}
		if err := s.RecordCalls(ctx, []store.CallRecord{min}); err != nil {
			t.Fatal(err)
		}
		got, err = s.Call(ctx, "c2")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(min, got); diff != "" {
			t.Errorf("minimal record mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		s := open(t)
		var recs []store.CallRecord
		add := func(id string, mod func(*store.CallRecord)) {
			r := testCall(id, len(recs))
			mod(&r)
			recs = append(recs, r)
		}
		add("a", func(r *store.CallRecord) {})
		add("b", func(r *store.CallRecord) { r.Tool = "write_file" })
		add("c", func(r *store.CallRecord) { r.Server, r.Tool = "github", "create_issue" })
		add("d", func(r *store.CallRecord) { r.Status, r.ErrorKind = "timeout", "timeout" })
		add("e", func(r *store.CallRecord) { r.Source = "cli" })
		add("f", func(r *store.CallRecord) { r.Identity = "bob" })
		add("g", func(r *store.CallRecord) { r.Server, r.Status = "github", "error" })
		if err := s.RecordCalls(ctx, recs); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			f    store.CallFilter
			want []string
		}{
			{"all", store.CallFilter{}, []string{"g", "f", "e", "d", "c", "b", "a"}},
			{"server", store.CallFilter{Server: "github"}, []string{"g", "c"}},
			{"tool", store.CallFilter{Tool: "read_file"}, []string{"g", "f", "e", "d", "a"}},
			{"server and tool", store.CallFilter{Server: "files", Tool: "read_file"}, []string{"f", "e", "d", "a"}},
			{"status", store.CallFilter{Status: "timeout"}, []string{"d"}},
			{"source", store.CallFilter{Source: "cli"}, []string{"e"}},
			{"identity", store.CallFilter{Identity: "bob"}, []string{"f"}},
			{"since", store.CallFilter{Since: testStart.Add(4 * time.Second)}, []string{"g", "f", "e"}},
			{"since in another zone", store.CallFilter{Since: testStart.Add(4 * time.Second).In(time.FixedZone("Y", -7200))}, []string{"g", "f", "e"}},
			{"limit", store.CallFilter{Limit: 2}, []string{"g", "f"}},
			{"combined", store.CallFilter{Server: "github", Status: "error", Since: testStart}, []string{"g"}},
			{"no match", store.CallFilter{Server: "nope"}, nil},
			{"before", store.CallFilter{BeforeID: "c"}, []string{"b", "a"}},
			{"before with filter", store.CallFilter{BeforeID: "f", Tool: "read_file"}, []string{"e", "d", "a"}},
			{"id prefix", store.CallFilter{IDPrefix: "c"}, []string{"c"}},
			{"id prefix longer than the ids", store.CallFilter{IDPrefix: "cc"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.Calls(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
					t.Errorf("Calls(%+v) IDs (-want +got):\n%s", tc.f, diff)
				}
			})
		}
		// Whole records come back from Calls as they do from Call.
		got, err := s.Calls(ctx, store.CallFilter{Identity: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.CallRecord{recs[5]}, got); diff != "" {
			t.Errorf("Calls record mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("IDPrefix", func(t *testing.T) {
		s := open(t)
		var recs []store.CallRecord
		for i, id := range []string{"ab12-x", "ab13-y", "AB14-z", "ac15", "b_%"} {
			recs = append(recs, testCall(id, i))
		}
		if err := s.RecordCalls(ctx, recs); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"ab", []string{"ab13-y", "ab12-x"}}, // case-sensitive: not AB14-z
			{"ab12", []string{"ab12-x"}},
			{"AB", []string{"AB14-z"}},
			{"a", []string{"ac15", "ab13-y", "ab12-x"}},
			{"b_", []string{"b_%"}},
			{"_", nil}, // no pattern characters
			{"%", nil},
		} {
			got, err := s.Calls(ctx, store.CallFilter{IDPrefix: tc.prefix})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("IDPrefix %q (-want +got):\n%s", tc.prefix, diff)
			}
		}
	})

	t.Run("NewestFirstAndPagination", func(t *testing.T) {
		s := open(t)
		// 250 calls; pairs share a start time, so order falls back to the
		// order of recording. Recorded out of time order.
		const n = 250
		recs := make([]store.CallRecord, n)
		for i := range recs {
			recs[i] = testCall(fmt.Sprintf("p%03d", i), i/2)
		}
		for _, half := range [][]store.CallRecord{recs[126:], recs[:126]} { // pairs stay together
			for i := 0; i < len(half); i += 50 {
				batch := half[i:min(i+50, len(half))]
				if err := s.RecordCalls(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
		}
		var want []string
		for i := n - 1; i >= 0; i-- {
			want = append(want, recs[i].ID)
		}

		first, err := s.Calls(ctx, store.CallFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(first); got != store.DefaultLimit {
			t.Errorf("got %d calls with no limit, want %d", got, store.DefaultLimit)
		}

		var got []string
		f := store.CallFilter{Limit: 64}
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatal("pagination does not end")
			}
			page, err := s.Calls(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			got = append(got, ids(page)...)
			f.BeforeID = page[len(page)-1].ID
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("paged IDs (-want +got):\n%s", diff)
		}

		_, err = s.Calls(ctx, store.CallFilter{BeforeID: "missing"})
		if k := fault.KindOf(err); k != fault.NotFound {
			t.Errorf("Calls with unknown BeforeID: got error %v (kind %q), want kind %q", err, k, fault.NotFound)
		}
	})

	t.Run("CallNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.Call(ctx, "missing")
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.NotFound {
			t.Fatalf("Call(missing): got error %v, want a *fault.Error of kind %q", err, fault.NotFound)
		}
	})

	t.Run("UpsertAndValidation", func(t *testing.T) {
		s := open(t)
		r := testCall("u1", 0)
		if err := s.RecordCalls(ctx, []store.CallRecord{r}); err != nil {
			t.Fatal(err)
		}
		r.Status, r.ErrorMessage = "error", "second try failed"
		if err := s.RecordCalls(ctx, []store.CallRecord{r}); err != nil {
			t.Fatalf("recording an ID again: %v", err)
		}
		got, err := s.Call(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("replaced record mismatch (-want +got):\n%s", diff)
		}

		// A missing ID is assigned and written back.
		batch := []store.CallRecord{testCall("", 1), testCall("", 2)}
		if err := s.RecordCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if batch[0].ID == "" || batch[0].ID == batch[1].ID {
			t.Errorf("got assigned IDs %q and %q, want two distinct IDs", batch[0].ID, batch[1].ID)
		}
		if _, err := s.Call(ctx, batch[1].ID); err != nil {
			t.Errorf("Call(assigned ID): %v", err)
		}

		// Invalid records fail the whole batch.
		noStart := testCall("bad1", 3)
		noStart.StartedAt = time.Time{}
		badArgs := testCall("bad2", 4)
		badArgs.Args = []byte(`{"unterminated`)
		for _, bad := range []store.CallRecord{noStart, badArgs} {
			err := s.RecordCalls(ctx, []store.CallRecord{testCall("ok", 5), bad})
			if k := fault.KindOf(err); k != fault.Validation {
				t.Errorf("RecordCalls(%s): got error %v (kind %q), want kind %q", bad.ID, err, k, fault.Validation)
			}
		}
		if _, err := s.Call(ctx, "ok"); fault.KindOf(err) != fault.NotFound {
			t.Errorf("a record of a rejected batch was stored (err %v)", err)
		}

		// Text PostgreSQL cannot hold is cleaned the same way by both.
		odd := testCall("odd", 6)
		odd.ErrorMessage = "nul\x00byte and bad \xff utf-8"
		if err := s.RecordCalls(ctx, []store.CallRecord{odd}); err != nil {
			t.Fatal(err)
		}
		got, err = s.Call(ctx, "odd")
		if err != nil {
			t.Fatal(err)
		}
		if want := "nulbyte and bad \uFFFD utf-8"; got.ErrorMessage != want {
			t.Errorf("got error message %q, want %q", got.ErrorMessage, want)
		}
	})

	t.Run("Prune", func(t *testing.T) {
		s := open(t)
		recs := make([]store.CallRecord, 50)
		for i := range recs {
			recs[i] = testCall(fmt.Sprintf("k%02d", i), i)
		}
		// Recorded newest first, so recording order differs from time order.
		for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
			recs[i], recs[j] = recs[j], recs[i]
		}
		if err := s.RecordCalls(ctx, recs); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			keep    int
			deleted int64
			newest  int // the IDs left are k(newest-keep+1) .. k(newest)
		}{
			{keep: 100, deleted: 0},
			{keep: 50, deleted: 0},
			{keep: 20, deleted: 30},
			{keep: 20, deleted: 0},
			{keep: 1, deleted: 19},
			{keep: 0, deleted: 1},
		} {
			n, err := s.Prune(ctx, tc.keep)
			if err != nil {
				t.Fatalf("Prune(%d): %v", tc.keep, err)
			}
			if n != tc.deleted {
				t.Errorf("Prune(%d): got %d deleted, want %d", tc.keep, n, tc.deleted)
			}
			got, err := s.Calls(ctx, store.CallFilter{Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := 49; i >= 0 && len(want) < min(tc.keep, 50); i-- {
				want = append(want, fmt.Sprintf("k%02d", i))
			}
			if diff := cmp.Diff(want, ids(got)); diff != "" {
				t.Errorf("after Prune(%d), IDs (-want +got):\n%s", tc.keep, diff)
			}
		}
		if _, err := s.Prune(ctx, -1); fault.KindOf(err) != fault.Validation {
			t.Errorf("Prune(-1): got error %v, want kind %q", err, fault.Validation)
		}
	})

	t.Run("StateStore", func(t *testing.T) {
		s := open(t)
		got, err := s.LoadState(ctx, "unknown")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(upstream.Record{}, got); diff != "" {
			t.Errorf("LoadState(unknown) (-want +got):\n%s", diff)
		}
		want := upstream.Record{
			Disabled: true, AutoDisabled: true, DisabledAt: time.Date(2026, 2, 3, 4, 5, 6, 789, time.UTC),
			Reason: "5 failures in a row", ConsecutiveFailures: 5, LastError: "connection refused",
			LastConnectedAt: time.Date(2026, 2, 3, 4, 0, 0, 0, time.UTC),
		}
		if err := s.SaveState(ctx, "files", want); err != nil {
			t.Fatal(err)
		}
		if got, err = s.LoadState(ctx, "files"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LoadState after SaveState (-want +got):\n%s", diff)
		}
		want = upstream.Record{ConsecutiveFailures: 1, LastError: "timeout"}
		if err := s.SaveState(ctx, "files", want); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.LoadState(ctx, "files"); !cmp.Equal(want, got) {
			t.Errorf("LoadState after a second SaveState: got %+v, want %+v", got, want)
		}
		if err := s.SaveState(ctx, "files", upstream.Record{}); err != nil {
			t.Fatal(err)
		}
		if got, _ = s.LoadState(ctx, "files"); !cmp.Equal(upstream.Record{}, got) {
			t.Errorf("LoadState after saving the zero Record: got %+v, want the zero Record", got)
		}
	})

	t.Run("ReopenAndMigrations", func(t *testing.T) {
		s1 := open(t)
		if err := s1.RecordCalls(ctx, []store.CallRecord{testCall("r1", 0)}); err != nil {
			t.Fatal(err)
		}
		if err := s1.SaveState(ctx, "files", upstream.Record{Disabled: true}); err != nil {
			t.Fatal(err)
		}
		s1.Close()
		s2 := open(t) // the same database: migrations find nothing to do
		s3 := open(t) // and again, while s2 is open
		for _, s := range []store.Store{s2, s3} {
			if _, err := s.Call(ctx, "r1"); err != nil {
				t.Errorf("Call after reopening: %v", err)
			}
			if r, _ := s.LoadState(ctx, "files"); !r.Disabled {
				t.Errorf("state after reopening: got %+v, want Disabled", r)
			}
			v, err := store.SchemaVersion(ctx, s)
			if err != nil || v != store.LatestVersion() {
				t.Errorf("schema version: got %d, %v, want %d", v, err, store.LatestVersion())
			}
		}
	})

	t.Run("NewerSchemaRefused", func(t *testing.T) {
		s := open(t)
		// A later Switchboard has migrated this database further.
		applied := "0"
		if _, ok := s.(*store.Postgres); ok {
			applied = "now()"
		}
		if err := store.Exec(ctx, s, "INSERT INTO schema_migrations VALUES (999, 'future', "+applied+")"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		var err error
		switch s := s.(type) {
		case *store.SQLite:
			_, err = store.OpenSQLite(ctx, s.Path(), store.Options{})
		case *store.Postgres:
			_, err = store.OpenPostgres(ctx, testDB(t, nil), store.Options{})
		}
		if k := fault.KindOf(err); k != fault.Config {
			t.Fatalf("opening a database with schema version 999: got error %v (kind %q), want kind %q", err, k, fault.Config)
		}
	})

	t.Run("ConcurrentRecordCalls", func(t *testing.T) {
		s := open(t)
		// Eight writers start together, so their batches collide from
		// the first; more batches each would add time, not contention.
		const writers, batches, size = 8, 5, 20
		var wg sync.WaitGroup
		errs := make(chan error, writers*batches)
		for w := range writers {
			wg.Go(func() {
				for b := range batches {
					batch := make([]store.CallRecord, size)
					for i := range batch {
						batch[i] = testCall(fmt.Sprintf("w%d-%d-%d", w, b, i), b)
					}
					if err := s.RecordCalls(ctx, batch); err != nil {
						errs <- err
					}
				}
			})
		}
		// Readers run alongside.
		wg.Go(func() {
			for range 20 {
				if _, err := s.Calls(ctx, store.CallFilter{Server: "files"}); err != nil {
					errs <- err
				}
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent RecordCalls: %v", err)
		}
		all, err := s.Calls(ctx, store.CallFilter{Limit: 10 * writers * batches * size})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(all), writers*batches*size; got != want {
			t.Errorf("got %d calls stored, want %d", got, want)
		}
	})
}

func ids(recs []store.CallRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}
