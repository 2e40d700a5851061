// Package control is the daemon's control API: one [Backend] interface
// that the CLI commands (servers, tools, call, history, stop, resume,
// reload) talk to, with two implementations — [NewLocal] over in-process
// components and [Client] over the daemon's unix socket — so that a command
// prints the same thing whether or not `switchboard serve` is running.
//
// The daemon serves a Local backend through [NewHandler] on a socket made
// by [Listen]; a command finds it with [SocketPath] and [Dial]. Errors
// cross the socket as seed 002 structured errors (internal/fault JSON) and
// come back as the same *fault.Error.
package control

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Backend is what the CLI commands need from Switchboard, in process or
// from the daemon.
type Backend interface {
	// Status describes the process serving the backend.
	Status(ctx context.Context) (Status, error)
	// Servers lists every server with its state and list counts.
	Servers(ctx context.Context) ([]ServerInfo, error)
	// ServerAction enables, disables or refreshes one server; action is
	// "enable", "disable" or "refresh".
	ServerAction(ctx context.Context, action, server string) (ActionResult, error)
	// Tools lists the tools of one server, or of all when server is "".
	Tools(ctx context.Context, server string) (ToolList, error)
	// Tool returns one tool, waiting briefly for a server that announces
	// list changes to list it.
	Tool(ctx context.Context, server, name string) (ToolInfo, error)
	// Call calls a tool. Cancelling ctx cancels the call.
	Call(ctx context.Context, req CallRequest) (*CallResult, error)
	// History returns the recorded calls that match f, newest first.
	History(ctx context.Context, f store.CallFilter) ([]store.CallRecord, error)
	// HistoryCall returns one recorded call by ID or by a unique prefix.
	HistoryCall(ctx context.Context, id string) (store.CallRecord, error)
	// Stop sets the stop switch and reports how many calls in flight in
	// the serving process were cancelled.
	Stop(ctx context.Context) (int, error)
	// Resume lifts the stop switch and reports whether it was set.
	Resume(ctx context.Context) (bool, error)
	// Reload reloads the configuration file.
	Reload(ctx context.Context) (ReloadReport, error)
	// Prompts lists the prompts of one server, or of all when server is "".
	Prompts(ctx context.Context, server string) (PromptList, error)
	// Prompt renders one prompt with its arguments, after checking the
	// name and the required arguments.
	Prompt(ctx context.Context, req PromptRequest) (*mcp.GetPromptResult, error)
	// Resources lists the resources and resource templates of one server,
	// or of all when server is "".
	Resources(ctx context.Context, server string) (ResourceList, error)
	// ReadResource reads one resource from a server.
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// PromptList is what `switchboard prompts` shows.
type PromptList struct {
	Prompts []PromptInfo `json:"prompts"`
	// Unavailable says, a line each, why an enabled server in scope is not
	// connected.
	Unavailable []string `json:"unavailable,omitempty"`
}

// PromptInfo is one prompt and its server.
type PromptInfo struct {
	Server string `json:"server"`
	*mcp.Prompt
}

// PromptRequest asks for one prompt.
type PromptRequest struct {
	Server    string            `json:"server"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// ResourceList is what `switchboard resources` shows.
type ResourceList struct {
	Resources []ResourceInfo `json:"resources"`
	Templates []TemplateInfo `json:"resourceTemplates"`
	// Unavailable says, a line each, why an enabled server in scope is not
	// connected.
	Unavailable []string `json:"unavailable,omitempty"`
}

// ResourceInfo is one resource and its server.
type ResourceInfo struct {
	Server string `json:"server"`
	*mcp.Resource
}

// TemplateInfo is one resource template and its server.
type TemplateInfo struct {
	Server string `json:"server"`
	*mcp.ResourceTemplate
}

// ReadRequest asks for one resource.
type ReadRequest struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// Status describes the process that serves a backend.
type Status struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// ConfigSource is the absolute path of the configuration file; "" for
	// the embedded default.
	ConfigSource string    `json:"config_source"`
	Address      string    `json:"address,omitempty"`
	StartedAt    time.Time `json:"started_at,omitzero"`
	Stopped      bool      `json:"stopped"`
	// HistoryWriteFailures counts the call records the history store
	// failed to write since the process started (its disk full, its
	// database down): the log says why.
	HistoryWriteFailures int64 `json:"history_write_failures,omitempty"`
	// HistoryUnavailable is set while the history store cannot be
	// written (a PostgreSQL database restarted or unreachable, a SQLite
	// file's disk full): the
	// records of the calls that end wait for it.
	HistoryUnavailable *HistoryOutage `json:"history_unavailable,omitempty"`
}

// HistoryOutage says since when the history store has been unavailable,
// how many call records wait for it, and why.
type HistoryOutage struct {
	Since   time.Time `json:"since"`
	Waiting int       `json:"waiting"`
	Error   string    `json:"error"`
}

// ServerInfo is one server as `switchboard servers` shows it.
type ServerInfo struct {
	upstream.Snapshot
	Tools     int    `json:"tools"`
	Prompts   int    `json:"prompts"`
	Resources int    `json:"resources"`
	LatencyMS string `json:"latency_ms,omitempty"`
}

// ActionResult is the outcome of [Backend.ServerAction].
type ActionResult struct {
	Server string `json:"server"`
	Action string `json:"action"`
	// Changed reports that enable found the server disabled, or disable
	// found it enabled.
	Changed bool `json:"changed"`
	// The counts a refresh found.
	Tools     int `json:"tools"`
	Prompts   int `json:"prompts"`
	Resources int `json:"resources"`
}

// ToolInfo is the wire form of a catalog tool.
type ToolInfo struct {
	Server      string `json:"server"`
	Name        string `json:"name"`
	Exposed     string `json:"exposed"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema,omitempty"`
	// OutputSchema is the schema a result's structuredContent must match,
	// when the tool declares one.
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	SchemaError  string               `json:"schemaError,omitempty"`
	// TaskSupport is the tool's execution.taskSupport: "required",
	// "optional", or "" (forbidden, or its server declares no tasks).
	TaskSupport string `json:"taskSupport,omitempty"`
}

// ToolList is what [Backend.Tools] returns.
type ToolList struct {
	Tools []ToolInfo `json:"tools"`
	// Collisions are the exposed names that more than one tool wanted.
	Collisions []Collision `json:"collisions,omitempty"`
	// Unavailable says, a line each, why an enabled server in scope is not
	// connected.
	Unavailable []string `json:"unavailable,omitempty"`
}

// Collision is an exposed name shared by several tools, as
// "server/tool" keys; all but one got a hashed suffix.
type Collision struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
}

// CallRequest is one tool call in wire form.
type CallRequest struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Arguments is the JSON object of arguments, forwarded as given.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Source    string          `json:"source,omitempty"`
	Identity  string          `json:"identity,omitempty"`
	// Origin is what in the source made the call (toolcall.Request.Origin).
	Origin string `json:"origin,omitempty"`
	// Timeout overrides the server's request timeout (1 s to 5 min).
	Timeout time.Duration `json:"timeout_ns,omitempty"`
	Budget  Budget        `json:"budget,omitzero"`
	// OnProgress receives the call's progress; over the socket it is
	// streamed back as the call runs.
	OnProgress func(toolcall.Progress) `json:"-"`
	// Answers says the caller answers what the server asks during the
	// call (elicitation, sampling) over the call's stream; the client sets
	// it when the call's context has an answer.Answerer.
	Answers bool `json:"answers,omitempty"`
	// LogLevel, when set, is the level of the server's log messages the
	// caller shows (answer.LogReceiver): a server on protocol 2026-07-28,
	// which takes the level with each request, logs at it during the call
	// (upstream.WithLogLevel).
	LogLevel string `json:"log_level,omitempty"`
	// Task, when set, starts the call as a task (toolcall.Request.Task):
	// a JSON object such as {"ttl": 60000}.
	Task json.RawMessage `json:"task,omitempty"`
}

// Budget bounds one call (toolcall.Budget in wire form).
type Budget struct {
	MaxDuration time.Duration `json:"max_duration_ns,omitempty"`
	MaxCost     float64       `json:"max_cost,omitempty"`
}

// CallResult is a toolcall.Result in wire form.
type CallResult struct {
	ID             string              `json:"id"`
	Status         string              `json:"status"`
	Result         *mcp.CallToolResult `json:"result"`
	ContentType    string              `json:"content_type,omitempty"`
	Display        string              `json:"display,omitempty"`
	Duration       time.Duration       `json:"duration_ns"`
	Retries        int                 `json:"retries,omitempty"`
	Bytes          int64               `json:"bytes"`
	Truncated      bool                `json:"truncated,omitempty"`
	Partial        bool                `json:"partial,omitempty"`
	BudgetExceeded bool                `json:"budget_exceeded,omitempty"`
	Missing        string              `json:"missing,omitempty"`
	Cost           float64             `json:"cost,omitempty"`
	Progress       *toolcall.Progress  `json:"progress,omitempty"`
	// OutputError says how structuredContent fails the tool's
	// outputSchema (Status is then "output_invalid").
	OutputError *toolcall.OutputError `json:"output_error,omitempty"`
	// Task is the task a call started as one created (status "task").
	Task json.RawMessage `json:"task,omitempty"`
}

// ReloadReport says what a reload changed.
type ReloadReport struct {
	Source    string   `json:"source"`
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Changed   []string `json:"changed"`
	Unchanged []string `json:"unchanged"`
	// Blocks are the other top-level blocks the reload changed (gateway,
	// limits, hooks, ...), as config.ChangedBlocks names them.
	Blocks   []string `json:"blocks"`
	Warnings []string `json:"warnings,omitempty"`
}

// SocketPath is where the daemon listens in the state directory.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, "switchboard.sock") }
