package daemon

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// newConsole builds the web console over the daemon's control backend;
// Run calls it once the backend exists.
func (d *Daemon) newConsole() error {
	c, err := web.New(web.Options{
		Backend: d.backend,
		Catalog: d.cat,
		Config:  d.config,
		// Snapshots: the page never waits on a ping to a hung server.
		Snapshots: d.pool.Snapshots,
		Hooks:     webHookSource{eng: d.hooks, st: d.opts.Store},
		// The console's own MCP sessions are sessions of the gateway's
		// default view, as `serve --stdio` serves one.
		Connect: d.gw.ServeStdio,
		Capabilities: func(server string) *mcp.ServerCapabilities {
			c, err := d.pool.Client(server)
			if err != nil {
				return nil
			}
			return c.Capabilities()
		},
		// Sessions in the store survive a restart and are shared by
		// every replica on the same database.
		Sessions: sessionStore(d.opts.Store),
		Logger:   d.logger.With("component", "web"),
		Version:  d.opts.Version,
	})
	if err != nil {
		return err
	}
	d.console.Store(c)
	return nil
}

// runConsole runs the console beside the other front ends until ctx is
// done.
func (d *Daemon) runConsole(ctx context.Context, wg *sync.WaitGroup) {
	c := d.console.Load()
	if c == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = c.Run(ctx)
	}()
}

// mountConsole serves the console at "/" (exactly) and under /ui/, behind
// the gateway's Host and Origin checks; the console does its own login
// and CSRF checks. Every other path (/mcp, /sse, the probes, /metrics,
// /hooks/) stays with its owner.
func (d *Daemon) mountConsole(mux *http.ServeMux) {
	c := d.console.Load()
	if c == nil {
		return
	}
	h := d.gw.Guard(c.Handler(), false)
	mux.Handle("/{$}", h)
	mux.Handle(web.Prefix, h)
}

// consoleServerChanged passes a server's new state to open console pages.
func (d *Daemon) consoleServerChanged(s upstream.Snapshot) {
	if c := d.console.Load(); c != nil {
		c.ServerChanged(s)
	}
}

// consoleCatalogChanged passes a list change to open console pages.
func (d *Daemon) consoleCatalogChanged(server string, kind catalog.Kind) {
	if c := d.console.Load(); c != nil {
		c.CatalogChanged(server, kind)
	}
}

// webHookSource shows the hooks engine and its run log on the console's
// Hooks page.
type webHookSource struct {
	eng *hooks.Engine
	st  store.Store
}

var _ web.HookSource = webHookSource{}

// Hooks implements web.HookSource.
func (h webHookSource) Hooks(context.Context) ([]web.HookInfo, error) {
	list := h.eng.List()
	out := make([]web.HookInfo, 0, len(list))
	for _, hi := range list {
		out = append(out, web.HookInfo{
			Name: hi.Name, On: hi.On, Priority: hi.Priority, Enabled: hi.Enabled, OnFailure: hi.OnFailure,
			Source: hi.Source, Actions: hi.Actions, Trust: string(hi.Trust), Valid: hi.Valid, Problems: hi.Problems,
		})
	}
	return out, nil
}

// Runs implements web.HookSource.
func (h webHookSource) Runs(ctx context.Context, f web.HookRunFilter) ([]web.HookRun, error) {
	runs, err := h.st.HookRuns(ctx, store.HookRunFilter{Event: f.Event, Hook: f.Hook, Status: f.Status, Failed: f.Failed, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]web.HookRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, web.HookRun{
			ID: r.ID, EventID: r.EventID, ChainID: r.ChainID, Depth: r.Depth, Event: r.Event, Hook: r.Hook,
			Action: r.Action, Status: r.Status, Error: r.Error, StartedAt: r.StartedAt, Duration: r.Duration,
		})
	}
	return out, nil
}

// Fire implements web.HookSource: a dry run resolves without running.
func (h webHookSource) Fire(ctx context.Context, event string, fields map[string]any, dryRun bool) (web.FireReport, error) {
	fire := h.eng.Fire
	if dryRun {
		fire = h.eng.DryRun
	}
	rep, err := fire(ctx, event, fields)
	if err != nil {
		return web.FireReport{}, err
	}
	out := web.FireReport{EventID: rep.EventID, Event: rep.Event, DryRun: dryRun, Blocked: rep.Blocked,
		Reason: rep.Reason, BlockedBy: rep.BlockedBy, Failed: rep.Failed}
	for _, r := range rep.Runs {
		out.Runs = append(out.Runs, web.FiredRun{Hook: r.Hook, Action: r.Action, Status: string(r.Status),
			Error: r.Error, Duration: r.Duration, Output: r.Output, Params: r.Params})
	}
	return out, nil
}

// sessionStore returns the store's console sessions, when it keeps them
// (both SQLite and PostgreSQL do; a test's fake store may not).
func sessionStore(st store.Store) store.SessionStore {
	ss, _ := st.(store.SessionStore)
	return ss
}
