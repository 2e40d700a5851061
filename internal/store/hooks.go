package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// HookRun is one run of one hook action (or of a hook that never reached
// its actions: rejected, blocked by a cycle) in the history.
type HookRun struct {
	// ID identifies the run; RecordHookRuns assigns one when empty.
	ID string `json:"id"`
	// EventID groups the runs of one event; ChainID the runs of events
	// fired by one another, Depth being the event's place in the chain
	// (0 for an event nobody's hook fired).
	EventID string `json:"event_id"`
	ChainID string `json:"chain_id"`
	Depth   int    `json:"depth"`
	Event   string `json:"event"`
	Hook    string `json:"hook"`
	// Action labels the action ("mcp github/create_issue"); "" when the
	// hook did not reach its actions.
	Action string `json:"action,omitempty"`
	// Status is success, failure, skipped, timeout, rejected, blocked or
	// cancelled.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Context is the event's context, redacted; valid JSON when set.
	Context   json.RawMessage `json:"context,omitempty"`
	StartedAt time.Time       `json:"started_at"`
	Duration  time.Duration   `json:"duration_ns"`
	// CallID is the id of the tool call an mcp action made (its record
	// in the call history); "" for other actions, and for an mcp action
	// that failed before it made one.
	CallID string `json:"call_id,omitempty"`
	// Output is what the action returned (an agent's answer, a command's
	// stdout, a tool's result), redacted; valid JSON when set. Hooks
	// record it only with history.record_values.
	Output json.RawMessage `json:"output,omitempty"`
}

// HookRunFilter selects hook runs. Empty fields match anything.
type HookRunFilter struct {
	Event  string
	Hook   string
	Status string
	// Failed keeps only runs that did not succeed: failure, timeout,
	// rejected and blocked.
	Failed bool
	// Since keeps runs that started at or after it.
	Since time.Time
	// Limit caps the number of runs returned; zero or less means
	// DefaultLimit.
	Limit int
}

// FailedHookStatuses are the statuses HookRunFilter.Failed keeps.
var FailedHookStatuses = []string{"failure", "timeout", "rejected", "blocked"}

// hookColumns are the columns of hook_runs, in the order scanHookRun and
// hookArgs use.
const hookColumns = "id, event_id, chain_id, depth, event, hook, action, status, error, context, started_at, duration_ns, call_id, output"

const numHookColumns = 14

// prepareHookRuns checks runs and returns normalised copies, as prepare
// does for calls.
func prepareHookRuns(runs []HookRun) ([]HookRun, error) {
	out := make([]HookRun, len(runs))
	for i := range runs {
		r := &runs[i]
		if r.StartedAt.IsZero() {
			return nil, fault.New(fault.Validation, "hook run %q has no start time", r.ID)
		}
		if len(r.Context) > 0 && !json.Valid(r.Context) {
			return nil, fault.New(fault.Validation, "hook run %q: context is not valid JSON", r.ID)
		}
		if len(r.Output) > 0 && !json.Valid(r.Output) {
			return nil, fault.New(fault.Validation, "hook run %q: output is not valid JSON", r.ID)
		}
		if r.ID == "" {
			r.ID = newID()
		}
		c := *r
		for _, s := range []*string{&c.ID, &c.EventID, &c.ChainID, &c.Event, &c.Hook, &c.Action, &c.Status, &c.Error, &c.CallID} {
			*s = cleanText(*s)
		}
		if len(c.Context) == 0 {
			c.Context = nil
		} else if !utf8.Valid(c.Context) {
			c.Context = json.RawMessage(strings.ToValidUTF8(string(c.Context), "\uFFFD"))
		}
		if len(c.Output) == 0 {
			c.Output = nil
		} else if !utf8.Valid(c.Output) {
			c.Output = json.RawMessage(strings.ToValidUTF8(string(c.Output), "\uFFFD"))
		}
		c.StartedAt = dbTime(c.StartedAt)
		out[i] = c
	}
	return out, nil
}

// upsertHookSQL is the statement that stores one hook run.
func (d dialect) upsertHookSQL() string { return d.upsertSQL("hook_runs", hookColumns, numHookColumns) }

// hookArgs are the arguments of upsertHookSQL for r.
func (d dialect) hookArgs(r *HookRun) []any {
	var ctx, out any // NULL
	if r.Context != nil {
		ctx = string(r.Context)
	}
	if r.Output != nil {
		out = string(r.Output)
	}
	return []any{r.ID, r.EventID, r.ChainID, int64(r.Depth), r.Event, r.Hook, r.Action, r.Status, r.Error,
		ctx, d.timeArg(r.StartedAt), int64(r.Duration), r.CallID, out}
}

// hookRunsQuery builds the query for HookRuns.
func (d dialect) hookRunsQuery(f HookRunFilter) (string, []any) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v ...any) {
		for i := range v {
			cond = strings.Replace(cond, "?", d.param(len(args)+i+1), 1)
		}
		where = append(where, cond)
		args = append(args, v...)
	}
	for _, eq := range []struct{ col, v string }{{"event", f.Event}, {"hook", f.Hook}, {"status", f.Status}} {
		if eq.v != "" {
			add(eq.col+" = ?", eq.v)
		}
	}
	if f.Failed {
		add("status IN (?, ?, ?, ?)", FailedHookStatuses[0], FailedHookStatuses[1], FailedHookStatuses[2], FailedHookStatuses[3])
	}
	if !f.Since.IsZero() {
		add("started_at >= ?", d.timeArg(dbTime(f.Since)))
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := "SELECT " + hookColumns + " FROM hook_runs"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, seq DESC LIMIT " + d.param(len(args)+1)
	return q, append(args, limit)
}

func scanHookRun(sc rowScanner) (HookRun, error) {
	var (
		r          HookRun
		depth, dur int64
		ctx, out   nullString
		started    nullTime
	)
	if err := sc.Scan(&r.ID, &r.EventID, &r.ChainID, &depth, &r.Event, &r.Hook, &r.Action, &r.Status, &r.Error,
		&ctx, &started, &dur, &r.CallID, &out); err != nil {
		return HookRun{}, err
	}
	if ctx.valid {
		r.Context = json.RawMessage(ctx.s)
	}
	if out.valid {
		r.Output = json.RawMessage(out.s)
	}
	r.Depth, r.StartedAt, r.Duration = int(depth), started.t, time.Duration(dur)
	return r, nil
}

// RecordHookRuns implements Store.
func (s *SQLite) RecordHookRuns(ctx context.Context, runs []HookRun) error {
	if len(runs) == 0 {
		return nil
	}
	rows, err := prepareHookRuns(runs)
	if err != nil {
		return err
	}
	return s.upsertRows(ctx, "hook run", sqliteDialect.upsertHookSQL(), len(rows),
		func(i int) []any { return sqliteDialect.hookArgs(&rows[i]) }, func(i int) string { return rows[i].ID })
}

// HookRuns implements Store.
func (s *SQLite) HookRuns(ctx context.Context, f HookRunFilter) ([]HookRun, error) {
	q, args := sqliteDialect.hookRunsQuery(f)
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing hook runs: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanHookRun, "listing hook runs")
}

// PruneHookRuns implements Store.
func (s *SQLite) PruneHookRuns(ctx context.Context, keep int) (int64, error) {
	return s.pruneTable(ctx, "hook_runs", "hook runs", keep)
}

// RecordHookRuns implements Store. The inserts are pipelined in one round
// trip inside a transaction.
func (p *Postgres) RecordHookRuns(ctx context.Context, runs []HookRun) error {
	if len(runs) == 0 {
		return nil
	}
	rows, err := prepareHookRuns(runs)
	if err != nil {
		return err
	}
	return p.upsertRows(ctx, "hook run", postgresDialect.upsertHookSQL(), len(rows),
		func(i int) []any { return postgresDialect.hookArgs(&rows[i]) })
}

// HookRuns implements Store.
func (p *Postgres) HookRuns(ctx context.Context, f HookRunFilter) ([]HookRun, error) {
	q, args := postgresDialect.hookRunsQuery(f)
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing hook runs: %w", err)
	}
	defer rows.Close()
	return collect(rows, scanHookRun, "listing hook runs")
}

// PruneHookRuns implements Store.
func (p *Postgres) PruneHookRuns(ctx context.Context, keep int) (int64, error) {
	return p.pruneTable(ctx, "hook_runs", "hook runs", keep)
}
