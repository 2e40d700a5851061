// Package schema is the shape of switchboard.yaml: its Go types, whose
// struct tags carry every rule a JSON Schema can say (types, defaults,
// enums, ranges, patterns, required keys, keys that go together), the
// JSON Schema generated from them (docs/switchboard.schema.json, which
// editors use to complete and check the file), and validation against
// that schema with messages a person can act on.
//
// internal/config validates a native file with [Validate] before it reads
// it into these types; what a schema cannot say — references between
// entries, the launch policy, variable expansion, files that must exist —
// stays in internal/config.
//
// To add a key, add a field to the type of its block with a json tag (the
// key) and jsonschema tags (its rules), and a doc comment (its
// description); then run go generate ./internal/config/schema.
package schema

// The tags used below:
//
//	json:"key,omitempty"           the key
//	jsonschema:"required"          the key must be present
//	jsonschema:"minimum=1,..."     numeric bounds, enum, pattern, default, minItems
//	jsonschema_extras:"..."        the keywords of this package's vocabulary
//	                               (minDuration, maxDuration, exclusiveMinDuration,
//	                               minSize, maxSize) and message annotations
//	                               (x-fix: how to fix any problem with the key;
//	                               x-message: what a wrong value must be;
//	                               x-aliases: other names a person may write
//	                               for the key, suggested when they do)
//	expand:"none"                  the value is read as written, never
//	                               expanded (config show writes its $ as is)
//	expand:"headers"               a header value: variables are expanded,
//	                               ${identity.user} and ${identity.session}
//	                               are kept for each request
//
// A string key without an expand tag has its variables expanded when it
// is read (config show writes a literal $ as $$); a key whose value
// cannot hold a $ (an enum, a name with a pattern, a reference to one)
// needs no tag.

// File is a switchboard.yaml file. Every key is optional; keys starting
// with x- are ignored (a place for YAML anchors).
type File struct {
	// Defaults are the global settings every server falls back to.
	Defaults *Defaults `json:"defaults,omitempty"`
	// Limits bound the execution engine: every tool call from every caller.
	Limits *Limits `json:"limits,omitempty"`
	// History configures the persistent call history.
	History *History `json:"history,omitempty"`
	// Security extends what stdio servers may run.
	Security *Security `json:"security,omitempty"`
	// Gateway configures the aggregated MCP endpoint `switchboard serve` runs.
	Gateway *Gateway `json:"gateway,omitempty"`
	// Hooks run actions when events happen (docs/hooks.md).
	Hooks []Hook `json:"hooks,omitempty" jsonschema_extras:"x-type=a list of hooks"`
	// HookSettings bound the pool that runs hooks.
	HookSettings *HookSettings `json:"hook_settings,omitempty"`
	// Notebook configures the Markdown document runner (docs/documents.md).
	Notebook *Notebook `json:"notebook,omitempty"`
	// LLM is the OpenAI-compatible chat endpoint the agent talks to (docs/agent.md).
	LLM *LLM `json:"llm,omitempty"`
	// Agent bounds the agent loop (docs/agent.md).
	Agent *Agent `json:"agent,omitempty"`
	// Telemetry sends OpenTelemetry traces over OTLP (docs/observability.md).
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// Audit writes the audit trail: one JSON line per security-relevant event (docs/audit.md).
	Audit *Audit `json:"audit,omitempty"`
	// Servers are the upstream MCP servers, each with a unique name.
	Servers []Server `json:"servers,omitempty" jsonschema_extras:"x-type=a list of servers,x-fix=start each server with \"- name: ...\""`
}

// Defaults are the global settings each server falls back to.
type Defaults struct {
	// How long one request to a server may take.
	RequestTimeout *Duration `json:"request_timeout,omitempty" jsonschema_extras:"default=30s,minDuration=1s,maxDuration=5m"`
	// How long connecting to and initializing a server may take.
	ConnectTimeout *Duration `json:"connect_timeout,omitempty" jsonschema_extras:"default=30s,exclusiveMinDuration=0s"`
	// Retries of a request that failed transiently.
	MaxRetries *int `json:"max_retries,omitempty" jsonschema:"minimum=0,default=2"`
	// How long a server's list of tools, prompts and resources is cached.
	DiscoveryTTL *Duration `json:"discovery_ttl,omitempty" jsonschema_extras:"default=5m,minDuration=0s"`
	// The health loop of every server.
	Health *Health `json:"health,omitempty"`
}

// Health configures the health loop of every server.
type Health struct {
	// Time between health pings; 0 turns pings off.
	PingInterval *Duration `json:"ping_interval,omitempty" jsonschema_extras:"default=30s,minDuration=0s"`
	// How long a ping may take.
	PingTimeout *Duration `json:"ping_timeout,omitempty" jsonschema_extras:"default=10s,exclusiveMinDuration=0s"`
	// Wait before reconnect attempt i (the last one repeats).
	Backoff []BackoffStep `json:"backoff,omitempty" jsonschema:"minItems=1" jsonschema_extras:"x-type=a list of durations,x-message=must list at least one duration,x-fix=e.g. backoff: [1s\\, 5s\\, 15s]"`
	// Consecutive failed reconnects before the server is disabled.
	MaxFailures *int `json:"max_failures,omitempty" jsonschema:"minimum=1,default=3"`
}

// BackoffStep is one wait of defaults.health.backoff: a duration greater
// than 0.
type BackoffStep Duration

// JSONSchema describes a duration greater than 0.
func (BackoffStep) JSONSchema() *Schema {
	return &Schema{Ref: "#/$defs/Duration", Extras: map[string]any{"exclusiveMinDuration": "0s"}}
}

// UnmarshalJSON reads a duration.
func (b *BackoffStep) UnmarshalJSON(data []byte) error {
	return (*Duration)(b).UnmarshalJSON(data)
}

// Limits bound the execution engine: they apply to every tool call from
// every caller, all together.
type Limits struct {
	// Calls in flight at once, across all servers.
	MaxConcurrent *int `json:"max_concurrent,omitempty" jsonschema:"minimum=1,default=25"`
	// How long a call over a limit waits for a slot: "timeout" (as long as
	// the call's own timeout allows), or a duration from 0s (fail at once)
	// to 5m.
	QueueWait *QueueWait `json:"queue_wait,omitempty" jsonschema_extras:"default=timeout,minDuration=0s,maxDuration=5m,x-fix=use \"timeout\" to wait as long as the call's timeout allows (the default)\\, or a duration from 0s (fail at once) to 5m"`
	// How many calls may wait at once; 0 fails every call over a limit at once.
	MaxQueue *int `json:"max_queue,omitempty" jsonschema:"minimum=0,default=1000"`
	// Calls allowed since the process started; -1 is unlimited.
	SessionLimit *int `json:"session_limit,omitempty" jsonschema:"minimum=-1,default=-1" jsonschema_extras:"x-message=must be -1 (unlimited) or at least 1,x-fix=use -1 for unlimited"`
	// The largest result returned to a caller; a larger one is truncated.
	MaxOutput *Size `json:"max_output,omitempty" jsonschema_extras:"default=1MiB,minSize=1KiB,maxSize=1GiB"`
	// Calls per second per user: token buckets that refuse a call over them at once with a rate_limited error carrying retry_after.
	Rate *Rate `json:"rate,omitempty"`
}

// Rate limits how fast each user (the identity a call carries) may call.
type Rate struct {
	// Each user's calls, all servers together.
	PerUser *Bucket `json:"per_user,omitempty"`
	// Each user's calls to any one server.
	PerUserServer *Bucket `json:"per_user_server,omitempty"`
}

// Bucket is a token bucket of calls.
type Bucket struct {
	// Calls per second on average; 0 is no limit.
	CallsPerSecond *float64 `json:"calls_per_second,omitempty" jsonschema:"minimum=0,default=0" jsonschema_extras:"x-fix=write a number such as 2.5 (0 means no limit)"`
	// The most calls at once before the rate applies; the default is calls_per_second rounded up.
	Burst *int `json:"burst,omitempty" jsonschema:"minimum=1" jsonschema_extras:"x-fix=use 1 or more: the most calls a user may make at once before the rate applies"`
}

// History configures the persistent call history.
type History struct {
	// A SQLite file path (relative to the file's folder) or a postgres:// DSN; "" is switchboard.db in the state directory.
	Store *string `json:"store,omitempty"`
	// Record the values of arguments (redacted), not only their shapes.
	RecordValues *bool `json:"record_values,omitempty" jsonschema:"default=false"`
	// How many of the newest calls are kept.
	Keep *int `json:"keep,omitempty" jsonschema:"minimum=1,default=10000"`
}

// Security extends what stdio servers may run.
type Security struct {
	// Commands stdio servers may run besides npx, uvx and docker: bare names (found on PATH) or absolute paths.
	AllowedCommands []string `json:"allowed_commands,omitempty"`
}

// Gateway configures the aggregated MCP endpoint.
type Gateway struct {
	// Where the gateway, its web page and health endpoints listen (host:port).
	Listen *string `json:"listen,omitempty" jsonschema:"default=127.0.0.1:7777" jsonschema_extras:"x-fix=write it as host:port\\, e.g. 127.0.0.1:7777 (or [::1]:7777)"`
	// Serve /mcp without sessions, so that any replica can answer any request.
	Stateless *bool `json:"stateless,omitempty" jsonschema:"default=false"`
	// Answer tools/call requests without the MCP SDK's server (faster); false sends every request through the SDK.
	FastPath *bool `json:"fast_path,omitempty" jsonschema:"default=true"`
	// Browser Origin values accepted besides the gateway's own address: "*" or scheme://host[:port].
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
	// Host header values accepted besides loopback names and the listen address.
	AllowedHosts []string `json:"allowed_hosts,omitempty"`
	// On SIGINT or SIGTERM, how long calls in flight may run before they are cancelled; on a reload, how long the calls in flight on a server it removes or changes may run (the new file's value).
	ShutdownTimeout *Duration `json:"shutdown_timeout,omitempty" jsonschema_extras:"default=10s,minDuration=0s,maxDuration=10m,x-fix=use a value from 0s (cancel at once) to 10m (the default is 10s)"`
	// Client sessions idle this long are closed; 0 never closes them.
	SessionTimeout *Duration `json:"session_timeout,omitempty" jsonschema_extras:"default=30m,minDuration=0s"`
	// A client session that has not finished its handshake (initialize, then notifications/initialized) this long after opening is closed; 0 leaves it to session_timeout.
	HandshakeTimeout *Duration `json:"handshake_timeout,omitempty" jsonschema_extras:"default=10s,minDuration=0s,maxDuration=10m,x-fix=use a value from 0s (no separate deadline) to 10m (the default is 10s)"`
	// How long one write to a client (an event of its stream, a response) may wait for the client to take it; past it the connection is closed.
	WriteTimeout *Duration `json:"write_timeout,omitempty" jsonschema_extras:"default=10s,minDuration=1s,maxDuration=10m,x-fix=use a value from 1s to 10m (the default is 10s)"`
	// How long a client of protocol 2026-07-28 may take to answer what a server asked it in an input-required result (elicitation, sampling, roots); past it the server's request gets an error.
	InputTimeout *Duration `json:"input_timeout,omitempty" jsonschema_extras:"default=5m,minDuration=1s,maxDuration=1h,x-fix=use a value from 1s to 1h (the default is 5m)"`
	// Client sessions open at once, all users together (streamable HTTP and SSE); past it a new session gets HTTP 503. 0 is no limit.
	MaxSessions *int `json:"max_sessions,omitempty" jsonschema:"minimum=0,default=10000" jsonschema_extras:"x-fix=use 0 (no limit) or a number of sessions such as 10000"`
	// Client sessions open at once per user (token user, OAuth subject, or default_user); past it a new session of that user gets HTTP 429. 0 is no limit.
	MaxSessionsPerUser *int `json:"max_sessions_per_user,omitempty" jsonschema:"minimum=0,default=1000" jsonschema_extras:"x-fix=use 0 (no limit) or a number of sessions such as 1000"`
	// Connections open at once on the listen address; past it an idle or unfinished one is closed, else the new one gets HTTP 503. 0 leaves only the bound of the open-file limit.
	MaxConnections *int `json:"max_connections,omitempty" jsonschema:"minimum=0,default=10000" jsonschema_extras:"x-fix=use 0 (only the open-file limit's bound) or a number of connections such as 10000"`
	// Requests open at once per user on the MCP endpoints (calls, event streams); past it that user's next one gets HTTP 429. 0 is no limit.
	MaxRequestsPerUser *int `json:"max_requests_per_user,omitempty" jsonschema:"minimum=0,default=1000" jsonschema_extras:"x-fix=use 0 (no limit) or a number of requests such as 1000"`
	// The most messages one JSON-RPC batch (protocol 2025-03-26) may hold; a larger one gets HTTP 400. 0 is no limit.
	MaxBatch *int `json:"max_batch,omitempty" jsonschema:"minimum=0,default=100" jsonschema_extras:"x-fix=use 0 (no limit) or a number of messages such as 100"`
	// The largest body of one request to the MCP endpoints; a larger one gets 413.
	MaxRequestBytes *Size `json:"max_request_bytes,omitempty" jsonschema_extras:"default=4MiB,minSize=64KiB,maxSize=256MiB"`
	// The identity of a trusted local caller that names none (default: the OS user).
	DefaultUser *string `json:"default_user,omitempty"`
	// Text put before the upstream servers' combined instructions.
	Instructions *string `json:"instructions,omitempty"`
	// Named subsets of the servers, each served at /mcp/{name}.
	Views []View `json:"views,omitempty" jsonschema_extras:"x-type=a list of views"`
	// Bearer tokens that may use the gateway; none is only allowed on a loopback address.
	Tokens []Token `json:"tokens,omitempty" jsonschema_extras:"x-type=a list of tokens"`
	// Sign-in with OAuth: the gateway accepts the access tokens of an authorization server (docs/auth-gateway.md).
	OAuth *OAuth `json:"oauth,omitempty"`
}

// OAuth makes the gateway an OAuth 2.1 protected resource: clients sign in
// at an authorization server and send its access tokens, which the
// gateway checks (JWTs against the server's keys, opaque tokens by
// introspection). Static tokens keep working beside it.
type OAuth struct {
	// The gateway's base URL as clients reach it (https, or http on a loopback address), e.g. https://mcp.example.com.
	Resource string `json:"resource" jsonschema:"required" jsonschema_extras:"x-required-fix=add resource: with the URL clients reach the gateway at\\, e.g. resource: https://mcp.example.com"`
	// The authorization server's issuer URL, exactly as its metadata names it.
	Issuer string `json:"issuer" jsonschema:"required" jsonschema_extras:"x-required-fix=add issuer: with the authorization server's issuer URL\\, e.g. issuer: https://login.example.com/realms/team"`
	// Identifiers accepted in a token's aud besides the gateway's own URLs (for providers that name an API otherwise).
	Audiences []string `json:"audiences,omitempty"`
	// Where the authorization server publishes its signing keys (default: its metadata's jwks_uri).
	JWKSURL *string `json:"jwks_url,omitempty"`
	// The JWS algorithms accepted (default: every asymmetric one; none and HMAC are never accepted).
	Algorithms []string `json:"algorithms,omitempty" jsonschema:"enum=RS256,enum=RS384,enum=RS512,enum=PS256,enum=PS384,enum=PS512,enum=ES256,enum=ES384,enum=ES512,enum=EdDSA" jsonschema_extras:"x-fix=use some of RS256\\, RS384\\, RS512\\, PS256\\, PS384\\, PS512\\, ES256\\, ES384\\, ES512 and EdDSA (none and HS256 are never accepted)"`
	// Token introspection (RFC 7662), for opaque access tokens.
	Introspection *Introspection `json:"introspection,omitempty"`
	// The claim that holds the user id; a dotted path reaches into nested claims.
	UserClaim *string `json:"user_claim,omitempty" jsonschema:"default=sub"`
	// The claim that holds the user's groups or roles, e.g. groups, roles or realm_access.roles.
	GroupsClaim *string `json:"groups_claim,omitempty"`
	// The views every signed-in user may use ("*" for all), with groups_claim.
	Views []string `json:"views,omitempty"`
	// Group -> the views its members may use ("*" for all).
	GroupViews map[string][]string `json:"group_views,omitempty" jsonschema_extras:"x-type=a mapping of groups to lists of views"`
	// Scopes every token must have; they are advertised to clients.
	Scopes []string `json:"scopes,omitempty"`
	// View -> scopes a token must also have to use it.
	ViewScopes map[string][]string `json:"view_scopes,omitempty" jsonschema_extras:"x-type=a mapping of views to lists of scopes"`
	// Tolerated clock difference in exp, nbf and iat.
	Leeway *Duration `json:"leeway,omitempty" jsonschema_extras:"default=30s,minDuration=0s,maxDuration=5m,x-fix=use a value from 0s to 5m (a leeway tolerates clock differences\\, it does not extend tokens)"`
	// The cache of checked tokens.
	Cache *OAuthCache `json:"cache,omitempty"`
	// How the authorization server's signing keys are refreshed.
	Keys *OAuthKeys `json:"keys,omitempty"`
	// The gateway's name in the protected resource metadata.
	ResourceName *string `json:"resource_name,omitempty" jsonschema:"default=Switchboard gateway"`
	// A URL for people, put in the protected resource metadata.
	ResourceDocumentation *string `json:"resource_documentation,omitempty"`
	// Lets people sign in to the web console at the authorization server (docs/web.md#security).
	Console *OAuthConsole `json:"console,omitempty"`
}

// OAuthConsole lets people sign in to the web console at the gateway's
// authorization server (authorization code with PKCE); the console is
// then an OAuth client of its own, whose access tokens the gateway checks
// as it checks any client's.
type OAuthConsole struct {
	// The console's client id at the authorization server (default: registered dynamically, where the server offers registration).
	ClientID *string `json:"client_id,omitempty"`
	// An environment variable holding the console client's secret (omit for a public client).
	ClientSecretEnv *string `json:"client_secret_env,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_extras:"x-name=environment variable name,x-fix=name the variable that holds the secret (letters\\, digits and _)\\, e.g. SWITCHBOARD_OAUTH_SECRET"`
	// The scopes to ask for (default: scopes).
	Scopes []string `json:"scopes,omitempty"`
	// Only members of one of these groups may use the console (default: every user the gateway accepts); needs groups_claim.
	Groups []string `json:"groups,omitempty"`
}

// Introspection configures token introspection (RFC 7662).
type Introspection struct {
	// The introspection endpoint (default: the authorization server's metadata's introspection_endpoint).
	URL *string `json:"url,omitempty"`
	// The gateway's client id at the authorization server.
	ClientID *string `json:"client_id,omitempty"`
	// An environment variable holding the gateway's client secret.
	ClientSecretEnv *string `json:"client_secret_env,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_extras:"x-name=environment variable name,x-fix=name the variable that holds the secret (letters\\, digits and _)\\, e.g. SWITCHBOARD_OAUTH_SECRET"`
	// How the client id and secret are sent.
	AuthMethod *string `json:"auth_method,omitempty" jsonschema:"enum=client_secret_basic,enum=client_secret_post,default=client_secret_basic"`
}

// OAuthCache bounds the cache of checked access tokens.
type OAuthCache struct {
	// How many checked tokens are kept.
	Size *int `json:"size,omitempty" jsonschema:"minimum=1,maximum=10000000,default=10000"`
	// How long a checked token is trusted without asking again (never past its expiry); a revoked token may be accepted this long.
	TTL *Duration `json:"ttl,omitempty" jsonschema_extras:"default=2m,minDuration=1s,maxDuration=1h"`
	// How long a token the introspection endpoint called inactive is refused without asking again.
	NegativeTTL *Duration `json:"negative_ttl,omitempty" jsonschema_extras:"default=10s,minDuration=1s,maxDuration=1h"`
}

// OAuthKeys configures how the signing keys are refreshed.
type OAuthKeys struct {
	// How often the key set is fetched again.
	Refresh *Duration `json:"refresh,omitempty" jsonschema_extras:"default=1h,minDuration=1m,maxDuration=24h"`
	// The least time between two fetches caused by tokens naming an unknown key.
	MinInterval *Duration `json:"min_interval,omitempty" jsonschema_extras:"default=30s,minDuration=1s,maxDuration=1h"`
}

// View is a named subset of the catalog served at /mcp/{name}.
type View struct {
	// The view's path segment; "default" replaces the implicit view at /mcp.
	Name string `json:"name" jsonschema:"required,pattern=^[a-z0-9][a-z0-9_-]{0\\,63}$" jsonschema_extras:"x-name=view name,x-fix=use 1 to 64 lower-case letters\\, digits\\, _ and -\\, starting with a letter or digit,x-required-fix=add name: with a lower-case name\\, e.g. name: github (the view is served at /mcp/github; \"default\" replaces /mcp)"`
	// The servers the view draws on (default: all).
	Servers []string `json:"servers,omitempty"`
	// Globs on the exposed tool name: a tool is in the view when it matches one (default: all).
	Include []string `json:"include,omitempty"`
	// Globs on the exposed tool name: a tool matching one is left out.
	Exclude []string `json:"exclude,omitempty"`
	// always exposes server__tool names; never the server's own (for a view of exactly one server).
	Prefix *string `json:"prefix,omitempty" jsonschema:"enum=always,enum=never,default=always"`
	// Exposed tool name -> the name clients see.
	Rename map[string]string `json:"rename,omitempty" jsonschema_extras:"x-type=a mapping of names to strings"`
	// Exposed tool name (before rename) -> a replacement description.
	Descriptions map[string]string `json:"descriptions,omitempty" jsonschema_extras:"x-type=a mapping of names to strings"`
}

// Token is one bearer token and what it grants: exactly one of token_env
// and token_sha256.
type Token struct {
	// A label for logs and messages (never the token itself); default tokens[N].
	Name *string `json:"name,omitempty"`
	// The identity calls made with the token carry.
	User string `json:"user" jsonschema:"required" jsonschema_extras:"x-required-fix=add user: with the identity calls made with this token carry\\, e.g. user: alice"`
	// An environment variable holding the token.
	TokenEnv *string `json:"token_env,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_extras:"x-name=environment variable name,x-fix=name the variable that holds the token (letters\\, digits and _)\\, e.g. token_env: ALICE_TOKEN"`
	// The token's SHA-256 in lower-case hex (printf %s TOKEN | sha256sum).
	TokenSHA256 *string `json:"token_sha256,omitempty"`
	// The views the token may use: view names, "default" or "*" (default: all).
	Views []string `json:"views,omitempty"`
}

// HookSettings bound the pool that runs hooks.
type HookSettings struct {
	// Hook runs at once.
	MaxConcurrent *int `json:"max_concurrent,omitempty" jsonschema:"minimum=1,maximum=64,default=5"`
	// Runs waiting for a worker; a run that finds it full is rejected.
	QueueSize *int `json:"queue_size,omitempty" jsonschema:"minimum=1,maximum=100000,default=100"`
	// Retries of a transient failure.
	Retries *int `json:"retries,omitempty" jsonschema:"minimum=0,maximum=5,default=1"`
	// Wait before a retry.
	RetryDelay *Duration `json:"retry_delay,omitempty" jsonschema_extras:"default=2s,minDuration=0s,maxDuration=1m"`
	// The longest chain of events fired by hooks.
	MaxDepth *int `json:"max_depth,omitempty" jsonschema:"minimum=1,maximum=50,default=10"`
	// The default action timeout.
	Timeout *Duration `json:"timeout,omitempty" jsonschema_extras:"default=30s,minDuration=1s,maxDuration=5m"`
}

// Notebook configures the Markdown document runner.
type Notebook struct {
	// Where images and other binary results are saved, relative to the document's folder.
	ImagesDir *string `json:"images_dir,omitempty"`
	// How many blocks of a document run at once.
	Concurrency *int `json:"concurrency,omitempty" jsonschema:"minimum=1,maximum=64,default=1"`
	// The most tool-call blocks a document may hold.
	MaxBlocks *int `json:"max_blocks,omitempty" jsonschema:"minimum=1,maximum=100000,default=1000"`
	// Which server the blocks of a section use.
	Bindings []Binding `json:"bindings,omitempty" jsonschema_extras:"x-type=a list of bindings"`
}

// Binding binds a section of a document to a server: exactly one of
// heading, block or start_line with end_line.
type Binding struct {
	// A heading's text, with or without its leading #s ("## Weather" matches only a level-2 heading).
	Heading *string `json:"heading,omitempty" expand:"none"`
	// A block id, as written after ^ on the block.
	Block *string `json:"block,omitempty" expand:"none"`
	// The first line of a range (1-based).
	StartLine *int `json:"start_line,omitempty" jsonschema:"minimum=1"`
	// The last line of a range (after start_line).
	EndLine *int `json:"end_line,omitempty"`
	// The server the section's blocks use.
	Server string `json:"server" jsonschema:"required" jsonschema_extras:"x-required-fix=add server: with the name of a server under servers:"`
	// Apply a heading binding to the headings nested under it as well.
	InheritToChildren *bool `json:"inherit_to_children,omitempty" jsonschema:"default=false"`
}

// FrontMatter is the switchboard: key of a Markdown document's front
// matter.
type FrontMatter struct {
	// Section bindings of this document; they come before the configuration's.
	Bindings []Binding `json:"bindings,omitempty" jsonschema_extras:"x-type=a list of bindings"`
}

// LLM is the OpenAI-compatible chat completions endpoint. The API key is
// never in the file: api_key_env names the variable holding it.
type LLM struct {
	// The endpoint including /v1, e.g. http://127.0.0.1:11434/v1.
	BaseURL *string `json:"base_url,omitempty"`
	// The model name, e.g. llama3.2.
	Model *string `json:"model,omitempty"`
	// The name of the environment variable holding the API key (never the key).
	APIKeyEnv *string `json:"api_key_env,omitempty"`
	// Price per 1M prompt tokens (0: free).
	PromptPrice *float64 `json:"prompt_price,omitempty" jsonschema:"minimum=0,default=0" jsonschema_extras:"x-fix=write a number such as 0.15 (0 means free or no limit)"`
	// Price per 1M completion tokens (0: free).
	CompletionPrice *float64 `json:"completion_price,omitempty" jsonschema:"minimum=0,default=0" jsonschema_extras:"x-fix=write a number such as 0.15 (0 means free or no limit)"`
	// How long one request may take; 0 is the client's default (60s).
	Timeout *Duration `json:"timeout,omitempty" jsonschema_extras:"minDuration=0s,maxDuration=30m,x-fix=use a value from 1s to 30m\\, or 0 for the default (60s)"`
	// The model accepts images, so image results are passed to it.
	Vision *bool `json:"vision,omitempty" jsonschema:"default=false"`
	// Ask for answers as server-sent events.
	Stream *bool `json:"stream,omitempty" jsonschema:"default=true"`
	// How many times a request answered 429 or 5xx is sent again.
	MaxRetries *int `json:"max_retries,omitempty" jsonschema:"minimum=0,maximum=10,default=3"`
}

// Telemetry sends OpenTelemetry traces of every call over OTLP
// (docs/observability.md). Keys left out fall back to the standard OTEL_*
// environment variables, then to the defaults; a key whose default comes
// from the environment has no schema default (an editor that writes a
// default in would turn the environment's choice off).
type Telemetry struct {
	// Send traces; off by default, on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set and this key is absent.
	Enabled *bool `json:"enabled,omitempty"`
	// The OTLP receiver's URL (http:// or https://); for http/protobuf, /v1/traces is added when the URL has no path. Default OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318 (grpc: http://localhost:4317).
	Endpoint *string `json:"endpoint,omitempty" jsonschema_extras:"x-fix=give an http:// or https:// URL\\, e.g. http://localhost:4318"`
	// How spans are sent: http/protobuf or grpc. Default OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
	Protocol *string `json:"protocol,omitempty" jsonschema:"enum=http/protobuf,enum=grpc"`
	// Headers sent with every export, e.g. an API key; values may use ${VAR}. Added to OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]Text `json:"headers,omitempty" jsonschema_extras:"x-type=a mapping of names to strings" expand:"headers"`
	// The service.name of the spans. Default OTEL_SERVICE_NAME, else switchboard.
	ServiceName *string `json:"service_name,omitempty"`
	// The share of new traces recorded, from 0 to 1; a trace a client started follows the client's decision. Default OTEL_TRACES_SAMPLER, else 1.
	SampleRatio *float64 `json:"sample_ratio,omitempty" jsonschema:"minimum=0,maximum=1" jsonschema_extras:"x-fix=write a number from 0 (no new traces) to 1 (every trace)"`
	// Also send the metrics of /metrics over OTLP, to the same receiver (endpoint, protocol, headers).
	Metrics *TelemetryMetrics `json:"metrics,omitempty"`
}

// TelemetryMetrics sends the Prometheus metrics over OTLP as well
// (docs/observability.md). Off unless enabled or the environment asks.
type TelemetryMetrics struct {
	// Send metrics over OTLP; off by default, on when OTEL_METRICS_EXPORTER=otlp or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set and this key is absent.
	Enabled *bool `json:"enabled,omitempty"`
	// How often the metrics are sent. Default OTEL_METRIC_EXPORT_INTERVAL (milliseconds), else 60s.
	Interval *Duration `json:"interval,omitempty" jsonschema_extras:"minDuration=100ms,maxDuration=24h"`
}

// Audit writes the audit trail: one JSON line per security-relevant event
// (docs/audit.md). Off unless file is set.
type Audit struct {
	// Where the trail goes: a file path (relative to the file's folder), or - for standard output. Unset: no audit trail.
	File *string `json:"file,omitempty" jsonschema_extras:"x-fix=give a file path such as audit.jsonl\\, or - for standard output"`
	// The size past which the file is moved aside as a backup and a new one started; 0 never rotates.
	MaxSize *Size `json:"max_size,omitempty" jsonschema_extras:"default=100MiB,minSize=0B,maxSize=64GiB"`
	// How many rotated backups are kept; 0 keeps them all (unless max_age removes them).
	MaxBackups *int `json:"max_backups,omitempty" jsonschema:"minimum=0,maximum=100000,default=10"`
	// Backups older than this are removed; 0 keeps them whatever their age.
	MaxAge *Duration `json:"max_age,omitempty" jsonschema_extras:"default=0s,minDuration=0s"`
	// Compress rotated backups with gzip (switchboard audit reads them).
	Compress *bool `json:"compress,omitempty" jsonschema:"default=false"`
	// Fail closed: when an event cannot be written, set the stop switch so that no call runs unaudited, until the file is writable and someone runs switchboard resume.
	Required *bool `json:"required,omitempty" jsonschema:"default=false"`
}

// Agent bounds the agent loop. A limit of 0 means none, except max_steps.
type Agent struct {
	// How many times the model is asked per prompt.
	MaxSteps *int `json:"max_steps,omitempty" jsonschema:"minimum=1,maximum=1000,default=10"`
	// The tool calls allowed per prompt (0: no limit).
	MaxToolCalls *int `json:"max_tool_calls,omitempty" jsonschema:"minimum=0,maximum=2147483647,default=50"`
	// The prompt and completion tokens allowed per prompt (0: no limit).
	MaxTokens *int `json:"max_tokens,omitempty" jsonschema:"minimum=0,maximum=2147483647,default=0"`
	// The cost allowed per prompt, in the unit of the llm prices (0: no limit).
	MaxCost *float64 `json:"max_cost,omitempty" jsonschema:"minimum=0,default=0" jsonschema_extras:"x-fix=write a number such as 0.15 (0 means free or no limit)"`
	// The time allowed per prompt (0: no limit).
	Timeout *Duration `json:"timeout,omitempty" jsonschema_extras:"default=5m,minDuration=0s,maxDuration=24h,x-fix=use a value up to 24h\\, or 0 for no time limit (the default is 5m)"`
	// Replaces the built-in system prompt.
	SystemPrompt *string `json:"system_prompt,omitempty"`
	// The servers whose tools the agent may use (default: all enabled).
	Servers []string `json:"servers,omitempty"`
	// Globs on exposed tool names the agent may use, e.g. github__* (default: all).
	Tools []string `json:"tools,omitempty"`
	// How the agent answers a server that asks the person a question during a tool call: decline, or accept-defaults (accept when every required field has a default, else decline).
	Elicitation *string `json:"elicitation,omitempty" jsonschema:"enum=decline,enum=accept-defaults,default=decline"`
}
