package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// PoolOptions configures a [Pool].
type PoolOptions struct {
	Config *config.Config
	// Only, when non-empty, limits the pool to these servers.
	Only []string
	// Store persists per-server disable state; nil keeps it in memory
	// (one store for the pool, so that it survives Apply).
	Store  StateStore
	Logger *slog.Logger
	// Once: one connection attempt per server, no reconnects (CLI commands).
	Once bool
	// StdioPID is the process id of serve --stdio when the pool is its
	// daemon's, which has no control socket; 0 otherwise (see
	// SupervisorOptions.StdioPID).
	StdioPID int
	// OnChange is called after every change of any server's snapshot.
	OnChange func(Snapshot)
	// OnConnect is called with every new connection once it is available
	// through Client. It must not block.
	OnConnect func(*Client)
	// OnSessionOpen is called with every owned (per-client or per-user)
	// session once it is connected, before any request uses it; nil for
	// none. It may make requests of it, briefly.
	OnSessionOpen func(SessionKey, *Client)
	// OnSessionNotify is called with a notification an owned session's
	// owner alone is to get: the session's own
	// notifications/tools|prompts|resources/list_changed (params nil), the
	// three of them when the session died (its server exited or stopped
	// answering pings) and the next request opens a new one, and its
	// notifications/resources/updated (*mcp.ResourceUpdatedNotificationParams)
	// for what its owner subscribed to on it. Its context is the
	// request's whose event stream the server sent the notification on
	// (streamable HTTP; see Events.Log), or says it came on the
	// standalone stream (SentOutsideRequests). It must not block.
	OnSessionNotify func(ctx context.Context, server string, key SessionKey, method string, params mcp.Params)
	// Events returns the notification sinks for a server; nil for none.
	Events func(server string) Events
	// DialOptions adjusts the dial options of a server (tests, in-process
	// servers); nil for none. It is called whenever a supervisor is made,
	// at NewPool and for servers that Apply adds or changes.
	DialOptions func(server string, o *DialOptions)
	// OAuth keeps the sign-ins of servers that require OAuth 2.1; nil
	// leaves every server's requests as configured.
	OAuth *oauth.Manager
}

// Pool runs one Supervisor per configured server. Its set of servers can
// be replaced while it runs (see [Pool.Apply]); every method is safe for
// concurrent use.
type Pool struct {
	opts PoolOptions
	only map[string]bool

	applyMu sync.Mutex // serialises Apply

	mu    sync.RWMutex
	cfg   *config.Config
	order []string
	sups  map[string]*Supervisor
	// Run state: runCtx is set while Run runs; after Run has started to
	// return, stopped is set and no supervisor is started any more.
	runCtx  context.Context
	started bool
	stopped bool
	running map[*Supervisor]*runningSupervisor
	// closing is, by name, the supervisor a reload retired that has not
	// yet returned (its session drains or closes).
	closing map[string]*runningSupervisor
	wg      sync.WaitGroup
	applied chan struct{} // closed and replaced whenever Apply swaps the set
}

// runningSupervisor is a supervisor goroutine started by Run or Apply.
type runningSupervisor struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the supervisor's Run has returned
}

// Changes says how Apply changed the pool's servers. Each list holds
// server names in the new configuration's order, except Removed, which is
// in the old order.
type Changes struct {
	Added, Removed, Changed, Unchanged []string
}

// NewPool creates the supervisors; call Run to connect them.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Store == nil {
		opts.Store = NewMemoryStore()
	}
	p := &Pool{opts: opts, only: map[string]bool{}, sups: map[string]*Supervisor{},
		running: map[*Supervisor]*runningSupervisor{}, closing: map[string]*runningSupervisor{}, applied: make(chan struct{})}
	for _, n := range opts.Only {
		if _, ok := opts.Config.Server(n); !ok {
			return nil, UnknownServer(opts.Config, n)
		}
		p.only[n] = true
	}
	p.cfg = opts.Config
	for _, srv := range p.selected(opts.Config) {
		p.order = append(p.order, srv.Name)
		p.sups[srv.Name] = p.newSupervisor(opts.Config, srv)
	}
	return p, nil
}

// selected returns the servers of cfg that the pool covers.
func (p *Pool) selected(cfg *config.Config) []config.Server {
	var out []config.Server
	for _, srv := range cfg.Servers {
		if len(p.only) > 0 && !p.only[srv.Name] {
			continue
		}
		out = append(out, srv)
	}
	return out
}

func (p *Pool) newSupervisor(cfg *config.Config, srv config.Server) *Supervisor {
	d := DialOptions{Logger: p.opts.Logger}
	if p.opts.Events != nil {
		d.Events = p.opts.Events(srv.Name)
	}
	if p.opts.DialOptions != nil {
		p.opts.DialOptions(srv.Name, &d)
	}
	if d.Auth == nil {
		d.Auth = NewAuth(p.opts.OAuth, srv)
	}
	return NewSupervisor(SupervisorOptions{
		Server:          srv,
		Health:          cfg.Defaults.Health,
		Store:           p.opts.Store,
		Logger:          p.opts.Logger,
		Dial:            d,
		OnChange:        p.opts.OnChange,
		OnConnect:       p.opts.OnConnect,
		OnSessionOpen:   p.opts.OnSessionOpen,
		OnSessionNotify: p.opts.OnSessionNotify,
		Once:            p.opts.Once,
		StdioPID:        p.opts.StdioPID,
	})
}

// UnknownServer is the not-found error for a server name, with the closest
// configured names as suggestions.
func UnknownServer(cfg *config.Config, name string) error {
	names := make([]string, 0, len(cfg.Servers))
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	fe := fault.New(fault.NotFound, "no server named %q is configured", name).WithDetail("server", name)
	if close := suggest.Closest(name, names, 3); len(close) > 0 {
		fe.Message += fmt.Sprintf("; did you mean %q?", close[0])
		fe.WithSuggestions(close...)
	} else if len(names) > 0 {
		fe.WithSuggestions("configured servers: " + joinComma(names))
	} else {
		fe.WithSuggestions("no servers are configured; add one to switchboard.yaml or use --stdio / --url")
	}
	return fe
}

// Run connects every server in parallel and supervises them until ctx is
// done, including servers that Apply adds while it runs. It returns when
// ctx is done and every supervisor has returned (closed its connection).
// In Once mode use WaitSettled to learn when every first attempt has
// concluded. Run may be called once.
func (p *Pool) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return errors.New("upstream: Pool.Run called twice")
	}
	p.started, p.runCtx = true, ctx
	for _, name := range p.order {
		p.startLocked(p.sups[name])
	}
	p.mu.Unlock()

	<-ctx.Done()
	p.mu.Lock()
	p.stopped, p.runCtx = true, nil
	p.mu.Unlock()
	// Every wg.Add happened under mu before stopped was set.
	p.wg.Wait()
	return nil
}

// startLocked runs s under Run's context; p.mu must be held for writing.
func (p *Pool) startLocked(s *Supervisor) {
	if p.runCtx == nil || p.stopped {
		return
	}
	ctx, cancel := context.WithCancel(p.runCtx)
	rs := &runningSupervisor{cancel: cancel, done: make(chan struct{})}
	p.running[s] = rs
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(rs.done)
		defer cancel()
		_ = s.Run(ctx)
	}()
}

// Apply makes the pool serve cfg's servers (limited to PoolOptions.Only, if
// set): removed servers are stopped (connection closed, child process
// reaped), added servers start, changed servers are stopped and started
// again with the new settings, and unchanged servers keep their live
// connection. A server is changed when its config.Server differs in
// anything but Pos, or when the health settings (defaults.health) differ:
// a supervisor keeps the health settings it was made with, so a change
// there restarts every server. Disable state lives in the StateStore and
// survives a restart.
//
// A removed or changed server's old connection takes no new requests;
// the requests in flight on it may finish for cfg's
// gateway.shutdown_timeout, then they are cancelled with a cause that
// says the reload removed or changed the server, and the connection is
// closed (see [Client.Retire]). A changed server's new connection is
// dialled once the old one is closed (a Docker container name can only
// be used once). Apply returns when every old connection is closed or
// draining its requests in flight in the background, or with ctx's error
// if ctx ends first; the old supervisors still stop, and Run waits for
// them (the drain ends when Run's context does). Before Run, Apply only
// replaces the supervisors. cfg must have been validated
// (config.Load does); Apply itself does not fail otherwise.
func (p *Pool) Apply(ctx context.Context, cfg *config.Config) (Changes, error) {
	if cfg == nil {
		return Changes{}, fault.New(fault.Config, "no configuration to apply")
	}
	p.applyMu.Lock()
	defer p.applyMu.Unlock()

	p.mu.RLock()
	old, oldOrder := p.cfg, p.order
	oldSups := p.sups
	p.mu.RUnlock()

	healthChanged := !reflect.DeepEqual(old.Defaults.Health, cfg.Defaults.Health)
	var ch Changes
	newSups := make(map[string]*Supervisor, len(cfg.Servers))
	var newOrder []string
	var fresh []*Supervisor // supervisors to start
	for _, srv := range p.selected(cfg) {
		newOrder = append(newOrder, srv.Name)
		s, ok := oldSups[srv.Name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, srv.Name)
		case healthChanged || !sameServer(s.Server(), srv):
			ch.Changed = append(ch.Changed, srv.Name)
		default:
			ch.Unchanged = append(ch.Unchanged, srv.Name)
			newSups[srv.Name] = s
			continue
		}
		s = p.newSupervisor(cfg, srv)
		newSups[srv.Name] = s
		fresh = append(fresh, s)
	}
	var stale []*Supervisor // supervisors to stop
	for _, name := range oldOrder {
		if _, ok := newSups[name]; !ok {
			ch.Removed = append(ch.Removed, name)
		}
		if newSups[name] != oldSups[name] {
			stale = append(stale, oldSups[name])
		}
	}

	// Swap: from here Client and Snapshots see the new set. The old
	// supervisors retire their sessions (retire.go): Apply waits until
	// each has closed its session or begun to drain the requests in
	// flight on it, which may run on for gateway.shutdown_timeout.
	removed := make(map[string]bool, len(ch.Removed))
	for _, n := range ch.Removed {
		removed[n] = true
	}
	bound := cfg.Gateway.ShutdownTimeout
	p.mu.Lock()
	p.cfg, p.order, p.sups = cfg, newOrder, newSups
	close(p.applied)
	p.applied = make(chan struct{})
	type retired struct {
		name string
		rs   *runningSupervisor
		r    *retirement
	}
	var waits []retired
	for _, s := range stale {
		rs, ok := p.running[s]
		if !ok {
			continue
		}
		delete(p.running, s)
		if p.runCtx == nil || p.stopped {
			// Run is returning: it has cancelled s and waits for it.
			waits = append(waits, retired{name: s.Name(), rs: rs, r: &retirement{draining: make(chan struct{})}})
			continue
		}
		name := s.Name()
		bctx, cancel := context.WithTimeoutCause(p.runCtx, bound, reloadCause(name, removed[name], bound))
		r := &retirement{bound: bctx, stopping: stoppingCause(name, removed[name]), draining: make(chan struct{})}
		s.retire(r)
		rs.cancel()
		waits = append(waits, retired{name: name, rs: rs, r: r})
		p.closing[name] = rs
		// Run waits for this goroutine too: it ends with s.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			<-rs.done
			cancel()
			p.mu.Lock()
			if p.closing[name] == rs {
				delete(p.closing, name)
			}
			p.mu.Unlock()
		}()
	}
	p.mu.Unlock()

	p.logger().Info("applying configuration", "added", len(ch.Added), "removed", len(ch.Removed),
		"changed", len(ch.Changed), "unchanged", len(ch.Unchanged))

	var err error
	for _, w := range waits {
		select {
		case <-w.rs.done:
		case <-w.r.draining:
			p.logger().Info("the old session of a removed or changed server finishes its requests in flight in the background",
				"server", w.name, "for_at_most", bound)
		case <-ctx.Done():
			err = fmt.Errorf("waiting for replaced servers to close: %w", ctx.Err())
		}
		if err != nil {
			break
		}
	}

	p.mu.Lock()
	for _, s := range fresh {
		// A later Apply may already have replaced s; start only current ones.
		if p.sups[s.Name()] == s {
			p.startAfterLocked(s)
		}
	}
	p.mu.Unlock()
	return ch, err
}

// startAfterLocked starts s (startLocked) once the old session of its
// name, if one is still closing after a reload, has closed: a Docker
// container name can only be used once, and two processes of one server
// may fight over a port or a lock file. A later Apply may replace s
// meanwhile; then it is not started. p.mu must be held for writing.
func (p *Pool) startAfterLocked(s *Supervisor) {
	old := p.closing[s.Name()]
	if old != nil {
		select {
		case <-old.done:
			old = nil
		default:
		}
	}
	if old == nil || p.runCtx == nil || p.stopped {
		p.startLocked(s)
		return
	}
	p.wg.Add(1) // Run waits for it: it ends when old has
	go func() {
		defer p.wg.Done()
		<-old.done
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.sups[s.Name()] == s {
			p.startAfterLocked(s) // a newer old one may be closing by now
		}
	}()
}

// reloadCause is the cause of a request cancelled on the session of a
// server that a reload removed or changed, once bound has passed.
func reloadCause(name string, removed bool, bound time.Duration) error {
	return fault.New(fault.Cancelled, "the call was cancelled: a reload %s server %q, and the call did not finish within gateway.shutdown_timeout (%s)",
		removedOrChanged(removed), name, bound).
		WithDetail("server", name).
		WithSuggestions(callAgain(name, removed), "gateway.shutdown_timeout sets how long a reload lets the calls of a server it removes or changes finish")
}

// stoppingCause is the cause of a request cancelled on such a session
// because the pool stopped before bound had passed.
func stoppingCause(name string, removed bool) error {
	return fault.New(fault.Cancelled, "the call was cancelled: a reload %s server %q, and switchboard stopped before the call finished",
		removedOrChanged(removed), name).
		WithDetail("server", name).
		WithSuggestions(callAgain(name, removed))
}

func removedOrChanged(removed bool) string {
	if removed {
		return "removed"
	}
	return "changed"
}

func callAgain(name string, removed bool) string {
	if removed {
		return fmt.Sprintf("server %q is no longer configured; add it back to call its tools", name)
	}
	return fmt.Sprintf("call again: server %q runs with its new settings", name)
}

// sameServer reports whether two resolved servers are the same but for
// where they were defined.
func sameServer(a, b config.Server) bool {
	a.Pos, b.Pos = config.Pos{}, config.Pos{}
	return reflect.DeepEqual(a, b)
}

func (p *Pool) logger() *slog.Logger {
	if p.opts.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.opts.Logger
}

// Config returns the configuration currently applied.
func (p *Pool) Config() *config.Config {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cfg
}

// WaitSettled blocks until every server's first attempt has concluded.
func (p *Pool) WaitSettled(ctx context.Context) error {
	p.mu.RLock()
	sups := make([]*Supervisor, 0, len(p.order))
	for _, name := range p.order {
		sups = append(sups, p.sups[name])
	}
	p.mu.RUnlock()
	for _, s := range sups {
		if err := s.WaitSettled(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Names returns the servers of the pool in configuration order.
func (p *Pool) Names() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]string(nil), p.order...)
}

// Supervisor returns the supervisor of a server.
func (p *Pool) Supervisor(name string) (*Supervisor, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s, ok := p.sups[name]
	return s, ok
}

// Client returns the live connection of a server, or a typed error that
// says why there is none.
func (p *Pool) Client(name string) (*Client, error) {
	s, ok := p.Supervisor(name)
	if !ok {
		return nil, fault.New(fault.NotFound, "no server named %q", name).WithDetail("server", name)
	}
	return s.Client()
}

// Snapshots returns every server's health, in configuration order.
func (p *Pool) Snapshots() []Snapshot {
	p.mu.RLock()
	sups := make([]*Supervisor, 0, len(p.order))
	for _, name := range p.order {
		sups = append(sups, p.sups[name])
	}
	p.mu.RUnlock()
	out := make([]Snapshot, 0, len(sups))
	for _, s := range sups {
		out = append(out, s.Snapshot())
	}
	return out
}

// WaitConnected blocks until the named server is connected, or its state
// shows it will not be (disabled, cannot start, or failed in Once mode),
// or d elapses.
// If Apply replaces the server meanwhile, it waits for the new one.
func (p *Pool) WaitConnected(ctx context.Context, name string, d time.Duration) (*Client, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		p.mu.RLock()
		s, ok := p.sups[name]
		applied := p.applied
		p.mu.RUnlock()
		if !ok {
			return nil, fault.New(fault.NotFound, "no server named %q", name).WithDetail("server", name)
		}
		ch := s.Changed()
		if c, err := s.Client(); err == nil {
			return c, nil
		}
		snap := s.Snapshot()
		if !snap.Enabled || snap.State == StateCannotStart || (s.opts.Once && snap.State == StateError) {
			return s.Client()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Client()
		case <-applied:
			// Apply may have replaced the supervisor: look the name up again.
		}
	}
}

func joinComma(s []string) string { return strings.Join(s, ", ") }
