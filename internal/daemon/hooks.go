package daemon

import (
	"context"
	"net/http"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/hooks"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// This file wires the hooks engine into the daemon: every call through the
// engine fires tool.before / tool.after / tool.failed, server state
// changes fire server.*, catalog changes fire catalog.changed, and
// POST /hooks/events/{name} fires any event (on the gateway address behind
// its token check, and on the control socket for `switchboard hooks fire`).

// serverPhase is what the daemon last told hooks about a server.
type serverPhase uint8

const (
	phaseUnknown serverPhase = iota
	phaseAvailable
	phaseUnavailable
	phaseDisabled
)

// hookEvents remembers each server's last announced phase, so that hooks
// see transitions, not every snapshot.
type hookEvents struct {
	mu    sync.Mutex
	phase map[string]serverPhase
}

// newHooks builds the hooks engine and installs it on the execution engine.
// It exists even with no hooks configured, so that a reload can add some;
// with none, a call pays a few nanoseconds for it.
func (d *Daemon) newHooks() error {
	eng, err := hooks.New(hooks.Options{
		Config:   d.cfg,
		Calls:    d.eng,
		Catalog:  d.cat,
		Store:    d.opts.Store,
		Agent:    d.runAgent,
		StateDir: d.opts.StateDir,
		Logger:   d.logger,
		Audit:    d.audit,
	})
	if err != nil {
		return err
	}
	d.hooks = eng
	d.hookEv = &hookEvents{phase: map[string]serverPhase{}}
	d.eng.SetInterceptor(eng)
	return nil
}

// Hooks returns the hooks engine.
func (d *Daemon) Hooks() *hooks.Engine { return d.hooks }

// runAgent is the hooks' agent action: the agent loop with the daemon's
// engine, catalog and configuration.
func (d *Daemon) runAgent(ctx context.Context, req hooks.AgentRequest) (string, error) {
	out, err := agent.Run(ctx, agent.Options{
		Config:    d.config(),
		Engine:    d.eng,
		Catalog:   d.cat,
		Prompt:    req.Prompt,
		Selection: agent.Selection{Servers: req.Servers, Tools: req.Tools},
		Identity:  req.Identity,
		Origin:    req.Origin,
		Logger:    d.logger,
	})
	if out == nil {
		return "", err
	}
	if err == nil && out.LimitHit() {
		return out.Answer, nil // the answer so far; the hook's record says enough
	}
	return out.Answer, err
}

// hooksHandler is POST /hooks/events/{name}.
func (d *Daemon) hooksHandler() http.Handler { return d.hooks.Handler() }

// emitServerEvent fires server.available, server.unavailable or
// server.disabled when a server's phase changes.
func (d *Daemon) emitServerEvent(s upstream.Snapshot) {
	if d.hooks == nil {
		return
	}
	phase := phaseUnavailable
	switch {
	case !s.Enabled:
		phase = phaseDisabled
	case s.State == upstream.StateConnected:
		phase = phaseAvailable
	case s.State == upstream.StateCreated, s.State == upstream.StateConnecting && !s.Retrying:
		return // the first attempt: nothing to announce yet
	}
	d.hookEv.mu.Lock()
	prev := d.hookEv.phase[s.Server]
	d.hookEv.phase[s.Server] = phase
	d.hookEv.mu.Unlock()
	if prev == phase {
		return
	}
	fields := map[string]any{"server": s.Server, "state": string(s.State)}
	if s.LastError != "" {
		fields["error"] = s.LastError
	}
	name := "server.unavailable"
	switch phase {
	case phaseAvailable:
		name = "server.available"
	case phaseDisabled:
		name = "server.disabled"
		fields["auto_disabled"] = s.AutoDisabled
	case phaseUnavailable:
		if prev == phaseUnknown && s.LastError == "" {
			return
		}
	}
	if _, err := d.hooks.Emit(context.Background(), name, fields); err != nil {
		d.logger.Warn("firing a server event", "event", name, "server", s.Server, "err", err)
	}
}

// emitCatalogEvent fires catalog.changed.
func (d *Daemon) emitCatalogEvent(server string, kind catalog.Kind) {
	if d.hooks == nil {
		return
	}
	if _, err := d.hooks.Emit(context.Background(), "catalog.changed", map[string]any{"server": server, "kind": string(kind)}); err != nil {
		d.logger.Warn("firing catalog.changed", "server", server, "err", err)
	}
}
