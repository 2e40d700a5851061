package config

import (
	"os"
	"os/user"
	"slices"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file holds the gateway: block's resolved form: where `serve` listens,
// the views it serves, and the tokens that may use them. Decoding and
// validation live in gateway_decode.go.

// Gateway defaults other packages use (DefaultGateway has them all: the
// schema's). docs/configuration.md documents each one.
const (
	DefaultListen          = "127.0.0.1:7777"
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultMaxRequestBytes is gateway.max_request_bytes' default (the
	// MCP SDK's own), and MinMaxRequestBytes and MaxMaxRequestBytes its
	// range.
	DefaultMaxRequestBytes = 4 << 20
	MinMaxRequestBytes     = 64 << 10
	MaxMaxRequestBytes     = 256 << 20
	// DefaultWriteTimeout is gateway.write_timeout's default.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultInputTimeout is how long a client of protocol 2026-07-28
	// may take to answer what a server asked it in an input-required
	// result (gateway.input_timeout).
	DefaultInputTimeout = 5 * time.Minute
	// DefaultViewName is the view served at /mcp when no view of that name
	// is configured: every server, prefixed names.
	DefaultViewName = "default"
)

// Prefix says whether a view's tool, prompt and resource-template names
// carry their server's name.
type Prefix string

// The prefix modes.
const (
	// PrefixAlways exposes server__tool (the catalog's client-safe names).
	PrefixAlways Prefix = "always"
	// PrefixNever exposes the server's own names; only valid for a view of
	// exactly one server, so that the view looks exactly like that server.
	PrefixNever Prefix = "never"
)

// Gateway configures the aggregated MCP endpoint served by `serve`.
type Gateway struct {
	// Listen is the TCP address of the gateway, the web page and the
	// health endpoints (default 127.0.0.1:7777).
	Listen string
	// Stateless serves /mcp without sessions, so that any replica can
	// answer any request (no server-to-client requests then).
	Stateless bool
	// DisableFastPath (fast_path: false) sends every streamable-HTTP
	// request through the MCP SDK's server, instead of the gateway
	// answering tools/call itself: slower, for diagnosing a client.
	DisableFastPath bool
	// AllowedOrigins are Origin values accepted besides the gateway's own
	// address (scheme://host[:port], or "*" for any; default none).
	AllowedOrigins []string
	// AllowedHosts are Host header values accepted besides loopback names
	// and the listen address (needed behind a proxy or a DNS name).
	AllowedHosts []string
	// ShutdownTimeout is how long calls in flight may run after SIGINT or
	// SIGTERM before they are cancelled (default 10s).
	ShutdownTimeout time.Duration
	// SessionTimeout closes client sessions idle this long (default 30m;
	// 0 never).
	SessionTimeout time.Duration
	// HandshakeTimeout closes a client session that has not completed
	// its handshake (initialize, then notifications/initialized) this
	// long after it opened (default 10s; 0 leaves it to SessionTimeout).
	HandshakeTimeout time.Duration
	// WriteTimeout bounds how long one write to a client may wait for the
	// client to take it (default 10s).
	WriteTimeout time.Duration
	// InputTimeout is how long a client of protocol 2026-07-28 may take
	// to send its request again with the answers to an input-required
	// result the gateway gave it (an upstream's elicitation, sampling or
	// roots request during its call); past it the upstream's request gets
	// an error (default 5m).
	InputTimeout time.Duration
	// MaxSessions bounds the client sessions open at once, all users
	// together (default 10000; 0 no limit).
	MaxSessions int
	// MaxSessionsPerUser bounds the client sessions open at once of one
	// identity (default 1000; 0 no limit).
	MaxSessionsPerUser int
	// MaxConnections bounds the connections open at once on the listen
	// address (default 10000; 0 only the open-file limit's bound).
	MaxConnections int
	// MaxRequestsPerUser bounds the requests (calls, event streams) open
	// at once of one identity on the MCP endpoints (default 1000; 0 no
	// limit).
	MaxRequestsPerUser int
	// MaxBatch bounds the messages of one JSON-RPC batch (default 100; 0
	// no limit).
	MaxBatch int
	// MaxRequestBytes bounds the body of one request to the gateway's
	// MCP endpoints (default 4 MiB); a larger one gets 413.
	MaxRequestBytes int64
	// DefaultUser is the identity of trusted local callers that carry
	// none of their own: every client when no tokens are configured (the
	// gateway then listens on loopback only), `serve --stdio`, and the
	// web console without tokens. A client's own _meta.user_id still wins
	// when no tokens are configured; a token's user always does. The
	// default is the OS user (OSUser), as the CLI identifies its calls.
	DefaultUser string
	// Instructions are prepended to the upstreams' combined instructions.
	Instructions string
	// Views are the named subsets of servers, in file order. A view named
	// DefaultViewName replaces the implicit one at /mcp.
	Views []View
	// Tokens are the bearer tokens that may use the gateway. Empty means no
	// authentication, which is only allowed on a loopback address.
	Tokens []Token
	// OAuth, when set, accepts the access tokens of an authorization
	// server besides the static Tokens (gateway.oauth).
	OAuth *OAuth

	// Pos is where the block was defined, if it was.
	Pos Pos
}

// View is a named subset of the catalog served at /mcp/{name}.
type View struct {
	Name string
	// Servers the view draws on; empty means all.
	Servers []string
	// Include and Exclude are globs (path.Match syntax) on the exposed
	// tool name; a tool is in the view when it matches an include (or
	// Include is empty) and no exclude.
	Include []string
	Exclude []string
	// Prefix is PrefixAlways (default) or PrefixNever.
	Prefix Prefix
	// Rename maps an exposed tool name (as the view would otherwise show
	// it) to the name clients see instead.
	Rename map[string]string
	// Descriptions maps an exposed tool name (before Rename) to a
	// replacement description.
	Descriptions map[string]string

	Pos Pos
}

// ToolBase returns the name the view matches a tool's include and
// exclude globs, renames and descriptions against: exposed (the
// catalog's server__tool), or with PrefixNever the tool's own name at its
// server.
func (v View) ToolBase(exposed, own string) string {
	if v.Prefix == PrefixNever {
		return own
	}
	return exposed
}

// Shows reports whether the view shows the tool whose ToolBase is base:
// its server is one of the view's (or the view names none), it matches an
// include glob (or there are none) and no exclude glob.
func (v View) Shows(server, base string) bool {
	if len(v.Servers) > 0 && !slices.Contains(v.Servers, server) {
		return false
	}
	if len(v.Include) > 0 && !MatchTools(v.Include, base) {
		return false
	}
	return len(v.Exclude) == 0 || !MatchTools(v.Exclude, base)
}

// ToolName returns the name clients of the view see for the tool whose
// ToolBase is base: its rename, or base itself.
func (v View) ToolName(base string) string {
	if r, ok := v.Rename[base]; ok {
		return r
	}
	return base
}

// Description returns the description clients of the view see for the
// tool whose ToolBase is base: the view's override, or own.
func (v View) Description(base, own string) string {
	if d, ok := v.Descriptions[base]; ok {
		return d
	}
	return own
}

// Token is one bearer token and what it grants.
type Token struct {
	// Name labels the token in logs and messages (never the secret).
	Name string
	// User is the identity calls made with the token carry (seed 002's
	// user id).
	User string
	// Secret is the token's value when given through an environment
	// variable (token_env); it is never shown or logged.
	Secret string
	// SHA256 is the lowercase hex SHA-256 of the token, when stored as a
	// hash (token_sha256).
	SHA256 string `key:"token_sha256"`
	// TokenEnv names the environment variable Secret was read from
	// (token_env); it is what `config show` prints instead of the secret.
	TokenEnv string
	// Views the token may use; empty or "*" means every view.
	Views []string

	Pos Pos
}

// DefaultGateway returns the gateway settings used when the block is
// absent: the schema's defaults, the listen address and the OS user as
// default_user.
func DefaultGateway() Gateway {
	g := defaultBlock[Gateway](&schema.Gateway{})
	g.Listen, g.DefaultUser = DefaultListen, OSUser()
	return g
}

// OSUser returns the name of the account the process runs as — the
// identity the CLI gives its calls and gateway.default_user's default —
// or "" when neither the system nor $USER, $LOGNAME or $USERNAME says.
func OSUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, k := range []string{"USER", "LOGNAME", "USERNAME"} {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// TrustedUser returns the identity of a trusted local caller that brought
// none: the one it put in its request's _meta (user_id) when neither tokens
// nor OAuth are configured, else DefaultUser. local marks a caller that is trusted even
// though tokens are configured (serve --stdio, which the user runs
// themselves); any other caller of a gateway with tokens gets "", since
// its token decides who it is.
func (g *Gateway) TrustedUser(metaUser string, local bool) string {
	if g.AuthRequired() && !local {
		return ""
	}
	if metaUser != "" && !g.AuthRequired() {
		return metaUser
	}
	return g.DefaultUser
}
