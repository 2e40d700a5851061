package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Reload re-reads the configuration and applies it all-or-nothing: when
// it does not load, fails validation, or asks for something the running
// engine cannot take, the running configuration stays untouched and the
// error says why. Otherwise only changed servers restart; settings that
// need a restart of the process (listen address, history store) are kept
// and reported as warnings.
func (d *Daemon) Reload(ctx context.Context) (_ control.ReloadReport, err error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	defer func() {
		if err != nil {
			err = reloadRefused(err)
		}
		d.auditReload(ctx, err)
	}()
	if d.opts.Load == nil {
		return control.ReloadReport{}, fault.New(fault.Config, "this daemon runs on the embedded default, which has no file to reload").
			WithSuggestions("write a switchboard.yaml (switchboard config import, or docs/configuration.md) and restart serve with it")
	}
	cfg, err := d.opts.Load()
	if err != nil {
		return control.ReloadReport{}, err
	}
	old := d.config()
	var warnings []string
	if cfg.Gateway.Listen != old.Gateway.Listen {
		warnings = append(warnings, fmt.Sprintf("gateway.listen changed from %s to %s; it takes effect when serve restarts", old.Gateway.Listen, cfg.Gateway.Listen))
		cfg.Gateway.Listen = old.Gateway.Listen
	}
	if !cfg.Audit.Equal(old.Audit) {
		warnings = append(warnings, "audit changed; it takes effect when serve restarts")
		cfg.Audit = old.Audit
	}
	if err := cfg.Gateway.CheckExposure(); err != nil {
		return control.ReloadReport{}, err
	}
	if cfg.History.Store != old.History.Store {
		warnings = append(warnings, "history.store changed; it takes effect when serve restarts")
		cfg.History.Store = old.History.Store
	}
	if err := d.eng.CheckConfig(cfg); err != nil {
		return control.ReloadReport{}, err
	}
	if err := d.hooks.CheckConfig(cfg); err != nil {
		return control.ReloadReport{}, err
	}
	auth, authChanged, err := d.oauth.prepare(cfg.Gateway.OAuth)
	if err != nil {
		return control.ReloadReport{}, err
	}
	tracing, tracingChanged, err := d.reloadTelemetry(old, cfg)
	if err != nil {
		return control.ReloadReport{}, err
	}
	export, exportChanged, err := d.reloadMetricsExport(old, cfg)
	if err != nil {
		d.shutdownTelemetry(tracing)
		return control.ReloadReport{}, err
	}
	changes, err := d.pool.Apply(ctx, cfg)
	if err != nil {
		d.shutdownTelemetry(tracing)
		d.shutdownMetricsExport(export)
		return control.ReloadReport{}, err
	}
	if tracingChanged {
		d.shutdownTelemetry(d.opts.Tracing.Use(tracing))
	}
	if exportChanged {
		d.shutdownMetricsExport(d.swapMetricsExport(export))
	}
	d.cat.SetServers(cfg.Servers)
	if err := d.eng.SetConfig(cfg); err != nil {
		// CheckConfig accepted it; this is a bug, not bad input.
		d.logger.Error("applying a checked configuration to the engine failed", "err", err)
	}
	d.mu.Lock()
	d.cfg = cfg
	d.mu.Unlock()
	// A new authenticator is installed before the configuration that
	// needs it, and one no longer needed is removed after.
	if authChanged && auth != nil {
		d.gw.SetAuthenticator(auth)
		d.oauth.swap(cfg.Gateway.OAuth, auth)
	}
	d.gw.SetConfig(cfg)
	if authChanged && auth == nil {
		d.gw.SetAuthenticator(nil)
		d.oauth.swap(nil, nil)
	}
	d.metrics.SetUsers(configUsers(cfg))
	if err := d.hooks.SetConfig(cfg); err != nil {
		d.logger.Error("applying checked hooks failed", "err", err)
	}
	for _, w := range warnings {
		d.logger.Warn("reload", "warning", w)
	}
	// The reload took, but a server it kept or added still cannot start:
	// the person who reloaded (after creating a path?) hears why at once.
	for _, srv := range cfg.Servers {
		if srv.Enabled && len(srv.CannotStart) > 0 {
			for _, p := range srv.CannotStart {
				warnings = append(warnings, fmt.Sprintf("server %s cannot start: %s", srv.Name, p))
			}
		}
	}
	blocks := config.ChangedBlocks(old, cfg)
	also := ""
	if len(blocks) > 0 {
		also = "; also changed: " + strings.Join(blocks, ", ")
	}
	d.out.printf("configuration reloaded from %s: %d added, %d removed, %d changed, %d unchanged%s\n",
		cfg.Source, len(changes.Added), len(changes.Removed), len(changes.Changed), len(changes.Unchanged), also)
	return control.ReloadReport{
		Source:    cfg.Source,
		Added:     nonNil(changes.Added),
		Removed:   nonNil(changes.Removed),
		Changed:   nonNil(changes.Changed),
		Unchanged: nonNil(changes.Unchanged),
		Blocks:    nonNil(blocks),
		Warnings:  warnings,
	}, nil
}

// reloadRefused is the error of a reload that did not happen: it says that
// the running configuration was kept, keeps err as its cause (and err's
// suggestions), and lists a file's problems apart in details.problems, one
// "file:line:col: field: message" string each, so that a client across
// the control socket can print them a line each.
func reloadRefused(err error) error {
	const kept = "the running configuration was kept"
	var ve *config.ValidationError
	if errors.As(err, &ve) && len(ve.Problems) > 0 {
		problems := make([]string, len(ve.Problems))
		for i, p := range ve.Problems {
			problems[i] = p.String()
		}
		n := "1 problem"
		if len(problems) > 1 {
			n = fmt.Sprintf("%d problems", len(problems))
		}
		fe := fault.Wrap(fault.Config, err, "the configuration was not reloaded (%s); %s", n, kept).
			WithDetail("problems", problems)
		return withSuggestionsOf(fe, err)
	}
	return withSuggestionsOf(fault.Wrap(fault.KindOf(err), err, "the configuration was not reloaded; %s", kept), err)
}

// withSuggestionsOf gives fe the suggestions of the first *fault.Error in
// err's chain.
func withSuggestionsOf(fe *fault.Error, err error) *fault.Error {
	var inner *fault.Error
	if errors.As(err, &inner) {
		fe.Suggestions = append(fe.Suggestions, inner.Suggestions...)
	}
	return fe
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
