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
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
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
	var s Settings
	_, tracesEndpoint := firstEnv(getenv, traces.variable("ENDPOINT"))
	_, endpoint := firstEnv(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT")
	switch {
	case c.Enabled != nil:
		s.Enabled = *c.Enabled
	default:
		s.Enabled = tracesEndpoint != "" || endpoint != ""
	}
	if _, v := firstEnv(getenv, "OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		s.Enabled = false
	}
	if _, v := firstEnv(getenv, "OTEL_TRACES_EXPORTER"); v != "" {
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

	t, err := resolveTarget(c, getenv, traces)
	if err != nil {
		return Settings{}, err
	}
	s.Protocol, s.Endpoint, s.Headers, s.ServiceName = t.protocol, t.endpoint, t.headers, t.serviceName

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
		if hc, err = exportClient(opts.Getenv, traces); err == nil {
			closeIdle = hc.CloseIdleConnections
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(s.Endpoint), otlptracehttp.WithHeaders(s.Headers),
				otlptracehttp.WithHTTPClient(hc))
		}
	}
	if err != nil {
		return nil, fault.Wrap(fault.Config, err, "setting up the OTLP %s exporter for %s", s.Protocol, s.Endpoint)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(serviceResource(s.ServiceName, opts.Version)),
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
