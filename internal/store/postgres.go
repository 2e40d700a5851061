package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// migrationLockKey is the advisory lock that serialises migrations of
// processes opening the same database at once ("switchboard" in ASCII,
// truncated to fit a bigint).
const migrationLockKey int64 = 0x7377_6974_6368_626f

// Postgres is a Store in a PostgreSQL database, for Switchboard processes
// that share one history. Its tables live in the first schema of the
// connection's search_path; give Switchboard a database, or a schema
// (search_path in the DSN), of its own.
type Postgres struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

var postgresDialect = dialect{
	param: func(n int) string { return "$" + strconv.Itoa(n) },
	timeArg: func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	},
}

// OpenPostgres connects to the PostgreSQL database at dsn (a URL or
// key=value connection string, as libpq takes) and brings its schema up
// to date.
func OpenPostgres(ctx context.Context, dsn string, opts Options) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password from this error.
		return nil, fault.Wrap(fault.Config, err, "reading the PostgreSQL connection string")
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "reading the PostgreSQL connection string")
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fault.Wrap(fault.Connection, err, "connecting to PostgreSQL at %s:%d", cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	}
	p := &Postgres{pool: pool, log: opts.logger().With(logKeyBackend, "postgres")}
	if err := p.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return p, nil
}

// migrate applies pending migrations in one transaction, holding an
// advisory lock so that concurrent openers apply them once.
func (p *Postgres) migrate(ctx context.Context) error {
	var applied []migration
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL
		)`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
			return err
		}
		todo, err := pending(current)
		if err != nil {
			return err
		}
		for _, m := range todo {
			for _, stmt := range m.postgres {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return migrationError(m, err)
				}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
				m.version, m.name, time.Now()); err != nil {
				return migrationError(m, err)
			}
		}
		applied = todo
		return nil
	})
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return err
		}
		return fmt.Errorf("migrating the PostgreSQL history database: %w", err)
	}
	for _, m := range applied {
		p.log.Info("applied schema migration", logKeyVersion, m.version, logKeyName, m.name)
	}
	return nil
}

// pgUnavailable reports whether err says that the database could not be
// reached or cannot work for now — restarted, unreachable, out of disk
// space or connections — rather than that it refused what was sent, so
// that the same write may succeed later.
func pgUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true // no answer: the connection failed
	}
	if len(pe.Code) < 2 {
		return false
	}
	switch pe.Code[:2] {
	case "08", // connection exception
		"40", // transaction rollback: serialization failure, deadlock
		"53", // insufficient resources: disk full, out of memory, too many connections
		"57", // operator intervention: shutting down, cannot connect now
		"58": // system error: I/O
		return true
	}
	return false
}

// schemaVersion reports the newest applied migration.
func (p *Postgres) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := p.pool.QueryRow(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// RecordCalls implements Store. The inserts are pipelined in one round
// trip inside a transaction.
func (p *Postgres) RecordCalls(ctx context.Context, recs []CallRecord) error {
	return p.writeCalls(ctx, "", nil, recs, nil)
}

// upsertRows runs query (an upsert) for n rows in one transaction, the
// statements pipelined in one round trip. what names a row in messages.
func (p *Postgres) upsertRows(ctx context.Context, what, query string, n int, args func(int) []any) error {
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		for i := range n {
			b.Queue(query, args(i)...)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("recording %d %ss: %w", n, what, err)
	}
	return nil
}

// Calls implements Store.
func (p *Postgres) Calls(ctx context.Context, f CallFilter) ([]CallRecord, error) {
	var before *position
	if f.BeforeID != "" {
		var (
			t   time.Time
			pos position
		)
		err := p.pool.QueryRow(ctx, "SELECT started_at, seq FROM calls WHERE id = $1", f.BeforeID).Scan(&t, &pos.seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, notFound(f.BeforeID)
		}
		if err != nil {
			return nil, fmt.Errorf("listing calls before %s: %w", f.BeforeID, err)
		}
		pos.startedAt = t
		before = &pos
	}
	q, args := postgresDialect.callsQuery(f, before)
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing calls: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanCall, "listing calls")
}

// Call implements Store.
func (p *Postgres) Call(ctx context.Context, id string) (CallRecord, error) {
	r, err := scanCall(p.pool.QueryRow(ctx, "SELECT "+callColumns+" FROM calls WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return CallRecord{}, notFound(id)
	}
	if err != nil {
		return CallRecord{}, fmt.Errorf("reading call %s: %w", id, err)
	}
	return r, nil
}

// Prune implements Store.
func (p *Postgres) Prune(ctx context.Context, keep int) (int64, error) {
	return p.pruneTable(ctx, "calls", "call history", keep)
}

// pruneTable deletes all but the newest keep rows of table (calls or
// hook_runs: both are ordered by started_at, seq). what names the table
// in messages.
func (p *Postgres) pruneTable(ctx context.Context, table, what string, keep int) (int64, error) {
	if err := checkKeep(keep); err != nil {
		return 0, err
	}
	var n int64
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if keep == 0 {
			tag, err := tx.Exec(ctx, "DELETE FROM "+table)
			n = tag.RowsAffected()
			return err
		}
		// The oldest row to keep; everything before it goes.
		var (
			t   time.Time
			seq int64
		)
		err := tx.QueryRow(ctx, "SELECT started_at, seq FROM "+table+" ORDER BY started_at DESC, seq DESC LIMIT 1 OFFSET $1",
			keep-1).Scan(&t, &seq)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // no more than keep rows
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE (started_at, seq) < ($1, $2)", t, seq)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pruning %s: %w", what, err)
	}
	return n, nil
}

// LoadState implements upstream.StateStore.
func (p *Postgres) LoadState(ctx context.Context, server string) (upstream.Record, error) {
	var data string
	err := p.pool.QueryRow(ctx, "SELECT state FROM server_state WHERE server = $1", server).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return upstream.Record{}, nil
	}
	if err != nil {
		return upstream.Record{}, fmt.Errorf("loading state of server %s: %w", server, err)
	}
	return unmarshalState(server, data)
}

// SaveState implements upstream.StateStore. Saving the zero Record
// forgets the server.
func (p *Postgres) SaveState(ctx context.Context, server string, r upstream.Record) error {
	var err error
	if r == (upstream.Record{}) {
		_, err = p.pool.Exec(ctx, "DELETE FROM server_state WHERE server = $1", server)
	} else {
		var data string
		if data, err = marshalState(r); err == nil {
			_, err = p.pool.Exec(ctx, `INSERT INTO server_state (server, state, updated_at) VALUES ($1, $2, $3)
				ON CONFLICT (server) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
				server, data, time.Now())
		}
	}
	if err != nil {
		return fmt.Errorf("saving state of server %s: %w", server, err)
	}
	return nil
}

// Close implements Store.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}
