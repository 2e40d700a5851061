package daemon

import (
	"context"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
)

// This file wires OpenTelemetry traces (package telemetry) into the
// daemon: the provider is built and put in force in the daemon's Tracing
// (Options.Tracing) when serving starts,
// swapped by a reload whose telemetry: block (or environment) asks for
// another, and flushed on exit.

// checkTelemetry reports what is wrong with cfg's telemetry settings and
// the environment, without building anything.
func checkTelemetry(cfg *config.Config) error {
	if _, err := telemetry.Resolve(cfg.Telemetry, nil); err != nil {
		return err
	}
	_, err := telemetry.ResolveMetrics(cfg.Telemetry, nil)
	return err
}

// startTelemetry installs the provider cfg asks for (none when tracing is
// off), and starts the OTLP export of the metrics when cfg asks for it.
func (d *Daemon) startTelemetry(cfg *config.Config) error {
	m, err := d.newMetricsExport(cfg)
	if err != nil {
		return err
	}
	p, err := telemetry.New(context.Background(), cfg.Telemetry, telemetry.Options{Version: d.opts.Version, Logger: d.logger})
	if err != nil {
		d.shutdownMetricsExport(m)
		return err
	}
	if p != nil {
		s := p.Settings()
		d.logger.Info("sending traces", "endpoint", s.Endpoint, "protocol", s.Protocol, "sampler", s.Sampler, "service", s.ServiceName)
	}
	d.shutdownTelemetry(d.opts.Tracing.Use(p))
	d.shutdownMetricsExport(d.swapMetricsExport(m))
	return nil
}

// newMetricsExport builds (and starts) the OTLP export of the daemon's
// metrics that cfg asks for; nil when it is off.
func (d *Daemon) newMetricsExport(cfg *config.Config) (*telemetry.MetricsExporter, error) {
	m, err := telemetry.NewMetrics(context.Background(), cfg.Telemetry, d.metrics.Gatherer(), telemetry.Options{Version: d.opts.Version, Logger: d.logger})
	if err != nil {
		return nil, err
	}
	if m != nil {
		s := m.Settings()
		d.logger.Info("sending metrics", "endpoint", s.Endpoint, "protocol", s.Protocol, "interval", s.Interval.String(), "service", s.ServiceName)
	}
	return m, nil
}

// swapMetricsExport puts m in force and returns the one it replaces.
func (d *Daemon) swapMetricsExport(m *telemetry.MetricsExporter) *telemetry.MetricsExporter {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.otlpMetrics
	d.otlpMetrics = m
	return old
}

// shutdownMetricsExport sends the last metrics of an export taken out of
// use and stops it.
func (d *Daemon) shutdownMetricsExport(m *telemetry.MetricsExporter) {
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.ShutdownTimeout)
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		d.logger.Warn("sending the last metrics failed", "err", err)
	}
}

// reloadMetricsExport builds the metrics export a reloaded configuration
// asks for (nil: off), unless its settings are those in force (changed
// is false). The caller swaps it in and shuts the old one down, or shuts
// it down when the reload fails.
func (d *Daemon) reloadMetricsExport(old, cfg *config.Config) (m *telemetry.MetricsExporter, changed bool, err error) {
	if old.Telemetry.Equal(cfg.Telemetry) {
		return nil, false, nil
	}
	m, err = d.newMetricsExport(cfg)
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// reloadTelemetry builds the provider a reloaded configuration asks for
// (nil: tracing off), unless its settings are those in force (changed is
// false). The caller puts it in force with the daemon's Tracing and shuts the old one
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
