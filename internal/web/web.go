// Package web is the web console that `switchboard serve` shows at `/` on
// the gateway's address: an overview with charts of the call history, the
// servers with their live health (enable, disable, refresh, re-enable after
// an auto-disable), a page per server, servers added, edited and removed in
// the configuration file (through a [ConfigEditor]), the tools with a "Try
// it" form generated from each tool's input schema, prompts, resources and
// live resource subscriptions, a protocol log of the console's own MCP
// session with the gateway, the call history, the hooks, and the stop
// switch.
//
// Pages are Go html/template, so that every string that came from an MCP
// server is escaped; a little plain JavaScript (embedded with go:embed, no
// build step) builds the tool forms and applies live updates with
// textContent, never innerHTML. Live updates arrive over server-sent events
// at /ui/events. Calls run in the daemon under the execution engine, through
// the same control.Backend the CLI uses; the page follows their progress
// over the event stream and can cancel them, and answers what a server asks
// during one (an elicitation form or URL, a sampling request approved for
// the llm: model) in the page of that call.
//
// The daemon wraps [Console.Handler] in the gateway's Host and Origin
// checks. The console adds its own sessions, kept in the store so that they
// survive restarts and are shared by replicas: when gateway tokens are
// configured a login form takes a token and sets an HttpOnly, SameSite=Strict
// cookie holding a random session id (never the token); every change needs
// the session's CSRF token; scripts may use the API with a gateway token as
// a bearer instead; every response carries a strict
// Content-Security-Policy with no inline script or style.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Source is the source recorded for calls made from the console.
const Source = toolcall.SourceWeb

// Prefix is the path under which every console page, asset and API lives,
// besides the servers page at "/". The daemon mounts "/" (exactly) and
// Prefix.
const Prefix = "/ui/"

// Log attribute keys.
const (
	logKeyErr    = "err"
	logKeyServer = "server"
	logKeyTool   = "tool"
	logKeyPath   = "path"
	logKeyKind   = "kind"
	logKeyAction = "action"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures a Console.
type Options struct {
	// Backend serves servers, actions, tools, calls, history and the stop
	// switch (the daemon's control.Backend). Required.
	Backend control.Backend
	// Catalog lists prompts, resources and tool schemas. Required.
	Catalog *catalog.Catalog
	// Config returns the configuration in force (gateway tokens decide
	// whether the console asks for a login). Required.
	Config func() *config.Config
	// Snapshots returns every server's state without contacting it (the
	// pool's snapshots); the servers page and its resynchronisation use
	// it, so that a hung server never delays them. Nil falls back to
	// Backend.Servers, which pings connected servers.
	Snapshots func() []upstream.Snapshot
	// Sessions keeps the console's sessions, so that they survive a
	// restart and every replica on the same store shares them; nil keeps
	// them in memory.
	Sessions store.SessionStore
	// Capabilities returns a connected server's declared capabilities
	// (nil when it is not connected); the resource page offers a
	// subscription when they say resources can be subscribed to. Nil
	// offers none.
	Capabilities func(server string) *mcp.ServerCapabilities
	// Connect serves one MCP session of the gateway (its default view)
	// over t until ctx is done or the client closes: the console's own
	// MCP sessions, for resource subscriptions and the Protocol log. Nil
	// leaves both out.
	Connect func(ctx context.Context, t mcp.Transport) error
	// Editor adds, edits and removes servers in the configuration file
	// and applies it; nil leaves the console read-only for servers.
	Editor ConfigEditor
	// Hooks feeds the Hooks page; nil shows that hooks are not configured.
	Hooks HookSource
	// SignIn starts the OAuth sign-in of a server that needs one, for user
	// (the console's user; used by servers signed in per user), and
	// returns the authorization URL to open; the sign-in completes when
	// the browser comes back to Switchboard's redirect listener. Nil offers
	// no "Sign in" button.
	SignIn func(ctx context.Context, server, user string) (authURL string, err error)
	// Authenticator returns the gateway's OAuth authenticator while
	// gateway.oauth is configured (nil otherwise): with
	// gateway.oauth.console, the console signs people in at its
	// authorization server and checks their tokens with it. Nil offers no
	// such sign-in.
	Authenticator func() *tokenauth.Authenticator
	// Logger receives structured events; nil discards them.
	Logger *slog.Logger
	// OAuth checks a script's OAuth access token (gateway.oauth) with the
	// gateway's own validator: the identity, or the refusal to answer
	// with; nil, nil when gateway.oauth is not configured. Nil accepts
	// static tokens only.
	OAuth func(r *http.Request) (*tokenauth.Identity, *tokenauth.Refusal)
	// Audit records logins and refused bearer tokens; the actions the
	// console asks of Backend carry its user as their actor. Nil records
	// nothing.
	Audit *audit.Auditor
	// Version is shown in the page footer.
	Version string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Console is the web console. Create it with New, serve Handler, and run
// Run for as long as it is served.
type Console struct {
	opts   Options
	logger *slog.Logger
	now    func() time.Time
	pages  map[string]*template.Template
	static http.Handler

	sessions *sessions
	logins   loginLimiter
	hub      *hub
	calls    *calls
	mcp      mcpSessions
	states   stateHistory
	// followers: which sessions were shown which task (taskfollow.go).
	followers taskFollowers
	oidc      oidcState // sign-ins at the authorization server (oidc.go)

	// ctx is the parent of every call the console runs; Run cancels it
	// when it returns.
	ctx     context.Context
	cancel  context.CancelFunc
	runMu   sync.Mutex
	closing bool           // Run is returning: no new calls
	wg      sync.WaitGroup // call goroutines

	stopMu  sync.Mutex
	stopped bool // the stop switch as last published
}

// New returns a console; nothing runs until Run.
func New(opts Options) (*Console, error) {
	if opts.Backend == nil || opts.Catalog == nil || opts.Config == nil {
		return nil, errors.New("web: Backend, Catalog and Config are required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c := &Console{
		opts: opts, logger: logger, now: now, pages: pages,
		static:   http.StripPrefix(Prefix+"static/", http.FileServerFS(sub)),
		sessions: newSessions(now, opts.Sessions, func(msg string, err error) { logger.Warn(msg, logKeyErr, err) }),
		hub:      newHub(),
		calls:    newCalls(now),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// stopPoll is how often Run looks at the stop switch, which the CLI can
// flip from another process.
const stopPoll = time.Second

// Run keeps sessions and finished calls tidy and publishes stop switch
// changes until ctx is done; then it cancels the calls the console started,
// waits for them, and ends every event stream.
func (c *Console) Run(ctx context.Context) error {
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.runMu.Lock()
			c.closing = true
			c.runMu.Unlock()
			c.cancel()
			c.expireMCP(true)
			c.wg.Wait()
			c.hub.close()
			return nil
		case <-t.C:
			c.sessions.expire(ctx)
			c.calls.expire()
			c.expireMCP(false)
			c.checkStop(ctx)
		}
	}
}

// track counts a new call goroutine, unless Run is returning.
func (c *Console) track() bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	return true
}

// checkStop publishes the stop switch when it changed.
func (c *Console) checkStop(ctx context.Context) {
	st, err := c.opts.Backend.Status(ctx)
	if err != nil {
		return
	}
	c.publishStop(st.Stopped)
}

func (c *Console) publishStop(stopped bool) {
	c.stopMu.Lock()
	changed := c.stopped != stopped
	c.stopped = stopped
	c.stopMu.Unlock()
	if changed {
		c.hub.publish(event{name: "stop", data: mustJSON(map[string]bool{"stopped": stopped})})
	}
}

// ServerChanged publishes a server's new state to every open page. The
// daemon calls it from the pool's change callback; it never blocks.
func (c *Console) ServerChanged(s upstream.Snapshot) {
	v := c.serverView(control.ServerInfo{Snapshot: s})
	c.states.note(c.now(), v)
	c.hub.publish(event{name: "server", data: mustJSON(v)})
}

// CatalogChanged tells open pages that a server's lists changed (the
// servers page updates its counts). It never blocks.
func (c *Console) CatalogChanged(server string, kind catalog.Kind) {
	tools, prompts, resources := c.counts(server)
	c.hub.publish(event{name: "catalog", data: mustJSON(map[string]any{
		"server": server, "kind": kind, "tools": tools, "prompts": prompts, "resources": resources,
	})})
}

// counts returns how many tools, prompts and resources a server lists.
func (c *Console) counts(server string) (tools, prompts, resources int) {
	cat := c.opts.Catalog
	tools = len(cat.ServerTools(server))
	for _, p := range cat.Prompts() {
		if p.Server == server {
			prompts++
		}
	}
	for _, r := range cat.Resources() {
		if r.Server == server {
			resources++
		}
	}
	return tools, prompts, resources
}

// Handler serves the console: "/" and everything under Prefix. The caller
// applies the gateway's Host and Origin checks around it.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	page := func(h http.HandlerFunc) http.Handler { return c.authed(h, false) }
	api := func(h http.HandlerFunc) http.Handler { return c.authed(h, true) }

	mux.Handle("GET /{$}", page(c.serversPage))
	mux.Handle("GET "+Prefix+"overview", page(c.overviewPage))
	mux.Handle("GET "+Prefix+"server", page(c.serverPage))
	mux.Handle("GET "+Prefix+"servers/edit", page(c.serverEditPage))
	mux.Handle("POST "+Prefix+"servers/save", page(c.serverSave))
	mux.Handle("POST "+Prefix+"servers/remove", page(c.serverRemove))
	mux.Handle("GET "+Prefix+"api/stats", api(c.apiStats))
	mux.Handle("GET "+Prefix+"tools", page(c.toolsPage))
	mux.Handle("GET "+Prefix+"tool", page(c.toolPage))
	mux.Handle("GET "+Prefix+"history", page(c.historyPage))
	mux.Handle("GET "+Prefix+"history/{id}", page(c.historyDetailPage))
	mux.Handle("GET "+Prefix+"hooks", page(c.hooksPage))
	mux.Handle("GET "+Prefix+"tasks", page(c.tasksPage))
	mux.Handle("POST "+Prefix+"tasks", page(c.tasksPage))
	mux.Handle("GET "+Prefix+"prompt", page(c.promptPage))
	mux.Handle("POST "+Prefix+"prompt", page(c.promptPage))
	mux.Handle("GET "+Prefix+"resource", page(c.resourcePage))
	mux.Handle("GET "+Prefix+"resource/download", page(c.resourceDownload))
	mux.Handle("POST "+Prefix+"hooks/fire", page(c.hooksFire))
	mux.Handle("GET "+Prefix+"login", http.HandlerFunc(c.loginPage))
	mux.Handle("POST "+Prefix+"login", http.HandlerFunc(c.login))
	mux.Handle("POST "+Prefix+"logout", page(c.logout))
	mux.Handle("GET "+oidcStartPath, http.HandlerFunc(c.oidcStart))
	mux.Handle("GET "+oidcCallbackPath, http.HandlerFunc(c.oidcCallback))
	mux.Handle("GET "+Prefix+"static/", c.static)

	mux.Handle("GET "+Prefix+"events", api(c.events))
	mux.Handle("GET "+Prefix+"api/servers", api(c.apiServers))
	mux.Handle("POST "+Prefix+"api/servers/{name}/{action}", api(c.apiServerAction))
	mux.Handle("POST "+Prefix+"api/calls", api(c.apiStartCall))
	mux.Handle("POST "+Prefix+"api/tasks/result", api(c.apiTaskResult))
	mux.Handle("GET "+Prefix+"api/tasks/status", api(c.apiTaskStatus))
	mux.Handle("GET "+Prefix+"api/calls/{id}", api(c.apiCall))
	mux.Handle("POST "+Prefix+"api/calls/{id}/cancel", api(c.apiCancelCall))
	mux.Handle("POST "+Prefix+"api/calls/{id}/asks/{ask}", api(c.apiAnswer))
	mux.Handle("POST "+Prefix+"api/stop", api(c.apiStop))
	mux.Handle("POST "+Prefix+"api/subscriptions", api(c.apiSubscribe))
	mux.Handle("GET "+Prefix+"protocol", page(c.protocolPage))
	mux.Handle("GET "+Prefix+"api/protocol", api(c.apiProtocol))
	mux.Handle("POST "+Prefix+"api/protocol/ping", api(c.apiProtocolPing))
	mux.Handle("POST "+Prefix+"api/resume", api(c.apiResume))
	mux.Handle(Prefix, page(func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, http.StatusNotFound, fault.New(fault.NotFound, "there is no page at %s", r.URL.Path).
			WithSuggestions("use the navigation at the top of the page"))
	}))
	return securityHeaders(mux)
}

// csp is the Content-Security-Policy of every console response: scripts
// and styles only from the console's own files (no inline code, no style
// attributes), images and audio from the console or data: URLs (tool
// results), requests only to the console, no framing, no plugins.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// securityHeaders sets the headers every console response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin") // not no-referrer: Chromium then sends "Origin: null" with form posts
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Method != http.MethodGet || !isStatic(r.URL.Path) {
			h.Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

func isStatic(p string) bool {
	return len(p) > len(Prefix+"static/") && p[:len(Prefix+"static/")] == Prefix+"static/"
}

// mustJSON encodes v, which is always encodable.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeFault writes a structured error (seed 002's form) as JSON.
func writeFault(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, fault.As(err))
}

// statusOf returns the HTTP status for an error's kind.
func statusOf(err error) int {
	switch fault.KindOf(err) {
	case fault.Validation:
		return http.StatusUnprocessableEntity
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Authentication:
		return http.StatusUnauthorized
	case fault.Authorization:
		return http.StatusForbidden
	case fault.Config:
		return http.StatusConflict
	case fault.LimitExceeded, fault.RateLimited:
		return http.StatusTooManyRequests
	case fault.Connection:
		return http.StatusServiceUnavailable
	case fault.Timeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}
