package store

import (
	"context"
	"fmt"
)

// The black-box tests (package store_test) put a database in states only another version of
// Switchboard would leave (a newer schema), read its schema version, tell a PostgreSQL DSN
// from a path as Open does, and wait for a Recorder's journal to be open and its Commits to
// be queued: these hooks lend them the few internals that takes.

// Exec runs a statement on the store's database through its writer.
func Exec(ctx context.Context, s Store, query string, args ...any) error {
	switch s := s.(type) {
	case *SQLite:
		_, err := s.write.ExecContext(ctx, query, args...)
		return err
	case *Postgres:
		_, err := s.pool.Exec(ctx, query, args...)
		return err
	}
	return fmt.Errorf("no database behind a %T", s)
}

// SchemaVersion returns the version of the schema the store's database has.
func SchemaVersion(ctx context.Context, s Store) (int, error) {
	v, ok := s.(interface {
		schemaVersion(context.Context) (int, error)
	})
	if !ok {
		return 0, fmt.Errorf("no schema behind a %T", s)
	}
	return v.schemaVersion(ctx)
}

// LatestVersion is the schema version this Switchboard migrates a database to.
var LatestVersion = latestVersion

// IsPostgresDSN reports whether Open takes db for a PostgreSQL DSN rather than a path.
var IsPostgresDSN = isPostgresDSN

// Journaling reports whether the Recorder's journal is open: Run has replayed what a
// previous process left in it, and Commit writes to it.
func (r *Recorder) Journaling() bool { return r.journaling.Load() }

// Accepted is how many records the Recorder has ever accepted.
func (r *Recorder) Accepted() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted
}

// Registered reports whether the Recorder has registered its process with a PostgreSQL
// history, so that Begin accounts for calls in flight.
func (r *Recorder) Registered() bool { return r.fl != nil && r.fl.on.Load() }

// FlightRows is how many starts of calls in flight the Recorder has written to a
// PostgreSQL history.
func (r *Recorder) FlightRows() int64 {
	if r.fl == nil {
		return 0
	}
	return r.fl.rows.Load()
}

// Sweeps is how many times the Recorder has looked for processes whose lease on a
// PostgreSQL history expired.
func (r *Recorder) Sweeps() int64 {
	if r.fl == nil {
		return 0
	}
	return r.fl.sweeps.Load()
}

// FlightUnwritten is how many calls begun and not ended on a PostgreSQL history have no
// row in it yet.
func (r *Recorder) FlightUnwritten() int {
	if r.fl == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, fc := range r.fl.begun {
		if fc.state != flightWritten {
			n++
		}
	}
	return n
}

// Count runs query, a SELECT (or PRAGMA) of one integer, on the store's database
// through its writer.
func Count(ctx context.Context, s Store, query string, args ...any) (int, error) {
	var n int
	switch s := s.(type) {
	case *SQLite:
		return n, s.write.QueryRowContext(ctx, query, args...).Scan(&n)
	case *Postgres:
		return n, s.pool.QueryRow(ctx, query, args...).Scan(&n)
	}
	return 0, fmt.Errorf("no database behind a %T", s)
}
