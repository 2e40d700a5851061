package taskapi_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

// The HTTP suite runs on each store the reference backend supports: the
// embedded SQLite file and PostgreSQL by DSN, both opened the way
// `switchboard builtin task-api --db` opens them (store.OpenTasks).

func TestMain(m *testing.M) {
	code := m.Run()
	testpg.StopShared()
	os.Exit(code)
}

// storeKind is a kind of database the API can keep its tasks in.
type storeKind struct {
	name string
	// dsn returns a fresh, empty database of this kind for t: a SQLite
	// path or a postgres:// DSN, as given to store.OpenTasks.
	dsn func(t *testing.T) string
	// check reports whether db is a store of this kind.
	check func(db store.TaskDatabase) bool
}

var storeKinds = []storeKind{
	{
		name:  "sqlite",
		dsn:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "tasks.db") },
		check: func(db store.TaskDatabase) bool { _, ok := db.(*store.SQLite); return ok },
	},
	{
		// A schema of its own on the shared server (testpg fails the
		// test, saying how to install PostgreSQL, when there is none).
		name:  "postgres",
		dsn:   func(t *testing.T) string { return testpg.Schema(t, testpg.Shared(t)) },
		check: func(db store.TaskDatabase) bool { _, ok := db.(*store.Postgres); return ok },
	},
}

// openTasks opens a fresh database of kind k through store.OpenTasks,
// closed when t ends.
func openTasks(t *testing.T, k storeKind) store.TaskDatabase {
	t.Helper()
	db, err := store.OpenTasks(context.Background(), k.dsn(t), store.Options{})
	if err != nil {
		t.Fatalf("store.OpenTasks (%s): %v", k.name, err)
	}
	t.Cleanup(func() { db.Close() })
	if !k.check(db) {
		t.Fatalf("store.OpenTasks (%s): got %T, want a %s store", k.name, db, k.name)
	}
	return db
}

// forEachStore runs test as a subtest per store kind, each against an API
// over a fresh database of that kind.
func forEachStore(t *testing.T, test func(t *testing.T, s *testServer)) {
	t.Helper()
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			test(t, newTestServer(t, openTasks(t, k)))
		})
	}
}

// TestStoreKinds checks the suite's plumbing: each kind's DSN opens the
// store it names, and the two kinds do not share data.
func TestStoreKinds(t *testing.T) {
	var servers []*testServer
	for _, k := range storeKinds {
		servers = append(servers, newTestServer(t, openTasks(t, k)))
	}
	servers[0].create("alice", `{"title":"only in the first store"}`)
	for i, s := range servers {
		list := s.expect(200, "alice", "GET", "/tasks", "").json(t).([]any)
		if want := map[bool]int{true: 1, false: 0}[i == 0]; len(list) != want {
			t.Errorf("%s: got %d tasks, want %d", storeKinds[i].name, len(list), want)
		}
	}
}
