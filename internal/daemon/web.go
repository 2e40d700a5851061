package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
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
		Audit:   d.audit,
		OAuth:   d.gw.CheckOAuth,
		// Snapshots: the page never waits on a ping to a hung server.
		Snapshots: d.pool.Snapshots,
		Hooks:     webHookSource{eng: d.hooks, st: d.opts.Store},
		// The console's own MCP sessions are sessions of the gateway's
		// default view, as `serve --stdio` serves one.
		Connect: d.gw.ServeStdio,
		Editor:  &fileEditor{d: d},
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
		SignIn:   d.consoleSignIn(),
		// With gateway.oauth.console, people sign in to the console at
		// the gateway's authorization server, their tokens checked by
		// the gateway's own authenticator.
		Authenticator: d.gw.Authenticator,
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
	d.signIns.start(ctx, wg)
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

// consoleTaskStatus passes a server's notifications/tasks/status to the
// console's open Tasks pages.
func (d *Daemon) consoleTaskStatus(server string, params json.RawMessage) {
	if c := d.console.Load(); c != nil {
		c.TaskStatus(server, params)
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
			Action: r.Action, Status: r.Status, Error: r.Error, StartedAt: r.StartedAt, Duration: r.Duration, CallID: r.CallID,
			Output: string(r.Output),
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
			Error: r.Error, Duration: r.Duration, Output: r.Output, Params: r.Params, CallID: r.CallID})
	}
	return out, nil
}

// sessionStore returns the store's console sessions, when it keeps them
// (both SQLite and PostgreSQL do; a test's fake store may not).
func sessionStore(st store.Store) store.SessionStore {
	ss, _ := st.(store.SessionStore)
	return ss
}

// fileEditor edits the daemon's configuration file for the console:
// changes are validated as `config validate` validates them, written
// atomically, and applied with Reload; a reload that refuses the new file
// puts the old one back.
type fileEditor struct {
	d  *Daemon
	mu sync.Mutex // one edit at a time
}

var _ web.ConfigEditor = (*fileEditor)(nil)

// Path implements web.ConfigEditor: the file the configuration came from,
// or, on the embedded default, switchboard.yaml in the daemon's working
// directory (ConfigOptions.WorkDir, the first place `serve` looks), never
// the process's unless that is the daemon's.
func (e *fileEditor) Path() (string, bool) {
	if src := e.d.config().Source; src != "" {
		return e.abs(src), true
	}
	p := e.abs(config.FileName)
	_, err := os.Stat(p)
	return p, err == nil
}

// abs makes a relative path absolute against the daemon's working
// directory.
func (e *fileEditor) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.d.opts.ConfigOptions.WorkDir, p)
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Server implements web.ConfigEditor.
func (e *fileEditor) Server(name string) (web.ServerEntry, error) {
	path, exists := e.Path()
	if !exists {
		return web.ServerEntry{}, fault.New(fault.NotFound, "there is no configuration file yet, so no server %q to edit", name).
			WithSuggestions("add a server: the console creates " + path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return web.ServerEntry{}, fault.Wrap(fault.Config, err, "reading %s", path)
	}
	return config.ReadServerEntry(data, name)
}

// Save implements web.ConfigEditor.
func (e *fileEditor) Save(ctx context.Context, original string, s web.ServerEntry) (control.ReloadReport, error) {
	return e.edit(ctx, func(data []byte) ([]byte, error) { return config.SetServer(data, original, s) })
}

// Remove implements web.ConfigEditor.
func (e *fileEditor) Remove(ctx context.Context, name string) (control.ReloadReport, error) {
	return e.edit(ctx, func(data []byte) ([]byte, error) { return config.RemoveServer(data, name) })
}

// edit changes the file with change, validates the result, writes it and
// reloads; it puts the old file back when the reload refuses the new one.
func (e *fileEditor) edit(ctx context.Context, change func([]byte) ([]byte, error)) (control.ReloadReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	path, exists := e.Path()
	var old []byte
	mode := os.FileMode(0o600)
	if exists {
		fi, err := os.Stat(path)
		if err != nil {
			return control.ReloadReport{}, fault.Wrap(fault.Config, err, "reading %s", path)
		}
		mode = fi.Mode().Perm()
		if old, err = os.ReadFile(path); err != nil {
			return control.ReloadReport{}, fault.Wrap(fault.Config, err, "reading %s", path)
		}
	}
	data, err := change(old)
	if err != nil {
		return control.ReloadReport{}, err
	}
	// The same checks as `switchboard config validate`, before anything
	// is written.
	if _, err := config.Parse(path, data, e.d.opts.ConfigOptions); err != nil {
		return control.ReloadReport{}, err
	}
	// A file the person trusted (its hooks run) stays trusted through the
	// console's edit, which touches only server entries; an untrusted one
	// stays untrusted: the console grants no trust.
	trusted := false
	if exists {
		st, err := config.CheckTrust(e.d.opts.StateDir, path)
		trusted = err == nil && st == config.Trusted
	}
	if err := e.write(path, data, mode, trusted); err != nil {
		return control.ReloadReport{}, err
	}
	if !exists {
		// The embedded default had nothing to reload; from now on the
		// daemon reloads the new file.
		e.d.reloadMu.Lock()
		if e.d.opts.Load == nil {
			opts := e.d.opts.ConfigOptions
			e.d.opts.Load = func() (*config.Config, error) { return config.Load(path, opts) }
		}
		e.d.reloadMu.Unlock()
	}
	rep, err := e.d.Reload(ctx)
	if err != nil {
		// All or nothing: the running configuration did not change, so
		// the file goes back to what it was.
		var restore error
		if exists {
			restore = e.write(path, old, mode, trusted)
		} else {
			restore = os.Remove(path)
		}
		if restore != nil {
			e.d.logger.Error("putting the configuration file back after a refused reload", "path", path, "err", restore)
		}
		return control.ReloadReport{}, err
	}
	return rep, nil
}

// write writes the file and, when it was trusted, trusts what it now
// holds.
func (e *fileEditor) write(path string, data []byte, mode os.FileMode, trusted bool) error {
	if err := writeFileAtomic(path, data, mode); err != nil {
		return err
	}
	if trusted {
		if _, err := config.Trust(e.d.opts.StateDir, path); err != nil {
			return fmt.Errorf("keeping %s trusted after the edit: %w", path, err)
		}
	}
	return nil
}

// writeFileAtomic replaces path with data through a temporary file in the
// same folder, so that a reader never sees half a file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".switchboard-*.yaml")
	if err != nil {
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	if err := tmp.Close(); err != nil {
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fault.Wrap(fault.Config, err, "writing %s", path)
	}
	return nil
}
