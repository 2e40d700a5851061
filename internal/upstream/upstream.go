// Package upstream owns Switchboard's connections to MCP servers.
//
// [Dial] opens one connection over any transport (stdio child process, SSE,
// streamable HTTP, WebSocket) and returns a [*Client]: the live session plus
// what Switchboard needs around it — the child's stderr tail, prompt death
// detection, progress routing and change notifications. A [Supervisor] keeps
// one server connected: it runs the state machine created → connecting →
// connected → disconnected / error, pings on an interval, reconnects with
// backoff and auto-disables a server after repeated failures, persisting that
// through a [StateStore]. A [Pool] runs one supervisor per configured server.
//
// Nothing above this package talks to an MCP session except through a
// Client it hands out.
package upstream

import (
	"time"
)

// State is the connection state of one upstream (seeds 001 and 004).
type State string

// The connection states.
const (
	StateCreated      State = "created"
	StateConnecting   State = "connecting"
	StateConnected    State = "connected"
	StateDisconnected State = "disconnected"
	StateError        State = "error"
	// StateNeedsAuth is a server that requires a person to sign in (again)
	// before it can be used: its LastError says why and its Suggestions
	// the command to run. It is no failure: it never counts towards
	// auto-disable, and the server connects once the sign-in is stored.
	StateNeedsAuth State = "needs_auth"
	// StateCannotStart is a server whose entry says why it cannot be
	// started as things stand (config.Server.CannotStart: its env file or
	// working directory does not exist): its LastError says what is
	// missing, where the file names it, and its Suggestions what to do.
	// It is never started, counts no failure and is never auto-disabled;
	// a reload of the fixed configuration starts it.
	StateCannotStart State = "cannot_start"
)

// Status is seed 000's availability of a server, derived from its State.
type Status string

// The availability statuses.
const (
	StatusAvailable   Status = "available"
	StatusUnavailable Status = "unavailable"
	StatusUnknown     Status = "unknown"
)

// StatusOf derives seed 000's status from a connection state.
func StatusOf(s State) Status {
	switch s {
	case StateConnected:
		return StatusAvailable
	case StateCreated, StateConnecting, "":
		return StatusUnknown
	default:
		return StatusUnavailable
	}
}

// Snapshot is the observable health of one upstream at a moment
// (seed 001 ServerHealthStatus).
type Snapshot struct {
	Server    string    `json:"server"`
	Transport string    `json:"transport"`
	State     State     `json:"state"`
	Since     time.Time `json:"since"` // when State was entered
	Status    Status    `json:"status"`

	Enabled        bool      `json:"enabled"`
	AutoDisabled   bool      `json:"auto_disabled,omitempty"`
	AutoDisabledAt time.Time `json:"auto_disabled_at,omitzero"`
	DisabledReason string    `json:"disabled_reason,omitempty"`

	LastConnectedAt     time.Time     `json:"last_connected_at,omitzero"`
	LastPingAt          time.Time     `json:"last_ping_at,omitzero"`
	Latency             time.Duration `json:"latency_ns,omitempty"`
	ConsecutiveFailures int           `json:"consecutive_failures"`

	Retrying    bool      `json:"retrying,omitempty"`
	Attempt     int       `json:"attempt,omitempty"` // reconnect attempt, 1-based
	NextRetryAt time.Time `json:"next_retry_at,omitzero"`

	// LastError says what went wrong last ("connection refused by
	// 127.0.0.1:1 (...)", "exited with code 3 before answering
	// initialize; it wrote nothing to stderr"); Suggestions say what to
	// try about it.
	LastError   string   `json:"last_error,omitempty"`
	Suggestions []string `json:"suggestions,omitempty"`
	Stderr      string   `json:"stderr,omitempty"` // tail of a stdio child's stderr

	// Sessions is how many per-client or per-user upstream sessions of
	// the server are open (or opening) besides the shared one.
	Sessions int `json:"sessions,omitempty"`

	// LogsDropped counts the server's log messages dropped since the
	// daemon started because they came faster than its clients read
	// them (each drop is also told to the clients, as a warning).
	LogsDropped uint64 `json:"logs_dropped,omitempty"`
}
