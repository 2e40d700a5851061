// Package daemon is `switchboard serve`: it assembles the long-running
// process from the other packages — the supervised upstream pool, the
// catalog, the execution engine with its history recorder and metrics, the
// gateway — and serves them: the MCP endpoints, /healthz, /readyz and
// /metrics on the listen address (127.0.0.1:7777 by default), and the
// control API on a unix socket in the state directory, which the CLI uses
// when a daemon runs.
//
// Run blocks until its context is done and then shuts down in order: stop
// accepting, let calls in flight finish up to the shutdown timeout, cancel
// the rest, close client sessions, stop the upstreams, flush the history.
// Reload re-reads the configuration and applies it all-or-nothing: a
// configuration that does not validate, or that the engine cannot take,
// leaves the running one untouched; otherwise only changed servers restart.
package daemon

//lint:file-ignore SA1019 sampling, elicitation, roots and logging are deprecated only from protocol 2026-07-28; clients and servers use them today, and the gateway forwards them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/metrics"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/procs"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// Options configures a Daemon.
type Options struct {
	// Config is the configuration to start with.
	Config *config.Config
	// Load re-reads the configuration for Reload; nil makes Reload fail
	// with a clear error (the embedded default has no file to re-read).
	Load func() (*config.Config, error)
	// ConfigOptions are the options the configuration was loaded with
	// (the environment, the state directory's trust records and secrets,
	// the working directory). The console's edits are checked with them
	// before they are written, a file the console creates on the embedded
	// default is loaded with them, and their WorkDir is where it is
	// created (switchboard.yaml there, the first place serve looks); ""
	// means the process's working directory.
	ConfigOptions config.Options
	// Store is the history and state store; the daemon does not close it.
	Store store.Store
	// StateDir holds the control socket and the stop flag.
	StateDir string
	// Logger receives structured events; nil discards them.
	Logger *slog.Logger
	// Out receives one human-readable line per server state change; nil
	// discards them.
	Out io.Writer
	// DialOptions adjusts a server's dial options (in-process built-in
	// servers); nil for none.
	DialOptions func(server string, o *upstream.DialOptions)
	// Version is reported by the gateway and the control API.
	Version string
	// NoControl skips the control socket (serve --stdio, where another
	// daemon may own it). switchboard reload does not reach such a
	// daemon, so a server that cannot start says what does: a restart of
	// the client that runs it, or SIGHUP to this process.
	NoControl bool
	// AuditStdout receives the audit trail when audit.file is "-"; nil
	// means os.Stdout (serve --stdio passes its standard error: its
	// standard output is the MCP stream).
	AuditStdout io.Writer
	// Tracing is where the daemon puts the trace provider its telemetry:
	// settings ask for, and where its gateway, engine, hooks and agent
	// begin their spans; nil means telemetry.Default. Give each daemon of
	// a process its own (telemetry.NewTracing) to keep their traces apart.
	Tracing *telemetry.Tracing
}

// Daemon is a running `switchboard serve`.
type Daemon struct {
	// conns is the listen address's connection bound, once Run serves it
	// (for tests).
	conns   atomic.Pointer[connLimit]
	opts    Options
	logger  *slog.Logger
	started time.Time

	pool    *upstream.Pool
	cat     *catalog.Catalog
	eng     *toolcall.Engine
	rec     *store.Recorder
	metrics *metrics.Metrics
	gw      *gateway.Gateway
	// bodies bounds the time request bodies on the listen address take.
	bodies bodyTimes
	// writes bounds how long a client may leave a response unread.
	writes  writeTimes
	backend control.Backend
	hooks   *hooks.Engine
	hookEv  *hookEvents
	console atomic.Pointer[web.Console] // set by Run
	oauth   oauthRunner                 // gateway.oauth's authenticator
	// upstreamAuth keeps the sign-ins of upstream servers that require
	// OAuth; nil without a state directory.
	upstreamAuth *oauth.Manager
	// signIns runs the console's sign-ins.
	signIns signIns
	// answers routes what a server asks during a call to the call's
	// answerer (the CLI, the console, the agent), else to the gateway.
	answers answer.Calls
	// audit writes the audit trail; nil when audit: configures none.
	audit *audit.Auditor

	mu  sync.Mutex
	cfg *config.Config
	ln  net.Listener
	// otlpMetrics sends the metrics over OTLP; nil when that is off.
	otlpMetrics *telemetry.MetricsExporter

	reloadMu sync.Mutex
	out      *lineWriter
}

// New builds a daemon; nothing runs until Run.
func New(opts Options) (_ *Daemon, err error) {
	if opts.Config == nil || opts.Store == nil {
		return nil, errors.New("daemon: Config and Store are required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Config
	if err := checkTelemetry(cfg); err != nil {
		return nil, err
	}
	d := &Daemon{opts: opts, logger: logger, cfg: cfg, out: newLineWriter(opts.Out)}
	d.bodies.d = d
	d.writes.d = d
	d.bodies.log = countedWarn{logger: logger, more: "refused more requests whose bodies did not arrive in time"}
	d.writes.log = countedWarn{logger: logger, more: "closed more connections of clients that did not read their responses in time"}
	if d.upstreamAuth, err = newUpstreamAuth(opts.StateDir, logger, d.refreshSecrets); err != nil {
		return nil, err
	}
	poolLogger := logger
	if opts.Out != nil {
		// The state lines say each failure and its cause: see shownHandler.
		poolLogger = slog.New(shownHandler{logger.Handler()})
	}
	stdioPID := 0
	if opts.NoControl {
		stdioPID = os.Getpid()
	}
	d.pool, err = upstream.NewPool(upstream.PoolOptions{
		Config:   cfg,
		Store:    opts.Store,
		Logger:   poolLogger,
		StdioPID: stdioPID,
		OnChange: d.serverChanged,
		OAuth:    d.upstreamAuth,
		OnConnect: func(c *upstream.Client) {
			d.cat.Connected(c.Server().Name)
			d.gw.Connected(c)
			d.gw.Notify()
		},
		OnSessionOpen: func(k upstream.SessionKey, c *upstream.Client) { d.gw.SessionOpened(k, c) },
		OnSessionNotify: func(ctx context.Context, server string, k upstream.SessionKey, method string, params mcp.Params) {
			d.gw.SessionNotify(ctx, server, k, method, params)
		},
		// The pool may ask for these before the gateway exists: they
		// reach it through d when they run.
		Events: func(server string) upstream.Events {
			return upstream.Events{
				ToolsChanged:     func() { d.cat.Invalidate(server, catalog.KindTools) },
				PromptsChanged:   func() { d.cat.Invalidate(server, catalog.KindPrompts) },
				ResourcesChanged: func() { d.cat.Invalidate(server, catalog.KindResources) },
				ResourceUpdated:  func(ctx context.Context, uri string) { d.gw.Events(server).ResourceUpdated(ctx, uri) },
				// To the CLI call it belongs to, when a `switchboard call`
				// made it; else to gateway clients.
				//lint:ignore SA1019 forwarded to gateway clients.
				Log: func(ctx context.Context, p *mcp.LoggingMessageParams) {
					if !d.answers.Log(ctx, server, p) {
						d.gw.Events(server).Log(ctx, p)
					}
				},
				TaskStatus: func(ctx context.Context, p json.RawMessage) {
					d.gw.Events(server).TaskStatus(ctx, p)
					d.consoleTaskStatus(server, p)
				},
				ElicitationComplete: func(ctx context.Context, p *mcp.ElicitationCompleteParams) {
					d.gw.Events(server).ElicitationComplete(ctx, p)
				},
			}
		},
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.MaxResultBytes = int(d.config().Limits.MaxOutputBytes)
			// gateway.fast_path: false sends calls through the SDK on both
			// sides, to tell whether trouble comes from a lean path.
			o.LeanCalls = func() bool { return !d.config().Gateway.DisableFastPath }
			o.Requests = d.answers.Requests(server, upstream.ClientRequests{
				CreateMessage: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return d.gw.Requests(server).CreateMessage(ctx, p)
				},
				CreateMessageWithTools: func(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
					return d.gw.Requests(server).CreateMessageWithTools(ctx, p)
				},
				Elicit: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return d.gw.Requests(server).Elicit(ctx, p)
				},
				//lint:ignore SA1019 roots are forwarded to gateway clients.
				ListRoots: func(ctx context.Context, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
					return d.gw.Requests(server).ListRoots(ctx, p)
				},
				// A per_client session's pings, to its client on a view
				// that is its server (the gateway's ping.go).
				Ping: func(ctx context.Context, p *mcp.PingParams) (json.RawMessage, error) {
					return d.gw.Requests(server).Ping(ctx, p)
				},
			})
			if opts.DialOptions != nil {
				opts.DialOptions(server, o)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	d.cat = catalog.New(catalog.Options{
		Source:   d.pool,
		Servers:  cfg.Servers,
		TTL:      cfg.Defaults.DiscoveryTTL,
		Logger:   logger,
		OnChange: d.catalogChanged,
	})
	d.rec = store.NewRecorder(opts.Store, store.RecorderOptions{Keep: cfg.History.Keep, Logger: logger})
	d.metrics = metrics.New(metrics.Options{
		Stats:     func() toolcall.Stats { return d.eng.Stats() },
		Snapshots: d.pool.Snapshots,
		Next:      d.rec,
		Logger:    logger,

		HistoryWriteFailures: d.rec.WriteFailures,
		HistoryUnavailable:   d.rec.Unavailable,
	})
	d.metrics.SetUsers(configUsers(cfg))
	if d.audit, err = d.newAuditor(cfg); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.closeAuditor() // New failed after opening the file
		}
	}()
	d.eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: d.pool, Catalog: d.cat, Recorder: d.metrics, Logger: logger, Answers: &d.answers, Tracing: opts.Tracing})
	if err != nil {
		return nil, err
	}
	d.gw, err = gateway.New(gateway.Options{
		Config: cfg, Catalog: d.cat, Engine: d.eng, Upstreams: d.pool,
		Logger: logger, Metrics: d.metrics, Version: opts.Version, Audit: d.audit,
	})
	if err != nil {
		return nil, err
	}
	d.oauth.logger = logger
	auth, err := d.oauth.init(cfg.Gateway.OAuth)
	if err != nil {
		return nil, err
	}
	d.gw.SetAuthenticator(auth)
	if err := d.newHooks(); err != nil {
		return nil, err
	}
	return d, nil
}

// config returns the configuration in force.
func (d *Daemon) config() *config.Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// Engine returns the execution engine (hooks and tests call through it).
func (d *Daemon) Engine() *toolcall.Engine { return d.eng }

// Pool returns the supervised upstreams.
func (d *Daemon) Pool() *upstream.Pool { return d.pool }

// Catalog returns the merged catalog.
func (d *Daemon) Catalog() *catalog.Catalog { return d.cat }

// Addr returns the address the HTTP endpoints listen on, once Listen has
// run.
func (d *Daemon) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ln == nil {
		return ""
	}
	return d.ln.Addr().String()
}

// Listen opens the HTTP listener, so that a caller learns the address (or
// why it cannot listen) before Run. Run calls it when it has not been.
func (d *Daemon) Listen() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ln != nil {
		return nil
	}
	gw := d.cfg.Gateway
	if err := gw.CheckExposure(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", gw.Listen)
	if err != nil {
		return fault.Wrap(fault.Config, err, "listening on %s", gw.Listen).
			WithSuggestions("another program (or another switchboard serve) may be using the port; set gateway.listen or pass --listen")
	}
	d.ln = ln
	return nil
}

// Run serves until ctx is done, then shuts down gracefully. It returns
// nil after a clean shutdown.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.Listen(); err != nil {
		return err
	}
	var ctl net.Listener
	if !d.opts.NoControl {
		var err error
		if ctl, err = control.Listen(control.SocketPath(d.opts.StateDir)); err != nil {
			d.ln.Close()
			return err
		}
	}
	d.started = time.Now()
	d.backend = control.Audited(control.NewLocal(control.Components{
		Config:   d.config,
		Pool:     d.pool,
		Catalog:  d.cat,
		Engine:   d.eng,
		Store:    d.opts.Store,
		Flush:    d.rec.Flush,
		StopFlag: control.StopFlagPath(d.opts.StateDir),

		HistoryWriteFailures: d.rec.WriteFailures,
		HistoryUnavailable:   d.rec.Unavailable,
		Reload:               d.Reload,
		Version:              d.opts.Version,
		Address:              d.Addr(),
		StartedAt:            d.started,
	}), d.audit)
	if err := d.newConsole(); err != nil {
		d.ln.Close()
		if ctl != nil {
			ctl.Close()
		}
		return err
	}
	conns := newConnLimit(d.ln, func() int { return d.config().Gateway.MaxConnections }, d.logger)
	d.conns.Store(conns)
	httpSrv := &http.Server{Handler: conns.refuseOver(d.Handler()), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, ErrorLog: slogErrorLog(d.logger),
		MaxHeaderBytes: maxHeaderBytes, ConnContext: connContext,
		ConnState: func(c net.Conn, s http.ConnState) {
			idleConn(c, s)
			conns.connState(c, s)
		}}
	var ctlSrv *http.Server
	if ctl != nil {
		ctlMux := http.NewServeMux()
		ctlMux.Handle("/", control.NewHandler(d.backend, d.logger))
		ctlMux.Handle(hooks.EventPath, d.hooksHandler()) // `hooks fire` (the socket is the owner's alone)
		// Each connection's requests are done by its peer (the audit trail's
		// actor): the process's user and pid, read from the kernel.
		ctlSrv = &http.Server{Handler: ctlMux, ReadHeaderTimeout: 10 * time.Second, ConnContext: control.ConnContext}
	}
	return d.serve(ctx, func(runCtx context.Context, wg *sync.WaitGroup) {
		d.runConsole(runCtx, wg)
		wg.Go(func() { d.bodies.log.run(runCtx) })
		wg.Go(func() { d.writes.log.run(runCtx) })
		wg.Go(func() { conns.log.run(runCtx) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := httpSrv.Serve(conns); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.logger.Error("gateway listener failed", "err", err)
			}
		}()
		if ctlSrv != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := ctlSrv.Serve(ctl); err != nil && !errors.Is(err, http.ErrServerClosed) {
					d.logger.Error("control socket failed", "err", err)
				}
			}()
		}
	}, func(deadline context.Context) {
		// Stop accepting: no new connections, idle ones closed.
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_ = httpSrv.Shutdown(shutdownCtx)
		cancel()
		d.drain(deadline)
		// The calls are done, but their responses may still be on the
		// way out: let the handlers finish (briefly — a client's open
		// stream never ends on its own) before closing what is left.
		flushCtx, cancelFlush := context.WithTimeout(deadline, responseFlush)
		_ = httpSrv.Shutdown(flushCtx)
		cancelFlush()
		_ = httpSrv.Close()
		if ctlSrv != nil {
			_ = ctlSrv.Close()
			_ = os.Remove(control.SocketPath(d.opts.StateDir))
		}
	})
}

// RunStdio serves one MCP client over t (serve --stdio) until it
// disconnects or ctx is done, then shuts down like Run. It reads the
// client's first message only once every enabled server has connected or
// failed its first attempt (bounded by their connect timeouts), so that
// the client's initialize and first tools/list see them.
func (d *Daemon) RunStdio(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return d.serve(ctx, func(runCtx context.Context, wg *sync.WaitGroup) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel() // the client went away: shut down
			d.waitFirstAttempts(runCtx)
			if err := d.gw.ServeStdio(runCtx, t); err != nil {
				d.logger.Error("stdio session failed", "err", err)
			}
		}()
	}, d.drain)
}

// serve runs the components, starts the front ends, and on ctx done calls
// stop with a deadline for calls in flight, then stops everything else.
func (d *Daemon) serve(ctx context.Context, start func(context.Context, *sync.WaitGroup), stop func(deadline context.Context)) error {
	if err := d.startTelemetry(d.config()); err != nil {
		return err
	}
	defer func() {
		d.shutdownTelemetry(d.opts.Tracing.Use(nil))      // the last spans are sent
		d.shutdownMetricsExport(d.swapMetricsExport(nil)) // and the last metrics
	}()
	runCtx, cancelRun := context.WithCancel(context.Background())
	var core, front sync.WaitGroup
	core.Add(4)
	recCtx, cancelRec := context.WithCancel(context.Background())
	var recDone sync.WaitGroup
	recDone.Add(1)
	auditCtx, cancelAudit := context.WithCancel(context.Background())
	var auditDone sync.WaitGroup
	auditDone.Add(1)
	go func() { defer auditDone.Done(); d.runAuditor(auditCtx) }()
	go func() { defer recDone.Done(); _ = d.rec.Run(recCtx) }()
	go func() { defer core.Done(); _ = d.pool.Run(runCtx) }()
	go func() { defer core.Done(); _ = d.cat.Run(runCtx) }()
	go func() { defer core.Done(); control.WatchStopFlag(runCtx, control.StopFlagPath(d.opts.StateDir), d.eng) }()
	go func() { defer core.Done(); _ = d.hooks.Run(runCtx) }()
	d.oauth.start(runCtx)
	gwCtx, cancelGW := context.WithCancel(context.Background())
	front.Add(1)
	go func() { defer front.Done(); _ = d.gw.Run(gwCtx) }()
	start(runCtx, &front)

	<-ctx.Done()
	d.logger.Info("shutting down", "in_flight", d.eng.Stats().InFlight)
	deadline, cancel := context.WithTimeout(context.Background(), d.config().Gateway.ShutdownTimeout)
	stop(deadline)
	cancel()
	d.gw.StopRequests() // before the upstream sessions close: their servers are told
	cancelGW()          // closes every client session
	cancelRun()
	front.Wait()
	core.Wait()
	d.oauth.stopAll()
	cancelRec() // the recorder flushes what it holds as it stops
	recDone.Wait()
	cancelAudit() // last: everything that records into it has stopped
	auditDone.Wait()
	return nil
}

// responseFlush bounds how long shutdown waits, once the calls in flight
// have finished, for their responses to be written.
const responseFlush = time.Second

// drain waits for calls in flight to finish until deadline, then cancels
// the rest (they are told the daemon is shutting down).
func (d *Daemon) drain(deadline context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for d.eng.Stats().InFlight > 0 {
		select {
		case <-deadline.Done():
			n := d.eng.Shutdown()
			d.logger.Warn("shutdown deadline reached; cancelled the calls still running", "cancelled", n)
			return
		case <-t.C:
		}
	}
	d.eng.Shutdown() // nothing new starts while the rest shuts down
}

// serverChanged prints a server's state changes and brings the views in
// step with its availability.
func (d *Daemon) serverChanged(s upstream.Snapshot) {
	if line, ok := stateLine(s); ok {
		d.out.printOnce(s.Server, line)
	}
	if s.State == upstream.StateConnected {
		d.refreshSecrets() // a sign-in stored by another process
	}
	d.emitServerEvent(s)
	d.consoleServerChanged(s)
	if d.gw != nil {
		d.gw.Notify()
	}
}

// stateLine is the line serve prints for a server's snapshot, and whether
// to print one: one line per failed attempt, which says its cause and when
// the next attempt is (or that the server was auto-disabled). A failure
// is printed once its retry is set (the snapshot just before, without
// one, is skipped), and the retry's own "connecting" is not printed:
// the line before said when it would come.
func stateLine(s upstream.Snapshot) (string, bool) {
	line := string(s.State)
	switch {
	case !s.Enabled && s.AutoDisabled:
		line = "auto-disabled"
	case !s.Enabled:
		line = "disabled"
	case s.State == upstream.StateError && !s.Retrying:
		return "", false // its retry (or auto-disable) follows
	case s.State == upstream.StateConnecting && s.LastError != "":
		return "", false // a retry, announced by the failure's line
	}
	switch {
	case s.State == upstream.StateCannotStart && s.Enabled:
		// Nothing will change until the user acts: the whole cause, with
		// the place in the file, and what to do.
		line += ": " + s.LastError
		if len(s.Suggestions) > 0 {
			line += "; " + strings.Join(s.Suggestions, "; ")
		}
	case s.LastError != "" && s.State != upstream.StateConnected:
		line += ": " + firstLine(s.LastError, 120)
	}
	if s.Retrying {
		line += fmt.Sprintf(" (retry %d at %s)", s.Attempt, s.NextRetryAt.Format("15:04:05"))
	}
	return line, true
}

// catalogChanged prints a server's tool count when it changes.
func (d *Daemon) catalogChanged(server string, kind catalog.Kind) {
	d.emitCatalogEvent(server, kind)
	d.consoleCatalogChanged(server, kind)
	if kind != catalog.KindTools {
		return
	}
	d.out.printOnce(server+"\x00tools", fmt.Sprintf("%d tools", len(d.cat.ServerTools(server))))
}

// DefaultGCPercent is the garbage collector target serve runs with (Go's
// default is 100). A gateway keeps a small live heap but produces a lot of
// short-lived garbage per call — the MCP SDK allocates a fresh 32 KiB
// decoder for every message it reads — so collecting a quarter as often
// saves much CPU for a few MiB of memory under load (docs/benchmarks.md).
const DefaultGCPercent = 400

// TuneGC applies DefaultGCPercent unless GOGC is set in the environment,
// which always wins.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
}

// GovernProcs keeps GOMAXPROCS in step with the process's CPU use (package
// procs) until stop is called or ctx is done, unless GOMAXPROCS is set in
// the environment, which always wins. stop waits for the governor to end
// and restores the runtime's GOMAXPROCS.
func GovernProcs(ctx context.Context, log *slog.Logger) (stop func()) {
	if !procs.Enabled() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		procs.Run(ctx, procs.Options{Logger: log})
	}()
	return func() {
		cancel()
		<-done
	}
}

// configUsers lists the users the configuration names — gateway.tokens'
// users and gateway.default_user — the only ones the per-user metrics
// count under their own names.
func configUsers(cfg *config.Config) []string {
	users := []string{cfg.Gateway.DefaultUser}
	for _, t := range cfg.Gateway.Tokens {
		users = append(users, t.User)
	}
	return users
}
