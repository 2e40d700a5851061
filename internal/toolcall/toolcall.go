// Package toolcall is the execution engine: the one path every tool call
// takes, whoever makes it — the CLI, the gateway, hooks, documents, the
// agent.
//
// A call is checked (the stop switch, the session limit, the server exists
// and is connected, the tool exists, the arguments validate against the
// tool's input schema), waits for a slot under the global and per-server
// concurrency limits (in a bounded queue, or fails fast with
// limit_exceeded), runs under its timeout and budget with progress passed
// through, is retried when the failure was transient and a retry is safe,
// and ends as a [Result]: every content block as it came, truncated to the
// size limit with a marker, redacted when the server asks for it, marked
// partial when a budget ended it early. Every call is recorded (argument
// shapes or redacted values, never secrets) and logged once.
//
// The request lifecycle follows seed 001: pending → executing → success /
// error / timeout / cancelled, with retries going back to pending.
package toolcall

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// Source says who made a call.
type Source string

// The callers.
const (
	SourceCLI      Source = "cli"
	SourceGateway  Source = "gateway"
	SourceHook     Source = "hook"
	SourceDocument Source = "document"
	SourceAgent    Source = "agent"
	SourceWeb      Source = "web" // the web console
)

// Status is where a call is in its lifecycle (seed 001).
type Status string

// The statuses.
const (
	StatusPending   Status = "pending"
	StatusExecuting Status = "executing"
	StatusSuccess   Status = "success"
	StatusError     Status = "error"
	StatusTimeout   Status = "timeout"
	StatusCancelled Status = "cancelled"
	// StatusOutputInvalid: the tool answered, but its structuredContent
	// does not match its outputSchema (or is missing); the result is
	// returned unchanged, with Result.OutputError saying why.
	StatusOutputInvalid Status = "output_invalid"
	// StatusTask is a call made as a task that the server accepted: its
	// outcome is recorded apart, once its result is fetched (TaskResult).
	StatusTask Status = "task"
	// StatusInputRequired: the server answered with an input-required
	// result (protocol 2026-07-28: resultType "input_required", its
	// inputRequests and requestState) instead of the tool's result; the
	// caller sends the call again with its answers, which is a call of
	// its own.
	StatusInputRequired Status = "input_required"
)

// Request is one tool call.
type Request struct {
	// ID identifies the call; one is generated when empty.
	ID     string
	Server string
	Tool   string
	// Arguments as decoded JSON (numbers as json.Number or float64). When
	// nil, RawArguments is used; the raw bytes are forwarded unchanged.
	Arguments    map[string]any
	RawArguments json.RawMessage
	Source       Source
	// Identity is the caller's user id, when known.
	Identity string
	// SessionID is the caller's session, when known.
	SessionID string
	// Origin says, for a person reading the history, what in the source
	// made the call: the hook and its event, the document and its block,
	// the agent's step and the model's tool call id. Empty for calls a
	// person or client made directly. It is recorded with the call (cut
	// to MaxOrigin bytes).
	Origin string
	// RequestID is the id of the client's JSON-RPC request that made the
	// call, as the client sent it (gateway calls that have one), for the
	// audit trail; nil otherwise.
	RequestID json.RawMessage
	// Timeout overrides the server's request timeout; it must lie within
	// 1 s and 5 min.
	Timeout time.Duration
	Budget  Budget
	// OnProgress receives the server's progress notifications.
	OnProgress func(Progress)
	// Meta is passed to the server as the request's _meta (identity is
	// added under "user_id" and "session_id").
	Meta map[string]any
	// Task, when set, makes the call as a task (MCP 2025-11-25): it is
	// sent as the request's params.task (a JSON object, such as
	// {"ttl": 60000}), and the server answers with the task it created
	// (Result.Task) instead of the tool's result.
	Task json.RawMessage
	// Def, when set, is the tool as the caller's own upstream session
	// lists it (a per_client or per_user session, whose list may differ
	// from the catalog's): arguments and output are checked against it
	// rather than the catalog's definition.
	Def *catalog.Tool
	// Unvalidated leaves to the server the checks it makes of a call
	// itself, so that the caller gets the server's own answer: a tool
	// the engine does not know is sent all the same (when its server is
	// known and connected), and the arguments are not checked against the
	// tool's input schema, nor for being a JSON object. Switchboard's own
	// refusals stay: the stop switch, the session limit, rate limits,
	// concurrency limits, timeouts and budgets, the interceptor (guard
	// hooks), an unknown or unavailable server. The call is recorded as
	// any: with the server's error or result. A gateway view meant to be
	// indistinguishable from its server sets it.
	Unvalidated bool
	// InputRounds, when set, reports as the call ends how many times its
	// caller asked its own client for input in a result (multi round-trip)
	// while the call ran: a gateway client of protocol 2026-07-28, asked
	// for what the server asked. It is recorded with the call.
	InputRounds func() int
}

// Budget bounds one call (seed 003). A call that runs out of budget is
// ended and returns what it has, marked partial.
type Budget struct {
	// MaxDuration ends the call after this long with a partial result
	// (unlike Timeout, which ends it with an error). 0 means none.
	MaxDuration time.Duration
	// MaxCost ends the call once the cost the tool reports (in the _meta of
	// its progress notifications, as "cost" or "totalCost") exceeds it.
	// 0 means none.
	MaxCost float64
}

// Progress is a call's progress (MCP progress notifications).
type Progress struct {
	Processed float64 `json:"processed"`
	Total     float64 `json:"total,omitempty"`
	Message   string  `json:"message,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
}

// ContentType is seed 001's classification of a result, for rendering.
type ContentType string

// The content types.
const (
	ContentText     ContentType = "text"
	ContentJSON     ContentType = "json"
	ContentMarkdown ContentType = "markdown"
	ContentImage    ContentType = "image"
)

// Display is seed 001's rendering hint.
type Display string

// The display hints.
const (
	DisplayInline    Display = "inline"
	DisplayBlock     Display = "block"
	DisplayCollapsed Display = "collapsed"
)

// Result is the outcome of a call that reached the server (or ended early
// with a partial result).
type Result struct {
	ID     string
	Status Status
	// CallToolResult is the server's result: every content block as it came
	// (after truncation and, when configured, redaction), structuredContent,
	// isError and _meta (which carries "truncated": true when truncated, and
	// the partial-result fields when a budget ended the call).
	*mcp.CallToolResult
	ContentType ContentType
	Display     Display
	Duration    time.Duration
	Retries     int
	// Bytes is the size of the result as received.
	Bytes          int64
	Truncated      bool
	Partial        bool
	BudgetExceeded bool
	// Missing says what was not completed, for a partial result.
	Missing  string
	Cost     float64
	Progress *Progress
	// OutputError says how the result fails the tool's outputSchema, when
	// it does (Status is then StatusOutputInvalid); see output.go.
	OutputError *OutputError
	// Task is the task the server created for a call made as a task
	// (Request.Task): its taskId, status, ttl, pollInterval, as the
	// server gave them; nil otherwise. The call's status is then
	// StatusTask and its CallToolResult has no content.
	Task json.RawMessage
}

// Metadata keys Switchboard adds to a result's _meta.
const (
	MetaTruncated      = "truncated"
	MetaOriginalBytes  = "originalBytes"
	MetaPartial        = "isPartialResult"
	MetaBudgetExceeded = "budgetExceeded"
	MetaMissing        = "missing"
	MetaProgress       = "progress"
)
