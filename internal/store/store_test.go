package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestOpenChoosesEngine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b", "history.db")
	s, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*store.SQLite); !ok {
		t.Errorf("Open(%q): got %T, want *SQLite", path, s)
	}
	// New directories and the file are private.
	for p, want := range map[string]os.FileMode{
		filepath.Join(dir, "a"): 0o700 | os.ModeDir, filepath.Join(dir, "a", "b"): 0o700 | os.ModeDir, path: 0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != want {
			t.Errorf("mode of %s: got %v, want %v", p, got, want)
		}
	}

	dsns := []string{postgresTestDSN(t)}
	// (A SWITCHBOARD_TEST_POSTGRES_DSN in key=value form is not a URL, which
	// Open would take for a path: only the URL forms are tried.)
	if rest, ok := strings.CutPrefix(dsns[0], "postgres://"); ok {
		dsns = append(dsns, "postgresql://"+rest)
	} else if !store.IsPostgresDSN(dsns[0]) {
		dsns = nil
	}
	for _, dsn := range dsns {
		s, err := store.Open(ctx, dsn, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*store.Postgres); !ok {
			t.Errorf("Open(%q): got %T, want *Postgres", dsn, s)
		}
		s.Close()
	}

	if _, err := store.Open(ctx, "", store.Options{}); fault.KindOf(err) != fault.Config {
		t.Errorf("Open(\"\"): got %v, want a %q error", err, fault.Config)
	}
	// An unreachable server is a connection error (port 1: nothing listens).
	_, err = store.Open(ctx, "postgres://nobody@127.0.0.1:1/x?connect_timeout=5", store.Options{})
	if k := fault.KindOf(err); k != fault.Connection {
		t.Errorf("Open(unreachable server): got %v (kind %q), want kind %q", err, k, fault.Connection)
	}
}
