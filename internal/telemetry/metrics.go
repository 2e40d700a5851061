package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

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
	env := func(names ...string) (string, string) {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return n, v
			}
		}
		return "", ""
	}
	var s MetricsSettings
	_, metricsEndpoint := env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if c.Metrics.Enabled != nil {
		s.Enabled = *c.Metrics.Enabled
	} else {
		s.Enabled = metricsEndpoint != ""
	}
	if _, v := env("OTEL_METRICS_EXPORTER"); v != "" {
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
	if _, v := env("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		s.Enabled = false
	}
	if !s.Enabled {
		return s, nil
	}

	s.Protocol = c.Protocol
	if s.Protocol == "" {
		name, v := env("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
		switch v {
		case "", ProtocolHTTP:
			s.Protocol = ProtocolHTTP
		case ProtocolGRPC:
			s.Protocol = ProtocolGRPC
		default:
			return MetricsSettings{}, fault.New(fault.Config, "%s=%s is not supported", name, v).
				WithSuggestions("use http/protobuf or grpc (http/json is not supported)")
		}
	}

	// The endpoint: a base URL, to which http/protobuf adds /v1/metrics,
	// or the metrics variable's URL, used as it is.
	base, full := c.Endpoint, ""
	from := "telemetry.endpoint"
	if base == "" {
		_, endpoint := env("OTEL_EXPORTER_OTLP_ENDPOINT")
		switch {
		case metricsEndpoint != "":
			full, from = metricsEndpoint, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
		case endpoint != "":
			base, from = endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT"
		case s.Protocol == ProtocolGRPC:
			base = DefaultGRPCEndpoint
		default:
			base = DefaultHTTPEndpoint
		}
	}
	raw := full
	if raw == "" {
		raw = base
	}
	if msg := config.CheckTelemetryEndpoint(raw); msg != "" {
		return MetricsSettings{}, fault.New(fault.Config, "%s: %s", from, msg).
			WithSuggestions("give the OTLP receiver's URL, e.g. http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc)")
	}
	s.Endpoint = raw
	if full == "" && s.Protocol == ProtocolHTTP {
		u, _ := url.Parse(base)
		switch p := strings.TrimSuffix(u.Path, "/"); {
		case p == "":
			u.Path = "/v1/metrics"
		case strings.HasSuffix(p, "/v1/traces"):
			u.Path = strings.TrimSuffix(p, "/v1/traces") + "/v1/metrics"
		default:
			u.Path = p + "/v1/metrics"
		}
		s.Endpoint = u.String()
	}
	if s.Protocol == ProtocolHTTP {
		if _, err := exportClient(getenv); err != nil {
			return MetricsSettings{}, err
		}
	}

	s.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"} {
		if err := parseHeaders(getenv(name), s.Headers); err != nil {
			return MetricsSettings{}, fault.Wrap(fault.Config, err, "reading %s", name).
				WithSuggestions("write it as name=value pairs separated by commas, e.g. x-api-key=abc,x-team=ops (values URL-encoded)")
		}
	}
	for k, v := range c.Headers {
		s.Headers[k] = v
	}

	s.ServiceName = c.ServiceName
	if s.ServiceName == "" {
		if _, v := env("OTEL_SERVICE_NAME"); v != "" {
			s.ServiceName = v
		} else {
			s.ServiceName = DefaultServiceName
		}
	}

	s.Interval = c.Metrics.Interval
	if s.Interval == 0 {
		s.Interval = DefaultMetricsInterval
		if name, v := env("OTEL_METRIC_EXPORT_INTERVAL"); v != "" {
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
		if hc, err = exportClient(opts.Getenv); err == nil {
			closeIdle = hc.CloseIdleConnections
			exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(s.Endpoint), otlpmetrichttp.WithHeaders(s.Headers),
				otlpmetrichttp.WithHTTPClient(hc))
		}
	}
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "setting up the OTLP %s metrics exporter for %s", s.Protocol, s.Endpoint)
	}
	res, err := resource.Merge(resource.Environment(), resource.NewSchemaless(
		attribute.String("service.name", s.ServiceName),
		attribute.String("service.version", opts.Version),
	))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", s.ServiceName), attribute.String("service.version", opts.Version))
	}
	reader := metric.NewPeriodicReader(exp, metric.WithInterval(s.Interval),
		metric.WithProducer(otelprom.NewMetricProducer(otelprom.WithGatherer(reg))))
	mp := metric.NewMeterProvider(metric.WithReader(reader), metric.WithResource(res))
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
