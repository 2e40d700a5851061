package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file sends the Prometheus metrics (the registry /metrics serves)
// over OTLP as well, through the OpenTelemetry Prometheus bridge: a
// periodic reader gathers the registry and exports what it holds, so
// Switchboard keeps one set of instruments. It is off unless the
// telemetry.metrics block or the OTEL_* variables ask for it; off, nothing
// is built and nothing runs.

// DefaultMetricsInterval is how often metrics are sent unless the file or
// OTEL_METRIC_EXPORT_INTERVAL says otherwise.
const DefaultMetricsInterval = 60 * time.Second

// MetricsSettings are the settings of the OTLP metrics exporter in force:
// the telemetry: block with the OTEL_* environment variables filling what
// it leaves out.
type MetricsSettings struct {
	// Enabled says whether metrics are sent over OTLP at all.
	Enabled bool
	// Protocol is ProtocolHTTP or ProtocolGRPC.
	Protocol string
	// Endpoint is the URL metrics are sent to (for http/protobuf, the
	// full URL with its path).
	Endpoint string
	// Headers are sent with every export.
	Headers map[string]string
	// ServiceName is the resource's service.name.
	ServiceName string
	// Interval is how often the registry is gathered and sent.
	Interval time.Duration
}

// ResolveMetrics works out the metrics exporter's settings from the
// `telemetry:` block and the environment (getenv; nil means os.Getenv).
// The file wins over the environment; OTEL_SDK_DISABLED=true and
// OTEL_METRICS_EXPORTER=none (or prometheus: /metrics only) turn it off
// whatever the file says. An error names the setting that is wrong and
// how to fix it.
func ResolveMetrics(c config.Telemetry, getenv func(string) string) (MetricsSettings, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var s MetricsSettings
	_, metricsEndpoint := firstEnv(getenv, metrics.variable("ENDPOINT"))
	if c.Metrics.Enabled != nil {
		s.Enabled = *c.Metrics.Enabled
	} else {
		s.Enabled = metricsEndpoint != ""
	}
	if _, v := firstEnv(getenv, "OTEL_METRICS_EXPORTER"); v != "" {
		switch strings.ToLower(v) {
		case "none", "prometheus":
			s.Enabled = false
		case "otlp":
			if c.Metrics.Enabled == nil {
				s.Enabled = true
			}
		default:
			return MetricsSettings{}, fault.New(fault.Config, "OTEL_METRICS_EXPORTER=%s is not supported; Switchboard serves metrics at /metrics and may also send them over OTLP", v).
				WithSuggestions("set OTEL_METRICS_EXPORTER=otlp, or none (or prometheus) to serve /metrics only")
		}
	}
	if _, v := firstEnv(getenv, "OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		s.Enabled = false
	}
	if !s.Enabled {
		return s, nil
	}

	t, err := resolveTarget(c, getenv, metrics)
	if err != nil {
		return MetricsSettings{}, err
	}
	s.Protocol, s.Endpoint, s.Headers, s.ServiceName = t.protocol, t.endpoint, t.headers, t.serviceName

	s.Interval = c.Metrics.Interval
	if s.Interval == 0 {
		s.Interval = DefaultMetricsInterval
		if name, v := firstEnv(getenv, "OTEL_METRIC_EXPORT_INTERVAL"); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return MetricsSettings{}, fault.New(fault.Config, "%s=%s is not an interval", name, v).
					WithSuggestions("give a number of milliseconds, e.g. 60000, or set telemetry.metrics.interval")
			}
			s.Interval = time.Duration(ms) * time.Millisecond
		}
	}
	return s, nil
}

// MetricsExporter sends a Prometheus registry over OTLP at an interval. A
// nil *MetricsExporter is the export turned off.
type MetricsExporter struct {
	settings  MetricsSettings
	mp        *metric.MeterProvider
	closeIdle func()
}

// NewMetrics builds the exporter of reg's metrics that the settings of c
// and the environment ask for, and starts its periodic reader; it
// returns nil (and no error) when they leave it off. Shutdown stops it.
func NewMetrics(ctx context.Context, c config.Telemetry, reg prometheus.Gatherer, opts Options) (*MetricsExporter, error) {
	s, err := ResolveMetrics(c, opts.Getenv)
	if err != nil || !s.Enabled {
		return nil, err
	}
	var exp metric.Exporter
	var closeIdle func()
	switch s.Protocol {
	case ProtocolGRPC:
		exp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(s.Endpoint), otlpmetricgrpc.WithHeaders(s.Headers))
	default:
		var hc *http.Client
		if hc, err = exportClient(opts.Getenv, metrics); err == nil {
			closeIdle = hc.CloseIdleConnections
			exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(s.Endpoint), otlpmetrichttp.WithHeaders(s.Headers),
				otlpmetrichttp.WithHTTPClient(hc))
		}
	}
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "setting up the OTLP %s metrics exporter for %s", s.Protocol, s.Endpoint)
	}
	reader := metric.NewPeriodicReader(exp, metric.WithInterval(s.Interval),
		metric.WithProducer(otelprom.NewMetricProducer(otelprom.WithGatherer(reg))))
	mp := metric.NewMeterProvider(metric.WithReader(reader), metric.WithResource(serviceResource(s.ServiceName, opts.Version)))
	return &MetricsExporter{settings: s, mp: mp, closeIdle: closeIdle}, nil
}

// Settings returns the settings the exporter was built with.
func (m *MetricsExporter) Settings() MetricsSettings {
	if m == nil {
		return MetricsSettings{}
	}
	return m.settings
}

// ForceFlush gathers the registry and sends it now.
func (m *MetricsExporter) ForceFlush(ctx context.Context) error {
	if m == nil {
		return nil
	}
	return m.mp.ForceFlush(ctx)
}

// Shutdown sends the metrics a last time and stops the periodic reader,
// within ctx's deadline.
func (m *MetricsExporter) Shutdown(ctx context.Context) error {
	if m == nil {
		return nil
	}
	err := m.mp.Shutdown(ctx)
	if m.closeIdle != nil {
		m.closeIdle()
	}
	if err != nil {
		return fmt.Errorf("sending the last metrics to %s: %w", m.settings.Endpoint, err)
	}
	return nil
}
