// Package config loads, validates and resolves Switchboard's configuration.
//
// It reads the native YAML file (switchboard.yaml) and the files MCP
// clients already have — Claude Desktop, Claude Code, Cursor, Windsurf,
// Cline and Gemini CLI `mcpServers` JSON, VS Code `servers` JSON with its
// inputs, Zed `context_servers`, Continue's YAML, Codex's TOML, and seed
// 004's `tools:` list (clients.go) — and produces one resolved [Config]:
// variables expanded, env files merged, Docker launches turned into commands,
// defaults applied and every rule checked. Everything above this package
// (upstream, catalog, cli) consumes only the resolved form; nothing else
// parses configuration.
//
// It also decides what a file may start ([LaunchPolicy]): the native file
// is held to its allowlist, a client's file to the default one until the
// user trusts it by content hash ([Trust]), a record hooks share.
//
// Problems are reported all at once as a [*ValidationError], each with the
// file, line, column and dotted field it concerns, what is wrong and how to
// fix it.
package config

import (
	"time"
)

// Transport names how Switchboard talks to an upstream MCP server.
type Transport string

// The supported transports.
const (
	TransportStdio     Transport = "stdio"     // a child process over stdin/stdout
	TransportSSE       Transport = "sse"       // the legacy HTTP+SSE transport
	TransportHTTP      Transport = "http"      // streamable HTTP
	TransportWebSocket Transport = "websocket" // WebSocket, subprotocol "mcp"
)

// TransportBuiltin marks a server Switchboard runs in-process (the
// embedded default's built-in servers). It cannot be written in a file.
const TransportBuiltin Transport = "builtin"

// Transports lists every valid transport, in documentation order.
var Transports = []Transport{TransportStdio, TransportSSE, TransportHTTP, TransportWebSocket}

// Default values. docs/configuration.md documents each one; keep them in step.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultPingTimeout    = 10 * time.Second
	DefaultMaxFailures    = 3
	DefaultDiscoveryTTL   = 5 * time.Minute
	DefaultMaxRetries     = 2
	DefaultStderrBytes    = 64 << 10

	// MinRequestTimeout and MaxRequestTimeout bound every request timeout
	// (seed 000: 1 s to 5 min).
	MinRequestTimeout = 1 * time.Second
	MaxRequestTimeout = 5 * time.Minute

	// MaxServerNameLen is the longest server name accepted.
	MaxServerNameLen = 64

	// Execution engine limits (seed 001 ExecutionTracker) and history.
	DefaultMaxConcurrent  = 25
	DefaultSessionLimit   = -1 // unlimited
	DefaultMaxOutputBytes = 1 << 20

	// MaxQueueWait bounds limits.queue_wait.
	MaxQueueWait = 5 * time.Minute
	// QueueWaitCallTimeout is limits.queue_wait's default, written
	// "timeout": a call over a limit waits for a slot for as long as its
	// own timeout allows (the timeout covers the wait and the call).
	QueueWaitCallTimeout time.Duration = -1
	// MinMaxOutputBytes and MaxMaxOutputBytes bound limits.max_output.
	MinMaxOutputBytes = 1 << 10
	MaxMaxOutputBytes = 1 << 30
)

// DefaultBackoff is the wait before each reconnect attempt (seeds 000/001).
var DefaultBackoff = []time.Duration{1 * time.Second, 5 * time.Second, 15 * time.Second}

// DefaultAllowedCommands are the stdio launchers allowed without any
// configuration (seed 004). security.allowed_commands extends the list.
var DefaultAllowedCommands = []string{"npx", "uvx", "docker"}

// Config is a fully resolved, validated configuration.
//
// Its blocks' fields pair with the keys of the file's types (package
// schema) by Go name; a field named otherwise than its key's field says
// the key in a key tag (ConnectTimeout `key:"timeout"`), so that config
// show writes every key with no code of its own.
type Config struct {
	// Servers holds one entry per upstream MCP server, in file order.
	Servers []Server
	// Defaults are the global settings every server falls back to.
	Defaults Defaults
	// Limits bound the execution engine (the `limits:` block).
	Limits Limits
	// History configures the persistent call history (the `history:` block).
	History History
	// Gateway configures the aggregated endpoint `serve` runs (the
	// `gateway:` block).
	Gateway Gateway
	// Hooks are the event hooks (the `hooks:` list and the `hook_settings:`
	// block; see hooks.go).
	Hooks Hooks
	// Notebook configures the Markdown document runner (the `notebook:`
	// block; see notebook.go).
	Notebook Notebook
	// LLM is the OpenAI-compatible endpoint (the `llm:` block) and Agent the
	// agent loop's limits (the `agent:` block); see agent.go.
	LLM   LLM
	Agent Agent
	// Telemetry configures OpenTelemetry traces (the `telemetry:` block;
	// see telemetry.go).
	Telemetry Telemetry
	// Audit configures the audit trail (the `audit:` block; see
	// audit.go).
	Audit Audit
	// AllowedCommands is the effective stdio command allowlist: the defaults
	// plus security.allowed_commands (bare names or absolute paths).
	AllowedCommands []string
	// Source is the file the configuration came from ("" for the embedded
	// default), and Format the format it was read as.
	Source string
	Format Format
	// Warnings are non-fatal notes about the file, sorted by position:
	// ignored entries and settings that have no effect.
	Warnings []Problem
}

// Format names the file format a configuration was read from.
type Format string

// The formats Load understands.
const (
	FormatNative     Format = "switchboard" // switchboard.yaml
	FormatClaude     Format = "mcpServers"  // Claude Desktop, Claude Code .mcp.json, Cursor, Windsurf
	FormatClaudeCode Format = "claude-code" // Claude Code ~/.claude.json (user and project servers)
	FormatCline      Format = "cline"       // Cline cline_mcp_settings.json
	FormatGemini     Format = "gemini"      // Gemini CLI settings.json
	FormatVSCode     Format = "vscode"      // VS Code mcp.json "servers", settings.json "mcp"
	FormatZed        Format = "zed"         // Zed settings.json "context_servers"
	FormatContinue   Format = "continue"    // Continue config.yaml / mcpServers blocks
	FormatCodex      Format = "codex"       // Codex config.toml [mcp_servers.NAME]
	FormatToolsV1    Format = "tools"       // seed 004 agent.yaml "tools:" list
)

// Defaults are the global settings (the `defaults:` block).
type Defaults struct {
	RequestTimeout time.Duration // per request; default 30 s, 1 s–5 min
	ConnectTimeout time.Duration // connect + initialize; default 30 s
	MaxRetries     int           // retries of transient failures; default 2
	DiscoveryTTL   time.Duration // catalog cache lifetime; default 5 min
	Health         Health
}

// Limits bound the execution engine: every tool call from every caller
// passes them (seed 001 ExecutionTracker, seed 000 action pool).
type Limits struct {
	MaxConcurrent  int           // calls in flight at once, all servers; default 25
	QueueWait      time.Duration // how long a call over a limit waits for a slot; 0 = fail fast; default QueueWaitCallTimeout
	MaxQueue       int           // calls that may wait at once; default 1000
	SessionLimit   int           // calls per session (process); -1 = unlimited (default)
	MaxOutputBytes int64         `key:"max_output"` // result size before truncation; default 1 MiB
	Rate           Rate          // calls per second per identity; zero = unlimited
}

// Rate is limits.rate: token buckets of calls per identity (user). A call
// over either is refused at once with a rate_limited error that says when
// to retry.
type Rate struct {
	PerUser       Bucket // each user's calls, all servers together
	PerUserServer Bucket // each user's calls to any one server
}

// Bucket is a token bucket: PerSecond calls per second on average, up to
// Burst at once. A zero PerSecond means no limit.
type Bucket struct {
	PerSecond float64 `key:"calls_per_second"`
	Burst     int     // default: PerSecond rounded up, at least 1
}

// History configures the persistent call history.
type History struct {
	// Store is a SQLite file path or a postgres:// DSN; "" means
	// switchboard.db in the state directory.
	Store string
	// RecordValues stores redacted argument values instead of their shapes.
	RecordValues bool
	// Keep is how many of the newest calls are kept; default 10,000.
	Keep int
}

// Health configures the health loop of every upstream.
type Health struct {
	PingInterval time.Duration   // default 30 s; 0 disables pings
	PingTimeout  time.Duration   // default 10 s
	Backoff      []time.Duration // wait before reconnect attempt i; default 1 s, 5 s, 15 s
	MaxFailures  int             // consecutive failed attempts before auto-disable; default 3
}

// Server is one resolved upstream server.
type Server struct {
	Name        string
	Description string
	Transport   Transport

	// Stdio launch. Command is a bare name resolved on PATH or an absolute
	// path; Env is env_file merged with env (env wins), fully expanded.
	Command    string
	Args       []string
	Env        map[string]string
	InheritEnv bool   // pass the whole parent environment, not just the base
	Cwd        string // working directory of the child; "" means inherit
	Encoding   string // stream encoding; only utf-8 is supported

	// Network transports.
	URL     string
	Headers map[string]string
	// OAuth is the oauth: block, if any (see docs/auth.md).
	OAuth *ServerOAuth
	// Auth is AuthPerUser when each gateway user signs in to the server
	// with their own account; empty or AuthShared for one sign-in.
	Auth string

	ConnectTimeout   time.Duration `key:"timeout"`
	SSEReadTimeout   time.Duration // 0 means no read timeout
	TerminateOnClose bool          // streamable HTTP: DELETE the session on close (default true)
	RequestTimeout   time.Duration
	MaxRetries       int
	// MaxConcurrent bounds this server's calls in flight; 0 means only the
	// global limit applies.
	MaxConcurrent int
	// Session is whose upstream session a gateway client's requests use:
	// SessionShared ("" too), SessionPerClient or SessionPerUser.
	Session SessionMode
	// MaxSessions bounds the per-client or per-user sessions open at once;
	// 0 means DefaultMaxUpstreamSessions. Unused for a shared session.
	MaxSessions int
	// NoIdentityMeta (identity_meta: false) leaves the caller's user_id
	// and session_id out of each tools/call's _meta.
	NoIdentityMeta bool
	// RedactResults applies secret redaction to results returned to callers.
	RedactResults bool
	// Roots are the directories the server is given as its roots, as
	// file:// URIs: when set, Switchboard answers the server's roots/list
	// with them, from the CLI and the daemon alike, instead of asking a
	// calling client.
	Roots []string

	Enabled       bool // default true
	LoadTools     bool // default true
	LoadPrompts   bool // default true
	LoadResources bool // default true

	// Docker is the managed form it was written in, if any; Command and Args
	// already hold the equivalent `docker run --rm -i ...` launch.
	Docker *Docker

	// LaunchAllow names what the launch policy would refuse but this
	// server may use (launch.allow, honoured only in a file the user
	// trusts), e.g. docker.privileged or env.LD_PRELOAD. See AllowNames.
	LaunchAllow []string

	// Secrets names env and header keys whose values must never be shown
	// or logged: those listed under `secrets:` plus any key that looks like
	// a credential (see IsSecretKey).
	Secrets []string

	// Pos is where the server was defined, for messages about it.
	Pos Pos

	// CannotStart, when not empty, says why the server cannot be started
	// as its entry stands: an env file, working directory or root that
	// does not exist (a *MissingPathError), or, in a client's file, a
	// command the allowlist or the launch policy refuses. Load keeps such a server rather than
	// refusing the whole file for it; the upstream supervisor shows it in
	// the state cannot_start with these problems and never starts it, and
	// a reload once the cause is fixed starts it.
	CannotStart []Problem
}

// Docker is seed 001's managed Docker form.
type Docker struct {
	Image         string
	ContainerName string
	Command       []string
	Ports         map[string]int // container port -> host port
}

// Pos is a position in a configuration file.
type Pos struct {
	File string
	Line int // 1-based; 0 if unknown
	Col  int // 1-based; 0 if unknown
}

// Server returns the server with the given name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}
