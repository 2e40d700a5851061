package storetest_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
)

// TestSeedIsMigrated: a seeded file opens with no migration left to
// apply, private to its owner, and a file already there is left alone.
func TestSeedIsMigrated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "switchboard.db")
	storetest.Seed(t, path)
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("got mode %v, want 0600", fi.Mode().Perm())
	}
	var logs bytes.Buffer
	st, err := store.OpenSQLite(context.Background(), path, store.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "applied schema migration") {
		t.Errorf("opening the seeded database applied migrations:\n%s", logs.String())
	}

	// What a fresh file gets, for contrast: the migrations are applied and logged.
	logs.Reset()
	st, err = store.OpenSQLite(context.Background(), filepath.Join(dir, "new.db"), store.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if !strings.Contains(logs.String(), "applied schema migration") {
		t.Errorf("a new database logged no migration, so the check above proves nothing:\n%s", logs.String())
	}

	other := filepath.Join(dir, "other.db")
	if err := os.WriteFile(other, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	storetest.Seed(t, other)
	if b, _ := os.ReadFile(other); string(b) != "not a database" {
		t.Errorf("Seed replaced a file that was there: got %d bytes", len(b))
	}
}
