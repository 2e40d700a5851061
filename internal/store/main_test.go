package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpg"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Child processes: the test binary re-runs itself with envChild set to
// act as a writer that the crash tests kill.
const (
	envChild       = "SWITCHBOARD_STORE_TEST_CHILD"
	envChildEngine = "SWITCHBOARD_STORE_TEST_ENGINE" // sqlite or postgres
	envChildDB     = "SWITCHBOARD_STORE_TEST_DB"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(runChild(mode))
	}
	code := m.Run()
	testpg.StopShared()
	os.Exit(code)
}

func runChild(mode string) int {
	switch mode {
	case "crash-writer":
		return crashWriter(os.Getenv(envChildEngine), os.Getenv(envChildDB))
	case "commit-writer":
		return commitWriter(os.Getenv(envChildEngine), os.Getenv(envChildDB))
	case "inflight-writer":
		return inflightWriter(os.Getenv(envChildEngine), os.Getenv(envChildDB))
	}
	fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
	return 2
}

// testStart is the start time of the calls tests make.
var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testCall returns a realistic call record started i seconds after
// testStart.
func testCall(id string, i int) store.CallRecord {
	start := testStart.Add(time.Duration(i) * time.Second)
	return store.CallRecord{
		ID:          id,
		Source:      "gateway",
		Identity:    "alice",
		Server:      "files",
		Tool:        "read_file",
		Args:        []byte(`{"path":"string","limit":"number"}`),
		Status:      "success",
		StartedAt:   start,
		FinishedAt:  start.Add(1500 * time.Microsecond),
		Duration:    1500 * time.Microsecond,
		ResultBytes: 2048,
	}
}

// Opening stores for tests. Within one test, opening again opens the same
// database, so that a test can check what survives a reopen.

var (
	testDBMu sync.Mutex
	testDBs  = map[*testing.T]string{}
)

func testDB(t *testing.T, create func(t *testing.T) string) string {
	testDBMu.Lock()
	defer testDBMu.Unlock()
	if db, ok := testDBs[t]; ok {
		return db
	}
	db := create(t)
	testDBs[t] = db
	t.Cleanup(func() {
		testDBMu.Lock()
		defer testDBMu.Unlock()
		delete(testDBs, t)
	})
	return db
}

func openSQLiteTest(t *testing.T) store.Store {
	t.Helper()
	path := testDB(t, func(t *testing.T) string { return filepath.Join(t.TempDir(), "history.db") })
	s, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openPostgresTest(t *testing.T) store.Store {
	t.Helper()
	dsn := testDB(t, postgresTestDSN)
	s, err := store.OpenPostgres(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
