package schema

// Server is one upstream MCP server. The transport decides which keys
// apply: a key's transports tag names the transports that use it, the
// first the one to suggest when it is used with another (no tag: all).
type Server struct {
	// A unique name: letters, digits, _ and -, at most 64 characters.
	Name string `json:"name" jsonschema:"required,pattern=^[A-Za-z0-9_-]{1\\,64}$" jsonschema_extras:"x-name=server name,x-fix=use 1 to 64 letters\\, digits\\, _ and -\\, e.g. github,x-required-fix=add name: with a unique name\\, e.g. name: github"`
	// What the server is for, shown in lists.
	Description *string `json:"description,omitempty"`
	// How Switchboard talks to the server.
	Transport *string `json:"transport,omitempty" jsonschema:"enum=stdio,enum=sse,enum=http,enum=websocket,default=stdio"`
	// stdio: the program to run, a bare name found on PATH or an absolute path.
	Command *string `json:"command,omitempty" transports:"stdio"`
	// stdio: the program's arguments.
	Args []Text `json:"args,omitempty" transports:"stdio"`
	// stdio: environment variables of the child (they win over env_file).
	Env map[string]Text `json:"env,omitempty" jsonschema_extras:"x-type=a mapping of names to strings" transports:"stdio"`
	// stdio: a KEY=VALUE file merged into env, relative to this file's folder.
	EnvFile *string `json:"env_file,omitempty" transports:"stdio"`
	// stdio: pass the whole environment, not just the base variables.
	InheritEnv *bool `json:"inherit_env,omitempty" jsonschema:"default=false" transports:"stdio"`
	// stdio: the child's working directory, relative to this file's folder.
	Cwd *string `json:"cwd,omitempty" transports:"stdio"`
	// stdio: the stream encoding; only utf-8.
	Encoding *string `json:"encoding,omitempty" jsonschema:"default=utf-8" transports:"stdio"`
	// stdio: run an image with docker run --rm -i instead of command.
	Docker *Docker `json:"docker,omitempty" transports:"stdio"`
	// stdio: what the launch policy would refuse but this server may do
	// (honoured in a trusted or native file).
	Launch *Launch `json:"launch,omitempty" transports:"stdio"`
	// sse, http, websocket: the server's URL.
	URL *string `json:"url,omitempty" transports:"http,sse,websocket"`
	// sse, http, websocket: headers sent with every request.
	Headers map[string]Text `json:"headers,omitempty" jsonschema_extras:"x-type=a mapping of names to strings" transports:"http,sse,websocket" expand:"headers"`
	// sse, http, websocket: how Switchboard signs in to a server that
	// requires OAuth 2.1 (discovered without it; see docs/auth.md).
	OAuth *ServerOAuth `json:"oauth,omitempty" transports:"http,sse,websocket"`
	// sse, http, websocket: whose sign-in a call uses: one shared sign-in,
	// or each gateway user's own (switchboard auth login NAME --user USER).
	Auth *string `json:"auth,omitempty" jsonschema:"enum=shared,enum=per_user,default=shared" transports:"http,sse,websocket"`
	// How long connecting and initializing may take (default: defaults.connect_timeout).
	Timeout *Duration `json:"timeout,omitempty" jsonschema_extras:"exclusiveMinDuration=0s,x-aliases=connect_timeout"`
	// sse, http: how long to wait for an event (0: no limit).
	SSEReadTimeout *Duration `json:"sse_read_timeout,omitempty" jsonschema_extras:"default=0s,minDuration=0s" transports:"sse,http"`
	// http: end the session with DELETE when closing.
	TerminateOnClose *bool `json:"terminate_on_close,omitempty" jsonschema:"default=true" transports:"http"`
	// How long one request may take (default: defaults.request_timeout).
	RequestTimeout *Duration `json:"request_timeout,omitempty" jsonschema_extras:"minDuration=1s,maxDuration=5m"`
	// Retries of a request that failed transiently (default: defaults.max_retries).
	MaxRetries *int `json:"max_retries,omitempty" jsonschema:"minimum=0"`
	// This server's calls in flight at once; 0 means only limits.max_concurrent applies.
	MaxConcurrent *int `json:"max_concurrent,omitempty" jsonschema:"minimum=0,default=0"`
	// Whose upstream session a gateway client's requests use: one shared by
	// everyone (stateless servers), one per gateway client session (browser
	// automation, REPLs, servers keyed by roots), or one per user (per-user
	// state or credentials). See docs/gateway.md.
	Session *string `json:"session,omitempty" jsonschema:"enum=shared,enum=per_client,enum=per_user,default=shared"`
	// session per_client or per_user: the most upstream sessions of this
	// server open at once (for stdio, child processes); one more is refused.
	MaxSessions *int `json:"max_sessions,omitempty" jsonschema:"minimum=1,maximum=1000,default=16"`
	// Add the caller's user_id and session_id to each tools/call's _meta
	// (seed 002's task server reads them); false forwards the client's
	// _meta as it sent it, as a view that should look like its server
	// needs (identity headers are configured under headers).
	IdentityMeta *bool `json:"identity_meta,omitempty" jsonschema:"default=true"`
	// Redact secrets in results returned to callers.
	RedactResults *bool `json:"redact_results,omitempty" jsonschema:"default=false"`
	// Directories the server is given as its roots: paths or file:// URIs.
	Roots []string `json:"roots,omitempty"`
	// false keeps the server configured but not started.
	Enabled *bool `json:"enabled,omitempty" jsonschema:"default=true"`
	// Discover the server's tools.
	LoadTools *bool `json:"load_tools,omitempty" jsonschema:"default=true"`
	// Discover the server's prompts.
	LoadPrompts *bool `json:"load_prompts,omitempty" jsonschema:"default=true"`
	// Discover the server's resources.
	LoadResources *bool `json:"load_resources,omitempty" jsonschema:"default=true"`
	// Env and header keys whose values are secrets, besides those that look like credentials.
	Secrets []string `json:"secrets,omitempty" expand:"none"`
}

// ServerOAuth is how Switchboard signs in to one server with OAuth 2.1. Every
// key is optional: without any, the authorization server is discovered
// and Switchboard registers itself there.
type ServerOAuth struct {
	// A client registered with the authorization server by hand; used
	// before any other registration.
	ClientID *string `json:"client_id,omitempty" jsonschema:"minLength=1"`
	// The environment variable holding that client's secret; without it
	// the client is public.
	ClientSecretEnv *string `json:"client_secret_env,omitempty" jsonschema:"pattern=^[A-Za-z_][A-Za-z0-9_]*$" jsonschema_extras:"x-fix=name the variable that holds the secret (letters\\, digits and _)\\, e.g. client_secret_env: TOOLS_CLIENT_SECRET"`
	// An https URL of a client ID metadata document, used as the client ID
	// where the authorization server supports them.
	ClientMetadataURL *string `json:"client_metadata_url,omitempty" jsonschema:"pattern=^https://[^/]+/.+" jsonschema_extras:"x-fix=use an https URL with a path\\, e.g. https://example.com/switchboard.json"`
	// The scopes to ask for, instead of the discovered ones.
	Scopes []string `json:"scopes,omitempty" expand:"none"`
	// The loopback port of the sign-in's redirect listener (default: any
	// free port).
	RedirectPort *int `json:"redirect_port,omitempty" jsonschema:"minimum=1,maximum=65535"`
	// authorization_code signs a person in through the browser;
	// client_credentials gets tokens for Switchboard itself.
	Grant *string `json:"grant,omitempty" jsonschema:"enum=authorization_code,enum=client_credentials,default=authorization_code"`
	// The only authorization server accepted, when the server names several.
	Issuer *string `json:"issuer,omitempty" jsonschema:"pattern=^https?://" jsonschema_extras:"x-name=issuer URL,x-fix=use the authorization server's issuer URL\\, starting with https://\\, e.g. issuer: https://login.example.com"`
	// How the configured client authenticates at the token endpoint
	// (default: from what the authorization server offers).
	TokenAuthMethod *string `json:"token_auth_method,omitempty" jsonschema:"enum=none,enum=client_secret_basic,enum=client_secret_post"`
}

// Launch widens the launch policy for one server.
type Launch struct {
	// Names of refused constructs this server may use, as the refusal
	// message gives them (e.g. docker.privileged, npx.node-options).
	Allow []string `json:"allow,omitempty"`
}

// Docker is a managed Docker launch: docker run --rm -i IMAGE.
type Docker struct {
	// The image to run, e.g. mcp/github.
	Image string `json:"image" jsonschema:"required" jsonschema_extras:"x-required-fix=add image: with the image to run\\, e.g. image: mcp/github"`
	// The container's name.
	ContainerName *string `json:"container_name,omitempty"`
	// The container's command and arguments.
	Command []Text `json:"command,omitempty"`
	// Container port (optionally /tcp or /udp) -> host port, published on 127.0.0.1.
	Ports map[string]int `json:"ports,omitempty" jsonschema_extras:"x-type=a mapping of container port to host port"`
}

// JSONSchemaExtend bounds the host ports and words a missing image.
func (Docker) JSONSchemaExtend(s *Schema) {
	setExtra(s, "x-required-message", "is required by docker")
	if p, ok := s.Properties.Get("ports"); ok && p.AdditionalProperties != nil {
		p.AdditionalProperties.Minimum = "1"
		p.AdditionalProperties.Maximum = "65535"
		setExtra(p.AdditionalProperties, "x-fix", "use a port from 1 to 65535")
		setExtra(p.AdditionalProperties, "x-name", "host port")
	}
}
