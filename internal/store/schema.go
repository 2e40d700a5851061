package store

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A migration moves the schema from version-1 to version. Both engines
// get the same logical schema; the SQL differs only in types:
//
//   - times: SQLite INTEGER Unix microseconds, PostgreSQL timestamptz
//   - booleans: SQLite INTEGER 0/1, PostgreSQL boolean
//   - seq: SQLite's rowid, PostgreSQL an identity column
//
// Migrations are append-only: never edit one that has shipped, add the
// next version instead.
type migration struct {
	version  int
	name     string
	sqlite   []string
	postgres []string
}

var migrations = []migration{
	{
		version: 1,
		name:    "calls and server state",
		sqlite: []string{
			`CREATE TABLE calls (
				seq           INTEGER PRIMARY KEY,
				id            TEXT    NOT NULL UNIQUE,
				source        TEXT    NOT NULL,
				identity      TEXT    NOT NULL,
				server        TEXT    NOT NULL,
				tool          TEXT    NOT NULL,
				args          TEXT,
				status        TEXT    NOT NULL,
				error_kind    TEXT    NOT NULL,
				error_message TEXT    NOT NULL,
				started_at    INTEGER NOT NULL,
				finished_at   INTEGER,
				duration_ns   INTEGER NOT NULL,
				retries       INTEGER NOT NULL,
				result_bytes  INTEGER NOT NULL,
				truncated     INTEGER NOT NULL,
				partial       INTEGER NOT NULL
			) STRICT`,
			`CREATE INDEX calls_started_at ON calls (started_at, seq)`,
			`CREATE INDEX calls_server_tool ON calls (server, tool, started_at)`,
			`CREATE INDEX calls_status ON calls (status, started_at)`,
			`CREATE TABLE server_state (
				server     TEXT    PRIMARY KEY,
				state      TEXT    NOT NULL,
				updated_at INTEGER NOT NULL
			) STRICT`,
		},
		postgres: []string{
			`CREATE TABLE calls (
				seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
				id            text        NOT NULL UNIQUE,
				source        text        NOT NULL,
				identity      text        NOT NULL,
				server        text        NOT NULL,
				tool          text        NOT NULL,
				args          text,
				status        text        NOT NULL,
				error_kind    text        NOT NULL,
				error_message text        NOT NULL,
				started_at    timestamptz NOT NULL,
				finished_at   timestamptz,
				duration_ns   bigint      NOT NULL,
				retries       integer     NOT NULL,
				result_bytes  bigint      NOT NULL,
				truncated     boolean     NOT NULL,
				partial       boolean     NOT NULL
			)`,
			`CREATE INDEX calls_started_at ON calls (started_at, seq)`,
			`CREATE INDEX calls_server_tool ON calls (server, tool, started_at)`,
			`CREATE INDEX calls_status ON calls (status, started_at)`,
			`CREATE TABLE server_state (
				server     text        PRIMARY KEY,
				state      text        NOT NULL,
				updated_at timestamptz NOT NULL
			)`,
		},
	},
	{
		version: 2,
		name:    "tasks",
		sqlite: []string{
			// AUTOINCREMENT: the ID of a deleted task is never given to
			// another, as PostgreSQL's identity column never does.
			`CREATE TABLE tasks (
				id          INTEGER PRIMARY KEY AUTOINCREMENT,
				user_id     TEXT    NOT NULL,
				title       TEXT    NOT NULL,
				description TEXT,
				completed   INTEGER NOT NULL,
				priority    TEXT    NOT NULL CHECK (priority IN ('Low', 'Medium', 'High', 'Urgent')),
				due_date    INTEGER,
				created_at  INTEGER NOT NULL,
				updated_at  INTEGER NOT NULL
			) STRICT`,
			`CREATE INDEX tasks_user_id ON tasks (user_id, id)`,
		},
		postgres: []string{
			`CREATE TABLE tasks (
				id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
				user_id     text        NOT NULL,
				title       text        NOT NULL,
				description text,
				completed   boolean     NOT NULL,
				priority    text        NOT NULL CHECK (priority IN ('Low', 'Medium', 'High', 'Urgent')),
				due_date    timestamptz,
				created_at  timestamptz NOT NULL,
				updated_at  timestamptz NOT NULL
			)`,
			`CREATE INDEX tasks_user_id ON tasks (user_id, id)`,
		},
	},
	{
		version: 3,
		name:    "hook runs",
		sqlite: []string{
			`CREATE TABLE hook_runs (
				seq         INTEGER PRIMARY KEY,
				id          TEXT    NOT NULL UNIQUE,
				event_id    TEXT    NOT NULL,
				chain_id    TEXT    NOT NULL,
				depth       INTEGER NOT NULL,
				event       TEXT    NOT NULL,
				hook        TEXT    NOT NULL,
				action      TEXT    NOT NULL,
				status      TEXT    NOT NULL,
				error       TEXT    NOT NULL,
				context     TEXT,
				started_at  INTEGER NOT NULL,
				duration_ns INTEGER NOT NULL
			) STRICT`,
			`CREATE INDEX hook_runs_started_at ON hook_runs (started_at, seq)`,
			`CREATE INDEX hook_runs_hook ON hook_runs (hook, started_at)`,
			`CREATE INDEX hook_runs_status ON hook_runs (status, started_at)`,
		},
		postgres: []string{
			`CREATE TABLE hook_runs (
				seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
				id          text        NOT NULL UNIQUE,
				event_id    text        NOT NULL,
				chain_id    text        NOT NULL,
				depth       integer     NOT NULL,
				event       text        NOT NULL,
				hook        text        NOT NULL,
				action      text        NOT NULL,
				status      text        NOT NULL,
				error       text        NOT NULL,
				context     text,
				started_at  timestamptz NOT NULL,
				duration_ns bigint      NOT NULL
			)`,
			`CREATE INDEX hook_runs_started_at ON hook_runs (started_at, seq)`,
			`CREATE INDEX hook_runs_hook ON hook_runs (hook, started_at)`,
			`CREATE INDEX hook_runs_status ON hook_runs (status, started_at)`,
		},
	},
	{
		version: 4,
		name:    "console sessions",
		sqlite: []string{
			`CREATE TABLE console_sessions (
				id_hash     TEXT    PRIMARY KEY,
				csrf        TEXT    NOT NULL,
				authed      INTEGER NOT NULL,
				token       TEXT    NOT NULL,
				fingerprint TEXT    NOT NULL,
				user_name   TEXT    NOT NULL,
				created_at  INTEGER NOT NULL,
				seen_at     INTEGER NOT NULL
			) STRICT`,
			`CREATE INDEX console_sessions_seen_at ON console_sessions (seen_at)`,
		},
		postgres: []string{
			`CREATE TABLE console_sessions (
				id_hash     text        PRIMARY KEY,
				csrf        text        NOT NULL,
				authed      boolean     NOT NULL,
				token       text        NOT NULL,
				fingerprint text        NOT NULL,
				user_name   text        NOT NULL,
				created_at  timestamptz NOT NULL,
				seen_at     timestamptz NOT NULL
			)`,
			`CREATE INDEX console_sessions_seen_at ON console_sessions (seen_at)`,
		},
	},
	{
		version: 5,
		name:    "calls made again after URL elicitations",
		sqlite: []string{
			`ALTER TABLE calls ADD COLUMN url_elicitations INTEGER NOT NULL DEFAULT 0`,
		},
		postgres: []string{
			`ALTER TABLE calls ADD COLUMN url_elicitations integer NOT NULL DEFAULT 0`,
		},
	},
	{
		version: 6,
		name:    "calls that asked their client in input-required results",
		sqlite: []string{
			`ALTER TABLE calls ADD COLUMN input_rounds INTEGER NOT NULL DEFAULT 0`,
		},
		postgres: []string{
			`ALTER TABLE calls ADD COLUMN input_rounds integer NOT NULL DEFAULT 0`,
		},
	},
	{
		version: 7,
		name:    "what in its source made a call",
		sqlite: []string{
			`ALTER TABLE calls ADD COLUMN origin TEXT NOT NULL DEFAULT ''`,
		},
		postgres: []string{
			`ALTER TABLE calls ADD COLUMN origin text NOT NULL DEFAULT ''`,
		},
	},
	{
		version: 8,
		name:    "the call a hook's mcp action made, and what an action returned",
		sqlite: []string{
			`ALTER TABLE hook_runs ADD COLUMN call_id TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE hook_runs ADD COLUMN output TEXT`,
		},
		postgres: []string{
			`ALTER TABLE hook_runs ADD COLUMN call_id text NOT NULL DEFAULT ''`,
			`ALTER TABLE hook_runs ADD COLUMN output text`,
		},
	},
	{
		version: 9,
		name:    "calls in flight of the processes sharing a PostgreSQL history",
		// A PostgreSQL history is shared by processes on several hosts,
		// so it keeps their calls in flight in the database, each
		// process holding a lease (postgres_flight.go). SQLite keeps
		// them in a file beside its journal (inflight.go), which a
		// process's death unlocks: it has the tables, for one schema,
		// and leaves them empty.
		sqlite: []string{
			`CREATE TABLE replicas (
				id         TEXT    PRIMARY KEY,
				host       TEXT    NOT NULL,
				pid        INTEGER NOT NULL,
				started_at INTEGER NOT NULL,
				renewed_at INTEGER NOT NULL,
				expires_at INTEGER NOT NULL
			) STRICT`,
			`CREATE TABLE calls_in_flight (
				id         TEXT    PRIMARY KEY,
				replica    TEXT    NOT NULL,
				source     TEXT    NOT NULL,
				identity   TEXT    NOT NULL,
				server     TEXT    NOT NULL,
				tool       TEXT    NOT NULL,
				origin     TEXT    NOT NULL,
				started_at INTEGER NOT NULL
			) STRICT`,
		},
		postgres: []string{
			`CREATE TABLE replicas (
				id         text        PRIMARY KEY,
				host       text        NOT NULL,
				pid        integer     NOT NULL,
				started_at timestamptz NOT NULL,
				renewed_at timestamptz NOT NULL,
				expires_at timestamptz NOT NULL
			)`,
			// UNLOGGED: a row lives about as long as its call and is
			// written twice (in, out) for every call long enough to
			// be noted; without WAL that costs a fraction. A crash of
			// the database (not a clean restart) empties the table,
			// and a standby does not have it: the calls in flight
			// then go unaccounted for, should their process die too.
			`CREATE UNLOGGED TABLE calls_in_flight (
				id         text        PRIMARY KEY,
				replica    text        NOT NULL,
				source     text        NOT NULL,
				identity   text        NOT NULL,
				server     text        NOT NULL,
				tool       text        NOT NULL,
				origin     text        NOT NULL,
				started_at timestamptz NOT NULL
			)`,
		},
	},
}

// latestVersion is the schema version this build writes.
func latestVersion() int { return migrations[len(migrations)-1].version }

// pending returns the migrations after version current, or an error if
// the database is newer than this build.
func pending(current int) ([]migration, error) {
	if current > latestVersion() {
		return nil, fault.New(fault.Config,
			"the database has schema version %d, newer than this Switchboard knows (%d)",
			current, latestVersion()).
			WithSuggestions("upgrade Switchboard, or point it at another database")
	}
	var out []migration
	for _, m := range migrations {
		if m.version > current {
			out = append(out, m)
		}
	}
	return out, nil
}

func migrationError(m migration, err error) error {
	return fmt.Errorf("applying schema migration %d (%s): %w", m.version, m.name, err)
}
