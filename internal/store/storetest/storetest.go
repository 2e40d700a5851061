// Package storetest gives tests a SQLite history database that starts
// with every migration applied, copied from one made once per test binary:
// applying the migrations to a new file costs about 20 ms of CPU under
// -race (modernc's SQL parser, with the race build's pointer checks), and
// a package whose tests open a new database in each of a hundred state
// directories spends seconds on it. Package store's own tests are the
// ones about the migrations; tests of what is built on the store start
// from the migrated copy, which is what a migration of an empty file
// makes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Migrated is an empty SQLite history database with every migration
// applied, as the bytes of its file. It is made once per process.
var Migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-migrated")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "switchboard.db")
	st, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into
	// the file and removes it; a log left behind would hold the schema.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the migrated database left a %d-byte write-ahead log", fi.Size())
	}
	return os.ReadFile(path)
})

// Seed writes the migrated empty database ([Migrated]) at path, private
// to its owner as [store.OpenSQLite] makes it, unless a file is there
// already.
func Seed(t testing.TB, path string) {
	t.Helper()
	b, err := Migrated()
	if err != nil {
		t.Fatalf("making the migrated history database: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
