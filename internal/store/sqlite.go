package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// sqliteBusyTimeout is how long a connection waits for another process's
// lock (a second Switchboard on the same file) before SQLITE_BUSY.
const sqliteBusyTimeout = 10 * time.Second

// SQLite is a Store in one SQLite database file, in WAL mode.
//
// Within the process there is a single writer: all writes go through a
// pool of one connection, so concurrent RecordCalls queue in Go instead of
// failing with SQLITE_BUSY, and every write transaction takes the lock
// up front (BEGIN IMMEDIATE). Reads use a separate pool and, thanks to WAL,
// run alongside the writer.
type SQLite struct {
	path  string
	write *sql.DB // one connection
	read  *sql.DB
	log   *slog.Logger
}

var sqliteDialect = dialect{
	param: func(int) string { return "?" },
	timeArg: func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UnixMicro()
	},
}

// OpenSQLite opens (creating if needed) the history database at path and
// brings its schema up to date. Missing directories are created with mode
// 0700 and a new database file with mode 0600: the history holds who
// called what.
//
// Every connection sets busy_timeout (waits for another process's lock),
// foreign_keys=ON, and synchronous=NORMAL. In WAL mode NORMAL syncs the WAL
// only at checkpoints, not at every commit: a committed transaction
// survives the process being killed (it is in the OS page cache), the
// database is never corrupted, and only an OS crash or power loss can lose
// the last few commits. For a call history that is the right trade; FULL
// would cost an fsync per batch, and would not make an answered call
// durable against power loss by itself: the Recorder's journal (which
// holds answered calls until their batch commits) is not fsynced either
// (docs/operations.md, "What a crash can lose").
func OpenSQLite(ctx context.Context, path string, opts Options) (*SQLite, error) {
	if path == "" {
		return nil, fault.New(fault.Config, "no path given for the SQLite database")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("opening SQLite database %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fault.Wrap(fault.Config, err, "creating the directory of SQLite database %s", abs)
	}
	// Create the file ourselves so that it is private; SQLite gives its
	// -wal and -shm files the same mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "opening SQLite database %s", abs)
	}
	f.Close()

	busy := fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds())
	write, err := sql.Open("sqlite", sqliteDSN(abs, url.Values{
		"_txlock": {"immediate"},
		"_pragma": {busy, "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)",
			"journal_size_limit(67108864)"},
	}))
	if err != nil {
		return nil, fmt.Errorf("opening SQLite database %s: %w", abs, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxIdleTime(0)
	write.SetConnMaxLifetime(0)

	read, err := sql.Open("sqlite", sqliteDSN(abs, url.Values{
		"_pragma": {busy, "foreign_keys(ON)", "query_only(ON)"},
	}))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("opening SQLite database %s: %w", abs, err)
	}
	n := max(2, runtime.GOMAXPROCS(0))
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)

	s := &SQLite{path: abs, write: write, read: read, log: opts.logger().With(logKeyBackend, "sqlite")}
	if err := s.init(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// sqliteDSN is a file: URI for path, which keeps names with '?' or '#'
// intact.
func sqliteDSN(path string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

func (s *SQLite) init(ctx context.Context) error {
	var mode string
	if err := s.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("opening history database %s: %w", s.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("opening history database %s: journal mode is %q, not WAL", s.path, mode)
	}
	return s.migrate(ctx)
}

// migrate applies pending migrations in one transaction. BEGIN IMMEDIATE
// (the write pool's _txlock) makes a second process opening the same file
// wait, then find nothing left to do.
func (s *SQLite) migrate(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrating history database %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("migrating history database %s: %w", s.path, err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("migrating history database %s: %w", s.path, err)
	}
	todo, err := pending(current)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		return nil
	}
	for _, m := range todo {
		for _, stmt := range m.sqlite {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return migrationError(m, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return migrationError(m, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating history database %s: %w", s.path, err)
	}
	for _, m := range todo {
		s.log.Info("applied schema migration", logKeyVersion, m.version, logKeyName, m.name)
	}
	return nil
}

// schemaVersion reports the newest applied migration.
func (s *SQLite) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.read.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// Path is the absolute path of the database file.
func (s *SQLite) Path() string { return s.path }

// RecordCalls implements Store.
func (s *SQLite) RecordCalls(ctx context.Context, recs []CallRecord) error {
	if len(recs) == 0 {
		return nil
	}
	rows, err := prepare(recs)
	if err != nil {
		return err
	}
	err = s.upsertRows(ctx, "call", sqliteDialect.upsertCallSQL(), len(rows),
		func(i int) []any { return sqliteDialect.callArgs(&rows[i]) }, func(i int) string { return rows[i].ID })
	if sqliteUnavailable(err) {
		return unavailableError{err} // the Recorder waits for space
	}
	return err
}

// sqliteUnavailable reports whether err says that the database's disk is
// full or failed (SQLITE_FULL, SQLITE_IOERR), so that the same write may
// succeed once space is freed.
func sqliteUnavailable(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
		return true
	}
	return false
}

// upsertRows runs query (an upsert) for n rows in one transaction: all or
// none. what names a row in messages ("call"), args and id give row i's.
func (s *SQLite) upsertRows(ctx context.Context, what, query string, n int, args func(int) []any, id func(int) string) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording %d %ss: %w", n, what, err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return fmt.Errorf("recording %d %ss: %w", n, what, err)
	}
	defer stmt.Close()
	// Each row runs on a context without cancellation: with one, the
	// driver starts a goroutine per statement to interrupt it, which
	// costs more than inserting the row. ctx is checked between rows
	// instead, and the transaction is still bound to it.
	rowCtx := context.WithoutCancel(ctx)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("recording %d %ss: %w", n, what, err)
		}
		if _, err := stmt.ExecContext(rowCtx, args(i)...); err != nil {
			return fmt.Errorf("recording %s %s: %w", what, id(i), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording %d %ss: %w", n, what, err)
	}
	return nil
}

// Calls implements Store.
func (s *SQLite) Calls(ctx context.Context, f CallFilter) ([]CallRecord, error) {
	var before *position
	if f.BeforeID != "" {
		var p position
		err := s.read.QueryRowContext(ctx, "SELECT started_at, seq FROM calls WHERE id = ?", f.BeforeID).
			Scan(&p.startedAt, &p.seq)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound(f.BeforeID)
		}
		if err != nil {
			return nil, fmt.Errorf("listing calls before %s: %w", f.BeforeID, err)
		}
		before = &p
	}
	q, args := sqliteDialect.callsQuery(f, before)
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing calls: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanCall, "listing calls")
}

// Call implements Store.
func (s *SQLite) Call(ctx context.Context, id string) (CallRecord, error) {
	r, err := scanCall(s.read.QueryRowContext(ctx, "SELECT "+callColumns+" FROM calls WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return CallRecord{}, notFound(id)
	}
	if err != nil {
		return CallRecord{}, fmt.Errorf("reading call %s: %w", id, err)
	}
	return r, nil
}

// Prune implements Store.
func (s *SQLite) Prune(ctx context.Context, keep int) (int64, error) {
	return s.pruneTable(ctx, "calls", "call history", keep)
}

// pruneTable deletes all but the newest keep rows of table (calls or
// hook_runs: both are ordered by started_at, seq). what names the table
// in messages.
func (s *SQLite) pruneTable(ctx context.Context, table, what string, keep int) (int64, error) {
	if err := checkKeep(keep); err != nil {
		return 0, err
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("pruning %s: %w", what, err)
	}
	defer tx.Rollback()
	var res sql.Result
	if keep == 0 {
		res, err = tx.ExecContext(ctx, "DELETE FROM "+table)
	} else {
		// The oldest row to keep; everything before it goes.
		var p position
		err = tx.QueryRowContext(ctx, "SELECT started_at, seq FROM "+table+" ORDER BY started_at DESC, seq DESC LIMIT 1 OFFSET ?",
			keep-1).Scan(&p.startedAt, &p.seq)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil // no more than keep rows
		}
		if err != nil {
			return 0, fmt.Errorf("pruning %s: %w", what, err)
		}
		res, err = tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE (started_at, seq) < (?, ?)", p.startedAt, p.seq)
	}
	if err != nil {
		return 0, fmt.Errorf("pruning %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("pruning %s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("pruning %s: %w", what, err)
	}
	return n, nil
}

// LoadState implements upstream.StateStore.
func (s *SQLite) LoadState(ctx context.Context, server string) (upstream.Record, error) {
	var data string
	err := s.read.QueryRowContext(ctx, "SELECT state FROM server_state WHERE server = ?", server).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return upstream.Record{}, nil
	}
	if err != nil {
		return upstream.Record{}, fmt.Errorf("loading state of server %s: %w", server, err)
	}
	return unmarshalState(server, data)
}

// SaveState implements upstream.StateStore. Saving the zero Record
// forgets the server.
func (s *SQLite) SaveState(ctx context.Context, server string, r upstream.Record) error {
	var err error
	if r == (upstream.Record{}) {
		_, err = s.write.ExecContext(ctx, "DELETE FROM server_state WHERE server = ?", server)
	} else {
		var data string
		if data, err = marshalState(r); err == nil {
			_, err = s.write.ExecContext(ctx, `INSERT INTO server_state (server, state, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (server) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
				server, data, time.Now().UnixMicro())
		}
	}
	if err != nil {
		return fmt.Errorf("saving state of server %s: %w", server, err)
	}
	return nil
}

// Close implements Store.
func (s *SQLite) Close() error {
	return errors.Join(s.read.Close(), s.write.Close())
}
