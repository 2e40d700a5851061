// Package store keeps Switchboard's durable state: the history of tool calls
// (who called which tool on which server, how it ended, how long it took),
// the runs of event hooks, and each upstream server's health record ([upstream.Record], so that
// disabling a server survives a restart).
//
// There is one interface, [Store], and two implementations: [SQLite], an
// embedded database file (pure Go, WAL mode) that is the default, and
// [Postgres], used when a PostgreSQL DSN is configured so that several
// Switchboard processes can share one history. [Open] picks between them.
// Both apply the same versioned schema migrations when they open and pass
// the same test suite.
//
// The execution engine does not write to a Store on the hot path: it hands
// each finished call to a [Recorder], which batches records in memory and
// writes them from its own goroutine, pruning old history as it goes.
package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// CallRecord is one tool call in the history.
type CallRecord struct {
	// ID identifies the call. RecordCalls assigns a random one when it is
	// empty.
	ID string
	// Source says what made the call: cli, gateway, hook, document, agent.
	Source string
	// Identity is who made the call, as the source knows them.
	Identity string
	Server   string
	Tool     string
	// Args is the argument shape or redacted values, already prepared by
	// the caller. When set it must be valid JSON; it is stored as given.
	Args json.RawMessage
	// Status is how the call ended: success, error, timeout, cancelled, ...
	Status       string
	ErrorKind    string
	ErrorMessage string
	// StartedAt is required; it orders the history. Times are stored to
	// the microsecond and read back in UTC.
	StartedAt  time.Time
	FinishedAt time.Time
	Duration   time.Duration
	Retries    int
	// ResultBytes is the size of the result the caller received.
	ResultBytes int64
	Truncated   bool
	Partial     bool
	// URLElicitations counts the URL-mode elicitations the server required
	// (error -32042) and the person completed before the call was made
	// again: a call that succeeded only after them says so. 0 for most.
	URLElicitations int `json:",omitempty"`
	// InputRounds counts the input-required results a gateway client of
	// protocol 2026-07-28 was given during the call, each asking it what
	// the server asked (elicitation, sampling, roots), before the call's
	// own result: a call that took the client's answers says so. 0 for
	// most.
	InputRounds int `json:",omitempty"`
	// Origin says what in its source made the call, for a person reading
	// the history: "hook NAME on EVENT (event ID)", "document
	// PATH:LINE", "agent step N, tool call ID". Empty for calls made
	// directly (the CLI's call, a gateway client). At most MaxOrigin
	// bytes.
	Origin string `json:",omitempty"`
}

// MaxOrigin is the longest CallRecord.Origin kept; CutOrigin cuts a
// longer one.
const MaxOrigin = 512

// CutOrigin returns origin cut to MaxOrigin bytes at a rune boundary.
func CutOrigin(origin string) string {
	if len(origin) <= MaxOrigin {
		return origin
	}
	cut := MaxOrigin
	for cut > 0 && !utf8.RuneStart(origin[cut]) {
		cut--
	}
	return origin[:cut]
}

// DefaultLimit is the number of calls [Store.Calls] returns when
// CallFilter.Limit is not set.
const DefaultLimit = 100

// CallFilter selects calls from the history. Empty fields match anything.
type CallFilter struct {
	Server   string
	Tool     string
	Status   string
	Source   string
	Identity string
	// Since keeps calls that started at or after it.
	Since time.Time
	// Limit caps the number of calls returned; zero or less means
	// DefaultLimit.
	Limit int
	// BeforeID pages through the history: only calls older than the call
	// with this ID are returned. Pass the ID of the last call of one page
	// to get the next. An ID that is not stored is a NotFound error.
	BeforeID string
	// IDPrefix keeps the calls whose ID starts with it (a short ID, as
	// the history table shows it).
	IDPrefix string
}

// Store is the durable history of tool calls and the upstream state store.
// Implementations are safe for concurrent use.
type Store interface {
	// RecordCalls stores recs in one transaction: all or none. A record
	// whose ID is already stored replaces it. Records with an empty ID are
	// given one, written back into recs.
	RecordCalls(ctx context.Context, recs []CallRecord) error
	// Calls returns the calls that match f, newest (latest StartedAt)
	// first.
	Calls(ctx context.Context, f CallFilter) ([]CallRecord, error)
	// Call returns the call with the given ID, or a *fault.Error of kind
	// NotFound.
	Call(ctx context.Context, id string) (CallRecord, error)
	// Prune deletes all but the newest keep calls and reports how many it
	// deleted.
	Prune(ctx context.Context, keep int) (int64, error)

	// RecordHookRuns stores hook runs in one transaction: all or none. A
	// run whose ID is already stored replaces it; runs with an empty ID
	// are given one, written back into runs.
	RecordHookRuns(ctx context.Context, runs []HookRun) error
	// HookRuns returns the hook runs that match f, newest first.
	HookRuns(ctx context.Context, f HookRunFilter) ([]HookRun, error)
	// PruneHookRuns deletes all but the newest keep hook runs and reports
	// how many it deleted.
	PruneHookRuns(ctx context.Context, keep int) (int64, error)

	upstream.StateStore

	// Close releases the database. The Store must not be used afterwards.
	Close() error
}

// Options configures OpenSQLite, OpenPostgres and Open.
type Options struct {
	// Logger receives migration and maintenance messages; nil discards
	// them.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Log attribute keys.
const (
	logKeyBackend  = "backend"
	logKeyVersion  = "version"
	logKeyName     = "name"
	logKeyCount    = "count"
	logKeyTotal    = "total"
	logKeyError    = "error"
	logKeyReason   = "reason"
	logKeyWait     = "wait"
	logKeyPath     = "path"
	logKeyLease    = "lease"
	logKeyReplicas = "replicas"
	logKeyDown     = "down"
)

// Open opens the call history at dsnOrPath: a postgres:// or postgresql://
// URL opens PostgreSQL, anything else is a SQLite file path.
func Open(ctx context.Context, dsnOrPath string, opts Options) (Store, error) {
	if isPostgresDSN(dsnOrPath) {
		return OpenPostgres(ctx, dsnOrPath, opts)
	}
	return OpenSQLite(ctx, dsnOrPath, opts)
}

func isPostgresDSN(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Compile-time checks that both implementations are Stores.
var (
	_ Store = (*SQLite)(nil)
	_ Store = (*Postgres)(nil)
)

// prepare checks recs and returns normalised copies: IDs assigned (and
// written back), text made valid UTF-8 without NUL bytes (PostgreSQL
// rejects both), times in UTC truncated to the microsecond (what both
// engines keep).
func prepare(recs []CallRecord) ([]CallRecord, error) {
	out := make([]CallRecord, len(recs))
	for i := range recs {
		if err := check(&recs[i]); err != nil {
			return nil, err
		}
		if recs[i].ID == "" {
			recs[i].ID = newID()
		}
		r := recs[i]
		r.ID = cleanText(r.ID)
		r.Source = cleanText(r.Source)
		r.Identity = cleanText(r.Identity)
		r.Server = cleanText(r.Server)
		r.Tool = cleanText(r.Tool)
		r.Status = cleanText(r.Status)
		r.ErrorKind = cleanText(r.ErrorKind)
		r.ErrorMessage = cleanText(r.ErrorMessage)
		r.Origin = cleanText(CutOrigin(r.Origin))
		if len(r.Args) == 0 {
			r.Args = nil
		} else if !utf8.Valid(r.Args) {
			r.Args = json.RawMessage(strings.ToValidUTF8(string(r.Args), "\uFFFD"))
		}
		r.StartedAt = dbTime(r.StartedAt)
		r.FinishedAt = dbTime(r.FinishedAt)
		out[i] = r
	}
	return out, nil
}

// check reports why rec cannot be stored, as a Validation fault.
func check(rec *CallRecord) error {
	if rec.StartedAt.IsZero() {
		return fault.New(fault.Validation, "call record %q has no start time", rec.ID)
	}
	if len(rec.Args) > 0 && !json.Valid(rec.Args) {
		return fault.New(fault.Validation, "call record %q: arguments are not valid JSON", rec.ID)
	}
	return nil
}

func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}

// unavailableError is a write that failed because the store cannot work
// for now (its database unreachable, its disk full) rather than because
// of what was written: the Recorder keeps the records and tries again
// until it can.
type unavailableError struct{ error }

func (e unavailableError) Unwrap() error { return e.error }

// isUnavailable reports whether err is, or wraps, an unavailableError.
func isUnavailable(err error) bool {
	var u unavailableError
	return errors.As(err, &u)
}

// dbTime is t as the database keeps it.
func dbTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

func newID() string { return strings.ToLower(rand.Text()) }

func notFound(id string) error {
	return fault.New(fault.NotFound, "no call %q in the history", id).
		WithSuggestions("list recent calls to find an ID")
}

func checkKeep(keep int) error {
	if keep < 0 {
		return fault.New(fault.Validation, "cannot keep %d calls: the number must be zero or more", keep)
	}
	return nil
}

// dialect is what differs in the SQL text and arguments of the two
// engines.
type dialect struct {
	// param returns the placeholder for the n-th argument (from 1).
	param func(n int) string
	// timeArg converts a time to the engine's column value; zero is NULL.
	timeArg func(t time.Time) any
}

// callColumns are the columns of calls, in the order scanCall and
// callArgs use.
const callColumns = "id, source, identity, server, tool, args, status, error_kind, error_message, " +
	"started_at, finished_at, duration_ns, retries, result_bytes, truncated, partial, url_elicitations, input_rounds, origin"

const numCallColumns = 19

// upsertCallSQL is the statement that stores one call.
func (d dialect) upsertCallSQL() string { return d.upsertSQL("calls", callColumns, numCallColumns) }

// upsertSQL is the statement that stores one row of table, whose columns
// (n of them, the id first) are listed comma-separated: a row whose id is
// already stored is replaced.
func (d dialect) upsertSQL(table, columns string, n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + columns + ") VALUES (" + d.params(n) + ") ON CONFLICT (id) DO UPDATE SET ")
	for i, c := range strings.Split(columns, ", ")[1:] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s = excluded.%s", c, c)
	}
	return b.String()
}

// params is the dialect's parameters 1 to n, comma-separated ("$1, $2").
func (d dialect) params(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString(d.param(i))
	}
	return b.String()
}

// callArgs are the arguments of upsertCallSQL for r.
func (d dialect) callArgs(r *CallRecord) []any {
	var args any // NULL
	if r.Args != nil {
		args = string(r.Args)
	}
	return []any{
		r.ID, r.Source, r.Identity, r.Server, r.Tool, args, r.Status, r.ErrorKind, r.ErrorMessage,
		d.timeArg(r.StartedAt), d.timeArg(r.FinishedAt), int64(r.Duration), int64(r.Retries),
		r.ResultBytes, r.Truncated, r.Partial, int64(r.URLElicitations), int64(r.InputRounds), r.Origin,
	}
}

// callsQuery builds the query for Calls. before, when set, is the
// (started_at, seq) position of the BeforeID cursor.
func (d dialect) callsQuery(f CallFilter, before *position) (string, []any) {
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
	for _, eq := range []struct{ col, v string }{
		{"server", f.Server}, {"tool", f.Tool}, {"status", f.Status},
		{"source", f.Source}, {"identity", f.Identity},
	} {
		if eq.v != "" {
			add(eq.col+" = ?", eq.v)
		}
	}
	if !f.Since.IsZero() {
		add("started_at >= ?", d.timeArg(dbTime(f.Since)))
	}
	if f.IDPrefix != "" {
		// substr, not LIKE: exact and case-sensitive in both databases,
		// with no pattern characters to escape.
		add("substr(id, 1, "+strconv.Itoa(utf8.RuneCountInString(f.IDPrefix))+") = ?", f.IDPrefix)
	}
	if before != nil {
		add("(started_at, seq) < (?, ?)", before.startedAt, before.seq)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	q := "SELECT " + callColumns + " FROM calls"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY started_at DESC, seq DESC LIMIT " + d.param(len(args)+1)
	args = append(args, limit)
	return q, args
}

// position is a call's place in the newest-first order. startedAt holds
// the engine's own column value.
type position struct {
	startedAt any
	seq       int64
}

// rowScanner is what *sql.Row, *sql.Rows and pgx.Rows have in common.
type rowScanner interface {
	Scan(dest ...any) error
}

// rowIter is what both database/sql and pgx return for a query.
type rowIter interface {
	rowScanner
	Next() bool
	Err() error
}

// collect scans every row with scan; doing names the work for errors.
// The caller closes rows.
func collect[T any](rows rowIter, scan func(rowScanner) (T, error), doing string) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doing, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	return out, nil
}

func scanCall(sc rowScanner) (CallRecord, error) {
	var (
		r                  CallRecord
		args               nullString
		started, finished  nullTime
		dur, retries, urls int64
		rounds             int64
		truncated, partial bool
	)
	err := sc.Scan(&r.ID, &r.Source, &r.Identity, &r.Server, &r.Tool, &args, &r.Status, &r.ErrorKind,
		&r.ErrorMessage, &started, &finished, &dur, &retries, &r.ResultBytes, &truncated, &partial, &urls, &rounds, &r.Origin)
	if err != nil {
		return CallRecord{}, err
	}
	if args.valid {
		r.Args = json.RawMessage(args.s)
	}
	r.StartedAt, r.FinishedAt = started.t, finished.t
	r.Duration, r.Retries = time.Duration(dur), int(retries)
	r.Truncated, r.Partial, r.URLElicitations, r.InputRounds = truncated, partial, int(urls), int(rounds)
	return r, nil
}

// nullTime scans a time column of either engine: SQLite keeps Unix
// microseconds in an INTEGER, PostgreSQL a timestamptz. NULL is the zero
// time.
type nullTime struct{ t time.Time }

func (n *nullTime) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		n.t = time.Time{}
	case int64:
		n.t = time.UnixMicro(v).UTC()
	case time.Time:
		n.t = v.UTC()
	default:
		return fmt.Errorf("scanning a time: unexpected %T", v)
	}
	return nil
}

// nullString scans a nullable text column of either engine.
type nullString struct {
	s     string
	valid bool
}

func (n *nullString) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*n = nullString{}
	case string:
		*n = nullString{v, true}
	case []byte:
		*n = nullString{string(v), true}
	default:
		return fmt.Errorf("scanning text: unexpected %T", v)
	}
	return nil
}

// marshalState and unmarshalState convert a server's Record to and from
// the JSON kept in server_state. JSON, not columns, so that fields added to
// upstream.Record are kept without a migration here.
func marshalState(r upstream.Record) (string, error) {
	data, err := json.Marshal(r)
	return string(data), err
}

func unmarshalState(server, data string) (upstream.Record, error) {
	var r upstream.Record
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		return upstream.Record{}, fmt.Errorf("reading stored state of server %s: %w", server, err)
	}
	return r, nil
}
