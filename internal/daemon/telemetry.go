package daemon

import (
	"context"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
)

// This file wires OpenTelemetry traces (package telemetry) into the
// daemon: the provider is built and installed when serving starts,
// swapped by a reload whose telemetry: block (or environment) asks for
// another, and flushed on exit.

// checkTelemetry reports what is wrong with cfg's telemetry settings and
// the environment, without building anything.
func checkTelemetry(cfg *config.Config) error {
	_, err := telemetry.Resolve(cfg.Telemetry, nil)
	return err
}

// startTelemetry installs the provider cfg asks for (none when tracing is
// off).
func (d *Daemon) startTelemetry(cfg *config.Config) error {
	p, err := telemetry.New(context.Background(), cfg.Telemetry, telemetry.Options{Version: d.opts.Version, Logger: d.logger})
	if err != nil {
		return err
	}
	if p != nil {
		s := p.Settings()
		d.logger.Info("sending traces", "endpoint", s.Endpoint, "protocol", s.Protocol, "sampler", s.Sampler, "service", s.ServiceName)
	}
	d.shutdownTelemetry(telemetry.Use(p))
	return nil
}

// reloadTelemetry builds the provider a reloaded configuration asks for
// (nil: tracing off), unless its settings are those in force (changed is
// false). The caller installs it with telemetry.Use and shuts the old one
// down, or shuts it down when the reload fails. It fails only on
// settings Resolve refuses, before anything changed.
func (d *Daemon) reloadTelemetry(old, cfg *config.Config) (p *telemetry.Provider, changed bool, err error) {
	if old.Telemetry.Equal(cfg.Telemetry) {
		return nil, false, nil
	}
	p, err = telemetry.New(context.Background(), cfg.Telemetry, telemetry.Options{Version: d.opts.Version, Logger: d.logger})
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}

// shutdownTelemetry flushes and stops a provider taken out of use.
func (d *Daemon) shutdownTelemetry(p *telemetry.Provider) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.ShutdownTimeout)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		d.logger.Warn("flushing traces failed", "err", err)
	}
}
