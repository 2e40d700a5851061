package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/telemetry/telemetrytest"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func ptr[T any](v T) *T { return &v }

func TestResolve(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		file config.Telemetry
		env  map[string]string
		want telemetry.Settings
	}{
		{name: "off by default", want: telemetry.Settings{}},
		{
			name: "the endpoint variable turns it on",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			want: telemetry.Settings{Enabled: true, Protocol: "http/protobuf", Endpoint: "http://collector:4318/v1/traces",
				Headers: map[string]string{}, ServiceName: "switchboard", Sampler: "parentbased_always_on"},
		},
		{
			name: "the file's enabled: false wins over the environment",
			file: config.Telemetry{Enabled: ptr(false)},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"},
			want: telemetry.Settings{},
		},
		{
			name: "OTEL_SDK_DISABLED wins over the file",
			file: config.Telemetry{Enabled: ptr(true)},
			env:  map[string]string{"OTEL_SDK_DISABLED": "true"},
			want: telemetry.Settings{},
		},
		{
			name: "OTEL_TRACES_EXPORTER=none turns it off",
			file: config.Telemetry{Enabled: ptr(true)},
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "none"},
			want: telemetry.Settings{},
		},
		{
			name: "defaults when the file turns it on",
			file: config.Telemetry{Enabled: ptr(true)},
			want: telemetry.Settings{Enabled: true, Protocol: "http/protobuf", Endpoint: "http://localhost:4318/v1/traces",
				Headers: map[string]string{}, ServiceName: "switchboard", Sampler: "parentbased_always_on"},
		},
		{
			name: "grpc from the environment, its default endpoint",
			file: config.Telemetry{Enabled: ptr(true)},
			env:  map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			want: telemetry.Settings{Enabled: true, Protocol: "grpc", Endpoint: "http://localhost:4317",
				Headers: map[string]string{}, ServiceName: "switchboard", Sampler: "parentbased_always_on"},
		},
		{
			name: "the traces endpoint is used as it is; the file's keys win; headers merge",
			file: config.Telemetry{Protocol: "http/protobuf", Headers: map[string]string{"x-team": "file"}, ServiceName: "gw", SampleRatio: ptr(0.25)},
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://api.example.com/otlp/traces",
				"OTEL_EXPORTER_OTLP_PROTOCOL":        "grpc",
				"OTEL_EXPORTER_OTLP_HEADERS":         "x-api-key=a%20b, x-team=env",
				"OTEL_SERVICE_NAME":                  "env-name",
				"OTEL_TRACES_SAMPLER":                "always_off",
			},
			want: telemetry.Settings{Enabled: true, Protocol: "http/protobuf", Endpoint: "https://api.example.com/otlp/traces",
				Headers: map[string]string{"x-api-key": "a b", "x-team": "file"}, ServiceName: "gw", Sampler: "parentbased_traceidratio 0.25"},
		},
		{
			name: "the file's endpoint keeps its path",
			file: config.Telemetry{Enabled: ptr(true), Endpoint: "https://otlp.example.com/custom/v1/traces"},
			env:  map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"},
			want: telemetry.Settings{Enabled: true, Protocol: "http/protobuf", Endpoint: "https://otlp.example.com/custom/v1/traces",
				Headers: map[string]string{}, ServiceName: "switchboard", Sampler: "parentbased_traceidratio 0.5"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := telemetry.Resolve(tc.file, envOf(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".sampler" }, cmp.Ignore())); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	on := config.Telemetry{Enabled: ptr(true)}
	for _, tc := range []struct {
		name, want, fix string
		env             map[string]string
	}{
		{"protocol", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported", "http/protobuf or grpc", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}},
		{"endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT: URL \"localhost:4318\" must start with http:// or https://", "http://localhost:4318", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}},
		{"headers", "reading OTEL_EXPORTER_OTLP_HEADERS: \"novalue\" is not name=value", "name=value pairs", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}},
		{"sampler", "OTEL_TRACES_SAMPLER=sometimes is not supported", "parentbased_traceidratio", map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}},
		{"sampler arg", "OTEL_TRACES_SAMPLER_ARG=2 is not a ratio", "from 0 to 1", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}},
		{"exporter", "OTEL_TRACES_EXPORTER=zipkin is not supported", "otlp", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}},
		{"timeout", "OTEL_EXPORTER_OTLP_TIMEOUT=10s is not a timeout", "milliseconds", map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}},
		{"certificate", "reading OTEL_EXPORTER_OTLP_CERTIFICATE", "PEM file", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := telemetry.Resolve(on, envOf(tc.env))
			fe := fault.As(err)
			if fe == nil || fe.Kind != fault.Config {
				t.Fatalf("got %v, want a config error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to say %q", err, tc.want)
			}
			if !strings.Contains(strings.Join(fe.Suggestions, " "), tc.fix) {
				t.Errorf("suggestions %q do not say %q", fe.Suggestions, tc.fix)
			}
		})
	}
	// A header value is a secret: a message quotes only the start of a pair.
	_, err := telemetry.Resolve(on, envOf(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-key%zz-0123456789abcdefghijklmnop"}))
	if err == nil || strings.Contains(err.Error(), "abcdefghijklmnop") {
		t.Errorf("got %v, want an error that does not quote the whole pair", err)
	}
}

// TestExportGRPC sends spans over OTLP/gRPC to a real gRPC receiver
// (the official collector service types), with the configured headers
// as metadata, and Stop flushes them.
func TestExportGRPC(t *testing.T) {
	t.Parallel()
	rcv := telemetrytest.NewGRPC(t)
	p, err := telemetry.New(context.Background(), config.Telemetry{Enabled: ptr(true), Protocol: "grpc", Endpoint: rcv.URL,
		Headers: map[string]string{"x-api-key": "k1"}}, telemetry.Options{Getenv: envOf(nil), Version: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	tr := telemetry.NewTracing()
	if prev := tr.Use(p); prev != nil {
		t.Fatalf("a new Tracing had a provider: %+v", prev.Settings())
	}
	ctx, call := tr.StartCall(context.Background(), telemetry.Call{ID: "c1", Server: "srv", Tool: "echo", Source: "cli"})
	_, up := telemetry.StartClient(ctx, "srv", "tools/call", "echo", "")
	up.End(fault.New(fault.Timeout, "srv/echo did not answer within 1s"))
	call.Queued(3 * time.Millisecond)
	call.Attempt(1)
	call.Retry(1, fault.New(fault.Connection, "gone"), 100*time.Millisecond)
	call.Attempt(2)
	call.End(nil)
	if err := tr.Stop(); err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() {
		t.Fatal("Stop left a provider in force")
	}
	spans := rcv.Spans()
	eng, ok := telemetrytest.Find(spans, "execute_tool echo")
	if !ok {
		t.Fatalf("no engine span among %d", len(spans))
	}
	up2, ok := telemetrytest.Find(spans, "tools/call echo")
	if !ok || up2.ParentID != eng.SpanID || up2.TraceID != eng.TraceID {
		t.Fatalf("the upstream span %+v is not the engine span's child", up2)
	}
	if up2.Attrs["error.type"] != "timeout" || up2.Status != tracepb.Status_STATUS_CODE_ERROR || up2.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("a timed-out request's span: %+v", up2)
	}
	var events []string
	for _, e := range eng.Events {
		events = append(events, e.Name)
	}
	if diff := cmp.Diff([]string{"queue wait", "attempt", "retry", "attempt"}, events); diff != "" {
		t.Errorf("engine span events (-want +got):\n%s", diff)
	}
	if eng.Attrs["switchboard.call.retries"] != "1" || eng.Attrs["switchboard.call.attempts"] != "2" || eng.Attrs["switchboard.call.queue_wait_ms"] != "3" {
		t.Errorf("engine span attributes: %v", eng.Attrs)
	}
	if eng.Resource["service.version"] != "v9" || eng.Resource["service.name"] != "switchboard" {
		t.Errorf("resource: %v", eng.Resource)
	}
	if hs := rcv.Headers(); len(hs) == 0 || hs[0].Get("x-api-key") != "k1" {
		t.Errorf("export metadata: %v, want x-api-key: k1", hs)
	}
}

// TestOffCostsNothing checks that with no provider in force the
// instrumentation allocates nothing and passes requests through as they
// are.
func TestOffCostsNothing(t *testing.T) { // not parallel: AllocsPerRun refuses to
	tr := telemetry.NewTracing()
	params := &mcp.CallToolParams{Name: "echo", Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	req := httptest.NewRequest(http.MethodPost, "http://upstream/mcp", nil)
	failure := errors.New("x")
	allocs := testing.AllocsPerRun(1000, func() {
		ctx, s := tr.StartServer(context.Background(), telemetry.Request{Method: "tools/call", Target: "x", Meta: params.Meta, Header: req.Header})
		ctx, c := tr.StartCall(ctx, telemetry.Call{ID: "1", Server: "s", Tool: "echo"})
		c.Queued(time.Millisecond)
		c.Attempt(1)
		ctx, u := telemetry.StartClient(ctx, "s", "tools/call", "echo", "")
		if telemetry.CallParams(ctx, params) != params || telemetry.HTTPRequest(req) != req {
			t.Fatal("tracing off changed a request")
		}
		u.EndTool(nil, nil)
		c.Status("success")
		c.End(nil)
		s.End(failure)
	})
	if allocs != 0 {
		t.Errorf("tracing off allocates %v times per call, want 0", allocs)
	}
}

// BenchmarkOff is the instrumentation of one forwarded call with
// tracing off: what every call pays for it.
func BenchmarkOff(b *testing.B) {
	params := &mcp.CallToolParams{Name: "echo"}
	req := httptest.NewRequest(http.MethodPost, "http://upstream/mcp", nil)
	tr := telemetry.NewTracing()
	b.ReportAllocs()
	for b.Loop() {
		ctx, s := tr.StartServer(context.Background(), telemetry.Request{Method: "tools/call", Target: "x"})
		ctx, c := tr.StartCall(ctx, telemetry.Call{ID: "1", Server: "s", Tool: "echo"})
		c.Queued(0)
		c.Attempt(1)
		ctx, u := telemetry.StartClient(ctx, "s", "tools/call", "echo", "")
		_ = telemetry.CallParams(ctx, params)
		_ = telemetry.HTTPRequest(req)
		u.EndTool(nil, nil)
		c.End(nil)
		s.End(nil)
	}
}
