package upstream

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// PoolOptions configures a [Pool].
type PoolOptions struct {
	Config *config.Config
	// Only, when non-empty, limits the pool to these servers.
	Only []string
	// Store persists per-server disable state; nil keeps it in memory.
	Store  StateStore
	Logger *slog.Logger
	// Once: one connection attempt per server, no reconnects (CLI commands).
	Once bool
	// OnChange is called after every change of any server's snapshot.
	OnChange func(Snapshot)
	// OnConnect is called with every new connection once it is available
	// through Client. It must not block.
	OnConnect func(*Client)
	// Events returns the notification sinks for a server; nil for none.
	Events func(server string) Events
	// DialOptions adjusts the dial options of a server (tests, in-process
	// servers); nil for none.
	DialOptions func(server string, o *DialOptions)
}

// Pool runs one Supervisor per configured server.
type Pool struct {
	order []string
	sups  map[string]*Supervisor
}

// NewPool creates the supervisors; call Run to connect them.
func NewPool(opts PoolOptions) (*Pool, error) {
	p := &Pool{sups: map[string]*Supervisor{}}
	only := map[string]bool{}
	for _, n := range opts.Only {
		if _, ok := opts.Config.Server(n); !ok {
			return nil, UnknownServer(opts.Config, n)
		}
		only[n] = true
	}
	for _, srv := range opts.Config.Servers {
		if len(only) > 0 && !only[srv.Name] {
			continue
		}
		d := DialOptions{Logger: opts.Logger}
		if opts.Events != nil {
			d.Events = opts.Events(srv.Name)
		}
		if opts.DialOptions != nil {
			opts.DialOptions(srv.Name, &d)
		}
		p.order = append(p.order, srv.Name)
		p.sups[srv.Name] = NewSupervisor(SupervisorOptions{
			Server:    srv,
			Health:    opts.Config.Defaults.Health,
			Store:     opts.Store,
			Logger:    opts.Logger,
			Dial:      d,
			OnChange:  opts.OnChange,
			OnConnect: opts.OnConnect,
			Once:      opts.Once,
		})
	}
	return p, nil
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
		fe.WithSuggestions(close...)
	} else if len(names) > 0 {
		fe.WithSuggestions("configured servers: " + joinComma(names))
	} else {
		fe.WithSuggestions("no servers are configured; add one to switchboard.yaml or use --stdio / --url")
	}
	return fe
}

// Run connects every server in parallel and supervises them until ctx is
// done. In Once mode it returns when ctx is done as well; use WaitSettled to
// learn when every first attempt has concluded.
func (p *Pool) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, name := range p.order {
		s := p.sups[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.Run(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// WaitSettled blocks until every server's first attempt has concluded.
func (p *Pool) WaitSettled(ctx context.Context) error {
	for _, name := range p.order {
		if err := p.sups[name].WaitSettled(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Names returns the servers of the pool in configuration order.
func (p *Pool) Names() []string { return append([]string(nil), p.order...) }

// Supervisor returns the supervisor of a server.
func (p *Pool) Supervisor(name string) (*Supervisor, bool) {
	s, ok := p.sups[name]
	return s, ok
}

// Client returns the live connection of a server, or a typed error that
// says why there is none.
func (p *Pool) Client(name string) (*Client, error) {
	s, ok := p.sups[name]
	if !ok {
		return nil, fault.New(fault.NotFound, "no server named %q", name)
	}
	return s.Client()
}

// Snapshots returns every server's health, in configuration order.
func (p *Pool) Snapshots() []Snapshot {
	out := make([]Snapshot, 0, len(p.order))
	for _, name := range p.order {
		out = append(out, p.sups[name].Snapshot())
	}
	return out
}

// WaitConnected blocks until the named server is connected, or its state
// shows it will not be (disabled, or failed in Once mode), or d elapses.
func (p *Pool) WaitConnected(ctx context.Context, name string, d time.Duration) (*Client, error) {
	s, ok := p.sups[name]
	if !ok {
		return nil, fault.New(fault.NotFound, "no server named %q", name)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		ch := s.Changed()
		if c, err := s.Client(); err == nil {
			return c, nil
		}
		snap := s.Snapshot()
		if !snap.Enabled || (s.opts.Once && snap.State == StateError) {
			return s.Client()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Client()
		}
	}
}

func joinComma(s []string) string { return strings.Join(s, ", ") }
