// Package gateway serves every configured MCP server as one aggregated MCP
// endpoint: streamable HTTP at /mcp and /mcp/{view}, the legacy SSE
// transport at /sse, and stdio for clients that launch their servers as a
// command.
//
// It is a thin MCP server over the catalog: each view (a named subset of
// servers with include/exclude globs, renames and a prefix mode) is one
// go-sdk Server whose tools, prompts, resources and resource templates are
// kept in step with the catalog and with each upstream's availability, so
// that list_changed reaches every connected client. Tool calls go through
// the execution engine (limits, timeouts, history with the caller's
// identity); prompts, resources, completion, subscriptions and logging are
// routed to the server that owns them. Requests an upstream sends its
// client while it works — sampling, elicitation, roots — are forwarded to
// the client whose call caused them.
//
// Authentication (bearer tokens mapped to identities and view grants, and
// OAuth access tokens checked by an installed tokenauth.Authenticator,
// oauth.go) and Origin / Host checks (DNS-rebinding protection) wrap every
// HTTP endpoint.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// Upstreams gives the gateway the live connections; *upstream.Pool
// implements it.
type Upstreams interface {
	Client(name string) (*upstream.Client, error)
}

// Metrics receives the gateway's own counts; *metrics.Metrics implements
// it. Every method must be cheap and must not block.
type Metrics interface {
	SessionOpened(view string)
	SessionClosed(view string)
	Forwarded(method string, err error)
}

// Options configures a Gateway.
type Options struct {
	Config    *config.Config
	Catalog   *catalog.Catalog
	Engine    *toolcall.Engine
	Upstreams Upstreams
	// Logger receives session and routing events (never argument values);
	// nil discards them.
	Logger *slog.Logger
	// Metrics, when set, counts sessions and forwarded requests.
	Metrics Metrics
	// Version is reported to clients as the gateway's version.
	Version string
	// Audit records refused tokens and denied views; nil records nothing.
	Audit *audit.Auditor
}

// Gateway is the aggregated MCP endpoint. Create it with New, keep it in
// step with Run, and serve Handler (HTTP) or ServeStdio.
type Gateway struct {
	cat     *catalog.Catalog
	eng     *toolcall.Engine
	ups     Upstreams
	logger  *slog.Logger
	metrics Metrics
	version string

	createMu sync.Mutex // serialises the creation of view servers

	mu      sync.Mutex
	cfg     *config.Config
	servers map[string]*viewServer // by key: view, narrowing and fixed identity
	retired []*viewServer          // replaced (instructions changed) but still serving sessions
	closed  bool

	wake chan struct{} // a sync is wanted
	// stopping ends when the gateway shuts down: a request of an
	// upstream's that waits on a client outside any call ends with it
	// (outsideCalls), for a client session cannot close while a request
	// it was sent waits for its answer.
	stopping context.Context
	stop     context.CancelFunc
	// asking counts the clients' prompts/get, resources/read and
	// completion/complete waiting upstream (StopRequests).
	asking inFlight

	calls    callRegistry  // client calls in progress, per upstream (calls.go)
	levels   sessionLevels // log levels client sessions set
	owners   owners        // client sessions with upstream sessions of their own (owners.go)
	ownLists ownLists      // lists of owned upstream sessions, for their clients (ownlists.go)
	listens  listens       // client sessions' subscriptions/listen streams (listen.go)
	// elicits are the client sessions waiting for an upstream's URL
	// elicitations to complete (urlelicit.go).
	elicits pendingElicitations
	subs    subscriptions
	sess    sessionRegistry // client sessions of the HTTP endpoints (sessions.go)
	// userReqs counts each user's open calls and streams (userrequests.go).
	userReqs userRequests
	// refusals counts the sessions refused over a limit, for the log.
	refusals refusalLog
	// fastCalls holds the cancel function of each fast-path call in
	// flight, by session id and JSON-RPC id.
	fastCalls sync.Map
	// fastPending holds the requests sent on fast-path calls' streams
	// awaiting the client's answer, by session id and JSON-RPC id.
	fastPending sync.Map
	// resumes holds each session's resumable call streams, by session id
	// (resume.go).
	resumes sync.Map
	// askProgress leads a client's progress on an upstream's request
	// back to the upstream session that asked (askprogress.go).
	askProgress askProgress
	// reqCalls ends calls of stateless requests whose client went away
	// (requests.go).
	reqCalls requestCalls
	// rounds are the calls of clients asked in results (protocol
	// 2026-07-28) while they run (inputrounds.go).
	rounds inputRounds
	// tasks are the tasks clients created, by owner (tasks.go).
	tasks taskRegistry
	// streams are the client sessions' own streams, for notifySession
	// (notify.go).
	streams sessionStreams
	// streamlessAtInit holds the streamable-HTTP client sessions that had
	// no standalone stream open when they sent notifications/initialized
	// (owninit.go).
	streamlessAtInit sync.Map // *mcp.ServerSession -> struct{}
	// initPosted holds, by Mcp-Session-Id, whether a session's
	// standalone stream was open as its notifications/initialized was
	// posted, until the SDK handles it (owninit.go).
	initPosted sync.Map // string -> bool

	sessions sync.WaitGroup // session watchers

	// logTail is closed when the newest hand-off of log messages outside
	// any call has been delivered; the next one waits for it (calls.go).
	logMu   sync.Mutex
	logTail chan struct{}

	oauth atomic.Pointer[tokenauth.Authenticator] // gateway.oauth's (oauth.go)
	audit *audit.Auditor                          // audit.go
}

// New returns a gateway for opts.
func New(opts Options) (*Gateway, error) {
	if opts.Config == nil || opts.Catalog == nil || opts.Engine == nil || opts.Upstreams == nil {
		return nil, errors.New("gateway: Config, Catalog, Engine and Upstreams are required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	v := opts.Version
	if v == "" {
		v = "dev"
	}
	g := &Gateway{
		cat:     opts.Catalog,
		eng:     opts.Engine,
		ups:     opts.Upstreams,
		logger:  logger,
		metrics: opts.Metrics,
		version: v,
		cfg:     opts.Config,
		servers: map[string]*viewServer{},
		wake:    make(chan struct{}, 1),
		audit:   opts.Audit,
	}
	g.stopping, g.stop = context.WithCancel(context.Background())
	g.subs.count = map[subKey]int{}
	return g, nil
}

// SetConfig applies a reloaded configuration: views, tokens and server
// set. Sessions on a view that no longer exists are closed; the others
// see the change (a view's new servers, globs, renames, prefix) as
// list_changed.
func (g *Gateway) SetConfig(cfg *config.Config) {
	g.mu.Lock()
	g.cfg = cfg
	var gone []*viewServer
	for key, vs := range g.servers {
		v, ok := g.viewLocked(vs.spec().view.Name)
		if !ok {
			gone = append(gone, vs)
			delete(g.servers, key)
			continue
		}
		vs.setView(v) // a changed definition shows at the next sync
	}
	g.mu.Unlock()
	for _, vs := range gone {
		vs.closeSessions()
	}
	g.Notify()
}

// config returns the configuration in effect.
func (g *Gateway) config() *config.Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cfg
}

// Notify asks Run to bring every view in step with the catalog and the
// upstreams' availability; call it when a server's state changes.
func (g *Gateway) Notify() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Run keeps every view in step until ctx is done, then closes every
// client session.
func (g *Gateway) Run(ctx context.Context) error {
	changed := g.cat.Changed()
	g.syncAll(ctx)
	var janitor sync.WaitGroup
	janitor.Go(func() { g.janitor(ctx) })
	for {
		select {
		case <-ctx.Done():
			janitor.Wait()
			g.shutdown()
			return nil
		case <-changed:
			changed = g.cat.Changed()
		case <-g.wake:
		}
		g.syncAll(ctx)
	}
}

// shutdown closes every session and waits for their watchers.
func (g *Gateway) shutdown() {
	g.mu.Lock()
	g.closed = true
	all := append(slices.Collect(mapValues(g.servers)), g.retired...)
	g.mu.Unlock()
	g.stop() // before the sessions close, which waits for what they were asked
	for _, vs := range all {
		vs.closeSessions()
	}
	g.rounds.closeAll()
	g.sessions.Wait()
	g.refusals.flush(g.logger, time.Now(), true)
}

// syncAll brings every view server in step; retired ones without
// sessions are dropped.
func (g *Gateway) syncAll(ctx context.Context) {
	g.mu.Lock()
	all := slices.Collect(mapValues(g.servers))
	retired := g.retired[:0]
	for _, vs := range g.retired {
		if vs.sessionCount() > 0 {
			retired = append(retired, vs)
		}
	}
	g.retired = retired
	all = append(all, retired...)
	g.mu.Unlock()
	for _, vs := range all {
		vs.sync(ctx)
	}
	// A view whose combined instructions changed serves new sessions from
	// a fresh server (instructions are sent once, at initialize).
	g.mu.Lock()
	defer g.mu.Unlock()
	for key, vs := range g.servers {
		if vs.instructions != g.instructionsLocked(vs.spec()) {
			delete(g.servers, key)
			g.retired = append(g.retired, vs)
		}
	}
}

// viewLocked returns the named view of the current configuration.
func (g *Gateway) viewLocked(name string) (config.View, bool) {
	for _, v := range g.cfg.Gateway.Views {
		if v.Name == name {
			return v, true
		}
	}
	if name == config.DefaultViewName {
		return config.View{Name: config.DefaultViewName, Prefix: config.PrefixAlways}, true
	}
	return config.View{}, false
}

// serverFor returns the view server for spec, creating it on first use.
// A new server is published only once its registries are filled, so that
// no client (in stateless mode, any request) sees it half-built.
func (g *Gateway) serverFor(ctx context.Context, spec viewSpec) (*viewServer, error) {
	key := spec.key()
	lookup := func() (*viewServer, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.closed {
			return nil, errors.New("the gateway is shutting down")
		}
		return g.servers[key], nil
	}
	if vs, err := lookup(); vs != nil || err != nil {
		return vs, err
	}
	g.createMu.Lock()
	defer g.createMu.Unlock()
	if vs, err := lookup(); vs != nil || err != nil {
		return vs, err
	}
	g.mu.Lock()
	vs := g.newViewServerLocked(spec)
	g.mu.Unlock()
	vs.sync(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, errors.New("the gateway is shutting down")
	}
	g.servers[key] = vs
	return vs, nil
}

// instructionsLocked combines the gateway's own instructions with those of
// every available upstream in the view. A prefix: never view whose
// instructions are one server's alone gives them as the server wrote
// them, to the byte, as the server itself would.
func (g *Gateway) instructionsLocked(spec viewSpec) string {
	own := strings.TrimSpace(g.cfg.Gateway.Instructions)
	type part struct{ server, text string }
	var parts []part
	for _, srv := range g.cfg.Servers {
		if !spec.hasServer(srv.Name) {
			continue
		}
		c, err := g.ups.Client(srv.Name)
		if err != nil {
			continue
		}
		if ir := c.InitializeResult(); ir != nil && strings.TrimSpace(ir.Instructions) != "" {
			parts = append(parts, part{srv.Name, ir.Instructions})
		}
	}
	never := spec.view.Prefix == config.PrefixNever
	if never && own == "" && len(parts) == 1 {
		return parts[0].text
	}
	var b strings.Builder
	b.WriteString(own)
	for _, p := range parts {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if never {
			b.WriteString(strings.TrimSpace(p.text))
			continue
		}
		fmt.Fprintf(&b, "## %s\n%s", p.server, strings.TrimSpace(p.text))
	}
	return b.String()
}

// ServeStdio serves one client session over t (serve --stdio) on the
// default view, until the client disconnects or ctx is done.
func (g *Gateway) ServeStdio(ctx context.Context, t mcp.Transport) error {
	g.mu.Lock()
	view, _ := g.viewLocked(config.DefaultViewName)
	g.mu.Unlock()
	// The client is a process the user started: it acts as
	// gateway.default_user when it names no user (even with tokens).
	vs, err := g.serverFor(ctx, viewSpec{view: view, local: true})
	if err != nil {
		return err
	}
	tt := g.newTaskTransport(t, vs, "") // tasks, as over HTTP (tasks_conn.go)
	ss, err := vs.srv.Connect(ctx, tt, nil)
	if err != nil {
		return fmt.Errorf("serving stdio: %w", err)
	}
	tt.attach(ss)
	stop := context.AfterFunc(ctx, func() { ss.Close() })
	defer stop()
	err = ss.Wait()
	// A client of protocol 2026-07-28 sends no notifications/initialized,
	// which starts sessionWatch: what its session holds ends here.
	g.sessionEnded(ss)
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// SessionCount returns how many client sessions are connected.
func (g *Gateway) SessionCount() int {
	g.mu.Lock()
	all := append(slices.Collect(mapValues(g.servers)), g.retired...)
	g.mu.Unlock()
	n := 0
	for _, vs := range all {
		n += vs.sessionCount()
	}
	return n
}

// Handler returns the HTTP handler for /mcp, /mcp/{view}, /sse and
// /sse/{view}, with authentication and Origin / Host checks.
func (g *Gateway) Handler() http.Handler {
	return newHTTPHandler(g)
}

func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// sessionWatch counts a stdio session for metrics until it ends (those
// of the HTTP endpoints are counted from the request that opens them:
// sessions.go).
func (g *Gateway) sessionWatch(view string, ss *mcp.ServerSession) {
	if g.metrics != nil {
		g.metrics.SessionOpened(view)
	}
	g.sessions.Add(1)
	go func() {
		defer g.sessions.Done()
		_ = ss.Wait()
		g.sessionEnded(ss)
		g.levels.drop(ss)
		if g.metrics != nil {
			g.metrics.SessionClosed(view)
		}
	}()
}
