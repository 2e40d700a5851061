package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A PostgreSQL history accounts for the calls in flight of every process
// that shares it (the replicas of a team gateway, and CLI commands that
// run without a daemon). A process registers itself in replicas with a
// lease it renews (Recorder.Run, every third of the lease); the start of
// each of its calls is a row of calls_in_flight naming it, deleted in the
// transaction that writes the call's record. Any process that finds a
// lease expired — a replica killed, crashed, or cut off from the database
// for longer than the lease — takes that replica's row and its calls in
// flight away in one transaction, and records each of those calls that
// has no record as an error saying its process stopped while it ran. A
// live replica renews its lease well within it, so its calls are never
// taken; one that was cut off for longer registers again, and the record
// of each of its calls that then ends replaces the error.

// replica is a process writing to a shared history.
type replica struct {
	id   string
	host string
	pid  int
}

// flightStore is a Store that keeps the calls in flight of the processes
// sharing it (Postgres).
type flightStore interface {
	Store
	// registerReplica registers r, or renews its lease, for lease from now
	// (the database's clock).
	registerReplica(ctx context.Context, r replica, lease time.Duration) error
	// renewReplica extends r's lease; false when r is not registered (its
	// lease expired and another process took its calls away).
	renewReplica(ctx context.Context, id string, lease time.Duration) (bool, error)
	// writeCalls writes, in one transaction, the starts of calls replica
	// runs, the records recs (as RecordCalls), and forgets the calls in
	// flight ended (their records written before or in it).
	writeCalls(ctx context.Context, replica string, starts, recs []CallRecord, ended []string) error
	// sweepReplicas takes away the replicas other than self whose lease
	// expired and was shorter than contact — how long self has been in
	// contact with the database without a break — and self too when it
	// retires, with their calls in flight, recording each of those calls
	// that has no record as interrupted. It reports how many it recorded
	// and the replicas it took away.
	sweepReplicas(ctx context.Context, self string, retire bool, contact time.Duration) (int, []string, error)
}

var _ flightStore = (*Postgres)(nil)

// registerReplica implements flightStore.
func (p *Postgres) registerReplica(ctx context.Context, r replica, lease time.Duration) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO replicas (id, host, pid, started_at, renewed_at, expires_at)
		VALUES ($1, $2, $3, now(), now(), now() + make_interval(secs => $4))
		ON CONFLICT (id) DO UPDATE SET renewed_at = now(), expires_at = excluded.expires_at`,
		r.id, cleanText(r.host), r.pid, lease.Seconds())
	if err != nil {
		return fmt.Errorf("registering this process with the history: %w", err)
	}
	return nil
}

// renewReplica implements flightStore.
func (p *Postgres) renewReplica(ctx context.Context, id string, lease time.Duration) (bool, error) {
	tag, err := p.pool.Exec(ctx, `UPDATE replicas SET renewed_at = now(), expires_at = now() + make_interval(secs => $2)
		WHERE id = $1`, id, lease.Seconds())
	if err != nil {
		return false, fmt.Errorf("renewing this process's lease on the history: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// flightSQL forgets the calls in flight whose ids are $9 and notes those
// whose columns are the arrays $1, $3...$8 as replica $2's, in one
// statement whatever their number — unless the replica is not registered
// (its lease expired meanwhile: they would be taken away as soon as
// written).
const flightSQL = `WITH ended AS (DELETE FROM calls_in_flight WHERE id = ANY($9::text[]))
	INSERT INTO calls_in_flight (id, replica, source, identity, server, tool, origin, started_at)
	SELECT u.id, $2, u.source, u.identity, u.server, u.tool, u.origin, u.started_at
	FROM unnest($1::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
		AS u(id, source, identity, server, tool, origin, started_at)
	WHERE EXISTS (SELECT 1 FROM replicas WHERE id = $2)
	ON CONFLICT (id) DO NOTHING`

// writeCalls implements flightStore. A transaction that writes only
// starts and ends of calls does not wait for its WAL to be flushed
// (synchronous_commit off): it must outlive the process that writes it,
// not the database's own crash, and no caller waits for it.
func (p *Postgres) writeCalls(ctx context.Context, replica string, starts, recs []CallRecord, ended []string) error {
	if len(starts)+len(recs)+len(ended) == 0 {
		return nil
	}
	rows, err := prepare(recs)
	if err != nil {
		return err
	}
	begun, err := prepare(starts)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var b pgx.Batch
		if len(rows) == 0 {
			b.Queue("SET LOCAL synchronous_commit TO OFF")
		}
		q := postgresDialect.upsertCallSQL()
		for i := range rows {
			b.Queue(q, postgresDialect.callArgs(&rows[i])...)
		}
		if len(begun)+len(ended) > 0 {
			// After the records: the rows of calls whose records are
			// among them go with them.
			b.Queue(flightSQL, flightArgs(replica, begun, ended)...)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		if len(rows) == 0 {
			err = fmt.Errorf("noting %d calls in flight: %w", len(begun)+len(ended), err)
		} else {
			err = fmt.Errorf("recording %d calls: %w", len(rows), err)
		}
		if pgUnavailable(err) {
			return unavailableError{err} // the Recorder waits for the database
		}
		return err
	}
	return nil
}

// flightArgs are the arguments of flightSQL.
func flightArgs(replica string, begun []CallRecord, ended []string) []any {
	n := len(begun)
	ids, sources, identities := make([]string, n), make([]string, n), make([]string, n)
	servers, tools, origins := make([]string, n), make([]string, n), make([]string, n)
	starts := make([]time.Time, n)
	for i := range begun {
		c := &begun[i]
		ids[i], sources[i], identities[i] = c.ID, c.Source, c.Identity
		servers[i], tools[i], origins[i], starts[i] = c.Server, c.Tool, c.Origin, c.StartedAt
	}
	if ended == nil {
		ended = []string{}
	}
	return []any{ids, replica, sources, identities, servers, tools, origins, starts, ended}
}

// deadReplica is a replica sweepReplicas took away.
type deadReplica struct {
	replica
	renewed  time.Time
	retiring bool
}

// sweepReplicas implements flightStore. A replica is taken only once the
// caller has been in contact with the database for longer than that
// replica's lease: the database was then reachable for a whole lease in
// which the replica renewed nothing, whereas after an outage of the
// database (a restart) every lease has expired, and the live replicas
// get a lease's time to renew theirs. Two processes sweeping at once
// take each replica once: the second one's DELETE waits for the first's
// and then finds its rows gone.
func (p *Postgres) sweepReplicas(ctx context.Context, self string, retire bool, contact time.Duration) (int, []string, error) {
	var (
		recs []CallRecord
		ids  []string
	)
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		recs, ids = nil, nil
		rows, err := tx.Query(ctx, `DELETE FROM replicas
			WHERE CASE WHEN id = $1 THEN $2
				ELSE expires_at < now() AND expires_at - renewed_at < make_interval(secs => $3) END
			RETURNING id, host, pid, renewed_at`, self, retire, contact.Seconds())
		if err != nil {
			return err
		}
		dead := map[string]deadReplica{}
		for rows.Next() {
			var d deadReplica
			if err := rows.Scan(&d.id, &d.host, &d.pid, &d.renewed); err != nil {
				rows.Close()
				return err
			}
			d.retiring = d.id == self
			dead[d.id] = d
			ids = append(ids, d.id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Every call in flight whose replica is no longer registered:
		// those just taken away, and any a replica left unregistered.
		rows, err = tx.Query(ctx, `DELETE FROM calls_in_flight f
			WHERE NOT EXISTS (SELECT 1 FROM replicas r WHERE r.id = f.replica)
			RETURNING id, replica, source, identity, server, tool, origin, started_at`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				rec CallRecord
				rep string
			)
			if err := rows.Scan(&rec.ID, &rep, &rec.Source, &rec.Identity, &rec.Server, &rec.Tool, &rec.Origin, &rec.StartedAt); err != nil {
				rows.Close()
				return err
			}
			rec.StartedAt = rec.StartedAt.UTC()
			rec.Status, rec.ErrorKind = "error", string(fault.Internal)
			rec.ErrorMessage = interruptedOn(rep, dead)
			recs = append(recs, rec)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		prepared, err := prepare(recs)
		if err != nil {
			return err
		}
		// A call whose record got through keeps it.
		q := "INSERT INTO calls (" + callColumns + ") VALUES (" + postgresDialect.params(numCallColumns) + ") ON CONFLICT (id) DO NOTHING"
		var b pgx.Batch
		for i := range prepared {
			b.Queue(q, postgresDialect.callArgs(&prepared[i])...)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return 0, nil, fmt.Errorf("recording the calls of processes that stopped: %w", err)
	}
	return len(recs), ids, nil
}

// interruptedOn is the error message of a call in flight on replica rep
// when it was taken away.
func interruptedOn(rep string, dead map[string]deadReplica) string {
	d, ok := dead[rep]
	switch {
	case !ok:
		return fmt.Sprintf("%s: process %s is no longer registered with the history; the server may have run it", InterruptedMessage, rep)
	case d.retiring:
		return fmt.Sprintf("%s: pid %d on %s (process %s) shut down while the call still ran; the server may have run it",
			InterruptedMessage, d.pid, d.host, d.id)
	}
	return fmt.Sprintf("%s: pid %d on %s (process %s) last renewed its lease on the history at %s; the server may have run it",
		InterruptedMessage, d.pid, d.host, d.id, d.renewed.UTC().Format(time.RFC3339))
}
