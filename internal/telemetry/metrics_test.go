package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/telemetry/telemetrytest"
)

// TestResolveMetrics: the metrics export is off unless the file or the
// environment asks for it (an endpoint for traces alone does not); the
// file wins over the environment; the endpoint gets /v1/metrics.
func TestResolveMetrics(t *testing.T) {
	on, off := true, false
	tests := []struct {
		name string
		c    config.Telemetry
		env  map[string]string
		want telemetry.MetricsSettings
	}{
		{name: "nothing: off"},
		{name: "a traces endpoint alone: off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:4318"}},
		{name: "OTEL_METRICS_EXPORTER=otlp", env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:4318", "OTEL_METRIC_EXPORT_INTERVAL": "5000"},
			want: telemetry.MetricsSettings{Enabled: true, Protocol: telemetry.ProtocolHTTP, Endpoint: "http://col:4318/v1/metrics", Headers: map[string]string{}, ServiceName: "switchboard", Interval: 5 * time.Second}},
		{name: "a metrics endpoint, used as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://col:4318/custom", "OTEL_EXPORTER_OTLP_HEADERS": "k=v"},
			want: telemetry.MetricsSettings{Enabled: true, Protocol: telemetry.ProtocolHTTP, Endpoint: "http://col:4318/custom", Headers: map[string]string{"k": "v"}, ServiceName: "switchboard", Interval: telemetry.DefaultMetricsInterval}},
		{name: "the file", c: config.Telemetry{Endpoint: "https://col/otlp/v1/traces", Protocol: "http/protobuf", ServiceName: "sb", Metrics: config.TelemetryMetrics{Enabled: &on, Interval: time.Second}},
			want: telemetry.MetricsSettings{Enabled: true, Protocol: telemetry.ProtocolHTTP, Endpoint: "https://col/otlp/v1/metrics", Headers: map[string]string{}, ServiceName: "sb", Interval: time.Second}},
		{name: "grpc", c: config.Telemetry{Protocol: "grpc", Metrics: config.TelemetryMetrics{Enabled: &on}},
			want: telemetry.MetricsSettings{Enabled: true, Protocol: telemetry.ProtocolGRPC, Endpoint: telemetry.DefaultGRPCEndpoint, Headers: map[string]string{}, ServiceName: "switchboard", Interval: telemetry.DefaultMetricsInterval}},
		{name: "the file says off", c: config.Telemetry{Metrics: config.TelemetryMetrics{Enabled: &off}}, env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}},
		{name: "none wins over the file", c: config.Telemetry{Metrics: config.TelemetryMetrics{Enabled: &on}}, env: map[string]string{"OTEL_METRICS_EXPORTER": "none"}},
		{name: "the SDK disabled", c: config.Telemetry{Metrics: config.TelemetryMetrics{Enabled: &on}}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := telemetry.ResolveMetrics(tt.c, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_METRICS_EXPORTER": "console"}, "OTEL_METRICS_EXPORTER=console is not supported"},
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_METRIC_EXPORT_INTERVAL": "soon"}, "OTEL_METRIC_EXPORT_INTERVAL=soon is not an interval"},
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported"},
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/json is not supported"},
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "novalue"}, "reading OTEL_EXPORTER_OTLP_METRICS_HEADERS"},
		// The metrics exporter's client reads the metrics variables, not the traces ones.
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "5s", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1000"}, "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT=5s is not a timeout"},
		{map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE": "/nonexistent/ca.pem"}, "reading OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE"},
	} {
		_, err := telemetry.ResolveMetrics(config.Telemetry{}, func(k string) string { return tt.env[k] })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error saying %q", tt.env, err, tt.want)
		}
	}
}

// TestMetricsExport: a registry's counter and histogram reach a real
// OTLP/HTTP receiver with their labels, on the interval and on Shutdown;
// off, NewMetrics builds nothing.
func TestMetricsExport(t *testing.T) {
	if m, err := telemetry.NewMetrics(context.Background(), config.Telemetry{}, prometheus.NewRegistry(), telemetry.Options{Getenv: func(string) string { return "" }}); m != nil || err != nil {
		t.Fatalf("off: got %v, %v; want nil, nil", m, err)
	}
	rcv := telemetrytest.NewMetricsHTTP(t)
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_calls_total", Help: "h"}, []string{"server"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "t_seconds", Help: "h", Buckets: []float64{0.1, 1}}, []string{"server"})
	reg.MustRegister(c, h)
	c.WithLabelValues("alpha").Add(3)
	h.WithLabelValues("alpha").Observe(0.5)
	on := true
	m, err := telemetry.NewMetrics(context.Background(), config.Telemetry{Endpoint: rcv.URL, Metrics: config.TelemetryMetrics{Enabled: &on, Interval: time.Hour}},
		reg, telemetry.Options{Getenv: func(string) string { return "" }, Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Settings().Endpoint, rcv.URL+"/v1/metrics"; got != want {
		t.Errorf("endpoint: got %s, want %s", got, want)
	}
	if err := m.ForceFlush(context.Background()); err != nil { // an export now, not in an hour
		t.Fatal(err)
	}
	rcv.Wait(t, 30*time.Second, "the flushed counter and histogram", func(ps []telemetrytest.Point) bool { return len(ps) >= 2 })
	if err := m.Shutdown(context.Background()); err != nil { // the last export
		t.Fatal(err)
	}
	pts := rcv.Wait(t, 30*time.Second, "the counter and the histogram again on Shutdown", func(ps []telemetrytest.Point) bool { return len(ps) >= 4 })
	want := map[string]telemetrytest.Point{
		"t_calls_total": {Metric: "t_calls_total", Kind: "sum", Monotonic: true, Attrs: map[string]string{"server": "alpha"}, Value: 3},
		"t_seconds":     {Metric: "t_seconds", Kind: "histogram", Attrs: map[string]string{"server": "alpha"}, Count: 1, Sum: 0.5, Bounds: []float64{0.1, 1}},
	}
	for _, p := range pts {
		w, ok := want[p.Metric]
		if !ok {
			continue
		}
		w.Resource = p.Resource
		if diff := cmp.Diff(w, p); diff != "" {
			t.Errorf("%s (-want +got):\n%s", p.Metric, diff)
		}
		if p.Resource["service.name"] != "switchboard" || p.Resource["service.version"] != "t" {
			t.Errorf("%s: resource %v", p.Metric, p.Resource)
		}
		delete(want, p.Metric)
	}
	if len(want) > 0 {
		t.Errorf("not received: %v", want)
	}
}
