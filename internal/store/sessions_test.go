package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestSQLiteConsoleSessions(t *testing.T)   { testConsoleSessions(t, openSQLiteTest) }
func TestPostgresConsoleSessions(t *testing.T) { testConsoleSessions(t, openPostgresTest) }

// testConsoleSessions checks that sessions round-trip, survive reopening
// the database (a restart), are seen by a second handle on the same
// database (a replica), are touched, deleted and expired.
func testConsoleSessions(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	a := open(t).(store.SessionStore)
	b := open(t).(store.SessionStore) // the same database, as a second replica sees it
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	want := store.ConsoleSession{ID: "session-id-1", CSRF: "csrf-1", Authed: true, Token: "ci", Fingerprint: "ab12",
		User: "alice", Created: start, Seen: start.Add(time.Minute)}
	if err := a.SaveConsoleSession(ctx, want); err != nil {
		t.Fatal(err)
	}
	want.Created, want.Seen = start.Truncate(time.Microsecond), start.Add(time.Minute).Truncate(time.Microsecond)
	got, err := b.ConsoleSession(ctx, "session-id-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the session as the other replica reads it (-want +got):\n%s", diff)
	}
	if _, err := b.ConsoleSession(ctx, "session-id-2"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("an unknown session: got %v, want a NotFound error", err)
	}
	if err := a.TouchConsoleSession(ctx, "session-id-1", start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.ConsoleSession(ctx, "session-id-1"); !got.Seen.Equal(start.Add(time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("seen after a touch: got %v, want %v", got.Seen, start.Add(time.Hour))
	}
	anon := store.ConsoleSession{ID: "anon", CSRF: "c", Created: start.Add(-2 * time.Hour), Seen: start.Add(-2 * time.Hour)}
	if err := a.SaveConsoleSession(ctx, anon); err != nil {
		t.Fatal(err)
	}
	n, err := a.ExpireConsoleSessions(ctx, start.Add(-time.Hour), start.Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Errorf("expiring: got %d, %v, want 1 session (anon)", n, err)
	}
	if _, err := b.ConsoleSession(ctx, "anon"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("an expired session: got %v, want NotFound", err)
	}
	if err := b.DeleteConsoleSession(ctx, "session-id-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ConsoleSession(ctx, "session-id-1"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("a deleted session: got %v, want NotFound", err)
	}
	if err := b.DeleteConsoleSession(ctx, "session-id-1"); err != nil {
		t.Errorf("deleting a missing session: %v", err)
	}
	if err := a.TouchConsoleSession(ctx, "session-id-1", start); fault.KindOf(err) != fault.NotFound {
		t.Errorf("touching a deleted session: got %v, want NotFound", err)
	}
}
