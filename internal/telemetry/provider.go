// Package telemetry sends OpenTelemetry traces of Switchboard's work over
// OTLP: a span per gateway request, per engine call, per upstream request,
// per hook run and per agent step, named and attributed after the
// OpenTelemetry semantic conventions for MCP. It also carries the W3C
// trace context: from a client's HTTP headers and params._meta into the
// spans, and from the spans on to every upstream (in _meta, and in the
// HTTP headers of network servers).
//
// Tracing is off unless a `telemetry:` block or the standard OTEL_*
// environment variables turn it on (docs/observability.md). The daemon
// builds a Provider with New and puts it in force with its Tracing's Use
// (each daemon has its own Tracing); the instrumented packages call the
// Start methods of the Tracing their Options give them (StartClient
// follows the span it is begun in), which, while no provider is in
// force, return at once with a nil *Span whose methods do nothing: one
// atomic load per span is what tracing costs when it is off.
//
// Spans never carry argument values, result contents or error messages
// (which may quote arguments): names, ids, kinds and counts only.
package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Default endpoints of the OTLP exporter, by protocol.
const (
	DefaultHTTPEndpoint = "http://localhost:4318"
	DefaultGRPCEndpoint = "http://localhost:4317"
)

// DefaultServiceName is the spans' service.name unless the file or
// OTEL_SERVICE_NAME names another.
const DefaultServiceName = "switchboard"

// scopeName is the instrumentation scope of every span.
const scopeName = "github.com/switchboard-mcp/switchboard"

// Settings are the telemetry settings in force: the `telemetry:` block
// with the OTEL_* environment variables filling what it leaves out.
type Settings struct {
	// Enabled says whether traces are sent at all.
	Enabled bool
	// Protocol is ProtocolHTTP or ProtocolGRPC.
	Protocol string
	// Endpoint is the URL spans are sent to (for http/protobuf, the full
	// URL with its path).
	Endpoint string
	// Headers are sent with every export.
	Headers map[string]string
	// ServiceName is the spans' service.name.
	ServiceName string
	// Sampler describes the sampler, e.g. "parentbased_traceidratio 0.25".
	Sampler string

	sampler sdktrace.Sampler
}

// Resolve works out the settings from the `telemetry:` block and the
// environment (getenv; nil means os.Getenv). The file wins over the
// environment; OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn
// tracing off whatever the file says. An error names the setting that is
// wrong and how to fix it.
func Resolve(c config.Telemetry, getenv func(string) string) (Settings, error) {
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
	var s Settings
	_, tracesEndpoint := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	_, endpoint := env("OTEL_EXPORTER_OTLP_ENDPOINT")
	switch {
	case c.Enabled != nil:
		s.Enabled = *c.Enabled
	default:
		s.Enabled = tracesEndpoint != "" || endpoint != ""
	}
	if _, v := env("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		s.Enabled = false
	}
	if _, v := env("OTEL_TRACES_EXPORTER"); v != "" {
		switch strings.ToLower(v) {
		case "none":
			s.Enabled = false
		case "otlp":
			if c.Enabled == nil {
				s.Enabled = true
			}
		default:
			return Settings{}, fault.New(fault.Config, "OTEL_TRACES_EXPORTER=%s is not supported; Switchboard exports traces over OTLP", v).
				WithSuggestions("set OTEL_TRACES_EXPORTER=otlp, or none to turn traces off")
		}
	}
	if !s.Enabled {
		return s, nil
	}

	s.Protocol = c.Protocol
	if s.Protocol == "" {
		name, v := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
		switch v {
		case "", ProtocolHTTP:
			s.Protocol = ProtocolHTTP
		case ProtocolGRPC:
			s.Protocol = ProtocolGRPC
		default:
			return Settings{}, fault.New(fault.Config, "%s=%s is not supported", name, v).
				WithSuggestions("use http/protobuf or grpc (http/json is not supported)")
		}
	}

	// The endpoint: a base URL, to which http/protobuf adds /v1/traces,
	// or the traces variable's URL, used as it is.
	base, full := c.Endpoint, ""
	from := "telemetry.endpoint"
	if base == "" {
		switch {
		case tracesEndpoint != "":
			full, from = tracesEndpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
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
		return Settings{}, fault.New(fault.Config, "%s: %s", from, msg).
			WithSuggestions("give the OTLP receiver's URL, e.g. http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc)")
	}
	s.Endpoint = raw
	if full == "" && s.Protocol == ProtocolHTTP {
		u, _ := url.Parse(base)
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		s.Endpoint = u.String()
	}

	if s.Protocol == ProtocolHTTP {
		if _, err := exportClient(getenv); err != nil {
			return Settings{}, err
		}
	}

	s.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(getenv(name), s.Headers); err != nil {
			return Settings{}, fault.Wrap(fault.Config, err, "reading %s", name).
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

	if c.SampleRatio != nil {
		s.sampler = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*c.SampleRatio))
		s.Sampler = "parentbased_traceidratio " + strconv.FormatFloat(*c.SampleRatio, 'g', -1, 64)
	} else {
		sm, desc, err := samplerFromEnv(getenv)
		if err != nil {
			return Settings{}, err
		}
		s.sampler, s.Sampler = sm, desc
	}
	return s, nil
}

// parseHeaders adds the headers of an OTEL_EXPORTER_OTLP_HEADERS value
// (name=value,name=value, values URL-encoded) to into.
func parseHeaders(v string, into map[string]string) error {
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("%q is not name=value", firstChars(part, 20))
		}
		dec, err := url.PathUnescape(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("the value of %s is not URL-encoded correctly", name)
		}
		into[name] = dec
	}
	return nil
}

// firstChars returns at most n characters of s (a header pair may hold a
// secret: a message quotes only its start).
func firstChars(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// samplerFromEnv reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG;
// the default samples every trace a client did not decide on.
func samplerFromEnv(getenv func(string) string) (sdktrace.Sampler, string, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fault.New(fault.Config, "OTEL_TRACES_SAMPLER_ARG=%s is not a ratio", arg).
				WithSuggestions("give a number from 0 to 1, e.g. 0.25")
		}
		return r, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), "parentbased_always_on", nil
	case "always_on":
		return sdktrace.AlwaysSample(), name, nil
	case "always_off":
		return sdktrace.NeverSample(), name, nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), name, nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, "", err
		}
		s := sdktrace.TraceIDRatioBased(r)
		if name == "parentbased_traceidratio" {
			s = sdktrace.ParentBased(s)
		}
		return s, name + " " + strconv.FormatFloat(r, 'g', -1, 64), nil
	}
	return nil, "", fault.New(fault.Config, "OTEL_TRACES_SAMPLER=%s is not supported", name).
		WithSuggestions("use always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio, or telemetry.sample_ratio")
}

// Options configures New.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Version is the service.version of the spans.
	Version string
	// Logger hears of failed exports; nil discards them.
	Logger *slog.Logger
}

// Provider sends spans to one OTLP receiver. A nil *Provider is tracing
// turned off.
type Provider struct {
	settings Settings
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	// closeIdle closes the exporter's idle connections (nil for gRPC,
	// whose exporter closes its connection itself).
	closeIdle func()
}

// propagator reads and writes W3C traceparent and tracestate.
var propagator = propagation.TraceContext{}

// New builds the provider the settings of c and the environment ask for,
// or returns nil (and no error) when they leave tracing off. Nothing is
// sent until the provider is put in force with a Tracing's Use.
func New(ctx context.Context, c config.Telemetry, opts Options) (*Provider, error) {
	s, err := Resolve(c, opts.Getenv)
	if err != nil || !s.Enabled {
		return nil, err
	}
	var exp *otlptrace.Exporter
	var closeIdle func()
	switch s.Protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(s.Endpoint), otlptracegrpc.WithHeaders(s.Headers))
	default:
		var hc *http.Client
		if hc, err = exportClient(opts.Getenv); err == nil {
			closeIdle = hc.CloseIdleConnections
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(s.Endpoint), otlptracehttp.WithHeaders(s.Headers),
				otlptracehttp.WithHTTPClient(hc))
		}
	}
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "setting up the OTLP %s exporter for %s", s.Protocol, s.Endpoint)
	}
	res, err := resource.Merge(resource.Environment(), resource.NewSchemaless(
		attribute.String("service.name", s.ServiceName),
		attribute.String("service.version", opts.Version),
	))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", s.ServiceName), attribute.String("service.version", opts.Version))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(s.sampler),
	)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("sending traces failed", "endpoint", s.Endpoint, "err", err)
	}))
	return &Provider{settings: s, tp: tp, tracer: tp.Tracer(scopeName), closeIdle: closeIdle}, nil
}

// exportClient is the HTTP client of the OTLP/HTTP exporter: its own
// connection pool, closed with the provider (the exporter's default
// shares one across the process, whose connections outlive it), with the
// timeout of OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds; default 10 s) and
// the CA file of OTEL_EXPORTER_OTLP_CERTIFICATE, as the exporter itself
// would read them.
func exportClient(getenv func(string) string) (*http.Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	first := func(names ...string) (string, string) {
		for _, n := range names {
			if v := strings.TrimSpace(getenv(n)); v != "" {
				return n, v
			}
		}
		return "", ""
	}
	timeout := 10 * time.Second
	if name, v := first("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fault.New(fault.Config, "%s=%s is not a timeout", name, v).
				WithSuggestions("give a number of milliseconds, e.g. 10000")
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if name, path := first("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"); path != "" {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fault.Wrap(fault.Config, err, "reading %s", name).
				WithSuggestions("name a PEM file of the CA certificates that signed the receiver's certificate")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fault.New(fault.Config, "%s (%s) holds no PEM certificate", name, path).
				WithSuggestions("name a PEM file of the CA certificates that signed the receiver's certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// Settings returns the settings the provider was built with.
func (p *Provider) Settings() Settings {
	if p == nil {
		return Settings{}
	}
	return p.settings
}

// Shutdown sends the spans still buffered and stops the exporter, within
// ctx's deadline.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	err := p.tp.Shutdown(ctx)
	if p.closeIdle != nil {
		p.closeIdle()
	}
	if err != nil {
		return fmt.Errorf("flushing traces to %s: %w", p.settings.Endpoint, err)
	}
	return nil
}

// ForceFlush sends the spans buffered so far.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.ForceFlush(ctx)
}

// Tracing is where spans go: the provider in force (none while tracing
// is off), put in force with Use and swapped by a reload. Each daemon has
// its own, so that two daemons in one process (tests, an embedding
// program) trace apart; the packages that begin root spans (gateway,
// engine, hooks, agent) take one through their Options. A nil *Tracing
// is Default. Spans begun inside another span (upstream requests) go to
// the provider of that span, whichever Tracing began it.
type Tracing struct {
	current atomic.Pointer[Provider]
}

// defaultTracing is the process's Tracing, used where none is given.
var defaultTracing Tracing

// Default returns the process's Tracing, which an Options field left nil
// stands for.
func Default() *Tracing { return &defaultTracing }

// NewTracing returns a Tracing of its own, with tracing off until Use.
func NewTracing() *Tracing { return new(Tracing) }

// orDefault returns t, or Default when t is nil.
func (t *Tracing) orDefault() *Tracing {
	if t == nil {
		return &defaultTracing
	}
	return t
}

// Use puts p in force (nil turns tracing off) and returns the provider
// it replaces, which the caller shuts down (a reload: spans begun under
// the old one end there and are flushed by its Shutdown).
func (t *Tracing) Use(p *Provider) (previous *Provider) {
	return t.orDefault().current.Swap(p)
}

// Enabled reports whether a provider is in force.
func (t *Tracing) Enabled() bool { return t.orDefault().current.Load() != nil }

// ShutdownTimeout bounds how long a stopping daemon waits for the last
// spans to be sent.
const ShutdownTimeout = 5 * time.Second

// Stop takes the provider in force out of use and flushes it, within
// ShutdownTimeout.
func (t *Tracing) Stop() error {
	p := t.Use(nil)
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	return p.Shutdown(ctx)
}
