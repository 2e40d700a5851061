package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file reads the telemetry: block: OpenTelemetry traces over OTLP
// (docs/observability.md). What the block leaves out falls back to the
// standard OTEL_* environment variables; package telemetry reads those
// when it builds the exporter, so that a reload sees the daemon's own
// environment.

// Telemetry configures OpenTelemetry traces. A nil pointer field was not
// written in the file: the OTEL_* environment variables, then the
// defaults, decide it.
type Telemetry struct {
	// Enabled turns traces on or off; nil leaves it to the environment
	// (on when an OTLP endpoint variable is set).
	Enabled *bool
	// Endpoint is the receiver's URL ("" for the environment's, or the
	// protocol's default).
	Endpoint string
	// Protocol is "http/protobuf" or "grpc" ("" for the environment's, or
	// http/protobuf).
	Protocol string
	// Headers are sent with every export, over those of
	// OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string
	// ServiceName is the spans' service.name ("" for OTEL_SERVICE_NAME,
	// or switchboard).
	ServiceName string
	// SampleRatio is the share of new traces recorded; nil leaves it to
	// OTEL_TRACES_SAMPLER (default: every trace).
	SampleRatio *float64
	// Metrics configures the metrics sent over OTLP.
	Metrics TelemetryMetrics
	// Pos is where the block was written.
	Pos Pos
}

// TelemetryMetrics configures the Prometheus metrics sent over OTLP too,
// to the traces' receiver.
type TelemetryMetrics struct {
	// Enabled turns them on or off; nil leaves it to the environment (on
	// when OTEL_METRICS_EXPORTER=otlp or an OTLP metrics endpoint is set).
	Enabled *bool
	// Interval is how often they are sent; 0 leaves it to
	// OTEL_METRIC_EXPORT_INTERVAL, else 60 s.
	Interval time.Duration
}

// Equal reports whether t and o configure the same telemetry (Pos
// aside): a reload keeps the running exporter when they do.
func (t Telemetry) Equal(o Telemetry) bool {
	return sameBlock(t, o)
}

// isDefault reports whether t says nothing (the block is absent or empty).
func (t Telemetry) isDefault() bool {
	return sameBlock(t, Telemetry{})
}

// TelemetryProtocols are the values telemetry.protocol and
// OTEL_EXPORTER_OTLP_PROTOCOL may take.
var TelemetryProtocols = []string{"http/protobuf", "grpc"}

// CheckTelemetryEndpoint returns what is wrong with an OTLP endpoint URL,
// or "" when it is usable.
func CheckTelemetryEndpoint(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Sprintf("invalid URL %q", v)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("URL %q must start with http:// or https://", v)
	case u.Host == "":
		return fmt.Sprintf("URL %q names no host", v)
	case u.User != nil:
		return "must not carry credentials"
	}
	return ""
}

// decodeTelemetry reads the telemetry: block.
func (r *resolver) decodeTelemetry(f *schema.Telemetry) Telemetry {
	var t Telemetry
	r.readBlock(&t, f, []any{"telemetry"}, "endpoint", "service_name")
	if v, ok := r.textAt("telemetry", "endpoint"); ok {
		if msg := CheckTelemetryEndpoint(v); msg != "" {
			fix := "give the OTLP receiver's http:// or https:// URL, e.g. http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc)"
			if msg == "must not carry credentials" {
				fix = "send the credentials as a header: telemetry.headers"
			}
			r.ps.add(r.at("telemetry", "endpoint").pos, "telemetry.endpoint", msg, fix, nil)
		} else {
			t.Endpoint = v
		}
	}
	if n := r.at("telemetry", "headers"); n != nil {
		if h := r.headers(n, "telemetry.headers"); len(h) > 0 {
			t.Headers = h
		}
	}
	if v, ok := r.textAt("telemetry", "service_name"); ok {
		if strings.TrimSpace(v) == "" {
			r.ps.add(r.at("telemetry", "service_name").pos, "telemetry.service_name", "is empty", "name the service, e.g. service_name: switchboard-prod, or remove the key", nil)
		} else {
			t.ServiceName = strings.TrimSpace(v)
		}
	}
	return t
}
