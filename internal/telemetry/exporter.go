package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file is what the traces and the metrics exporters read alike from
// the `telemetry:` block and the OTEL_EXPORTER_OTLP_* variables: the
// protocol, the endpoint, the headers, the service name and the HTTP
// client. Each signal has its own variables beside the shared ones
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT beside OTEL_EXPORTER_OTLP_ENDPOINT),
// which win over them.

// signal is one kind of telemetry sent over OTLP.
type signal struct {
	// env is the signal's part of its variables' names: TRACES or METRICS.
	env string
	// httpPath is the path of the http/protobuf endpoint made from a base
	// URL's path (the signal's variable's URL is used as it is).
	httpPath func(basePath string) string
}

var (
	traces = signal{env: "TRACES", httpPath: func(p string) string {
		if p == "" || p == "/" {
			return "/v1/traces"
		}
		return p
	}}
	metrics = signal{env: "METRICS", httpPath: func(p string) string {
		switch p = strings.TrimSuffix(p, "/"); {
		case p == "":
			return "/v1/metrics"
		case strings.HasSuffix(p, "/v1/traces"):
			return strings.TrimSuffix(p, "/v1/traces") + "/v1/metrics"
		default:
			return p + "/v1/metrics"
		}
	}}
)

// variable returns the name of the signal's own variable of a setting,
// e.g. OTEL_EXPORTER_OTLP_TRACES_ENDPOINT for ENDPOINT.
func (s signal) variable(setting string) string {
	return "OTEL_EXPORTER_OTLP_" + s.env + "_" + setting
}

// firstEnv returns the name and trimmed value of the first of names that
// getenv finds set, or two empty strings.
func firstEnv(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return n, v
		}
	}
	return "", ""
}

// exporterTarget is where and how an exporter sends, as resolved by
// resolveTarget.
type exporterTarget struct {
	protocol    string
	endpoint    string
	headers     map[string]string
	serviceName string
}

// resolveTarget works out the protocol, endpoint, headers and service
// name of the signal's exporter from the `telemetry:` block (which wins)
// and the environment (getenv, not nil). An error names the setting that
// is wrong and how to fix it.
func resolveTarget(c config.Telemetry, getenv func(string) string, sig signal) (exporterTarget, error) {
	var t exporterTarget
	t.protocol = c.Protocol
	if t.protocol == "" {
		name, v := firstEnv(getenv, sig.variable("PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL")
		switch v {
		case "", ProtocolHTTP:
			t.protocol = ProtocolHTTP
		case ProtocolGRPC:
			t.protocol = ProtocolGRPC
		default:
			return exporterTarget{}, fault.New(fault.Config, "%s=%s is not supported", name, v).
				WithSuggestions("use http/protobuf or grpc (http/json is not supported)")
		}
	}

	// The endpoint: a base URL, whose path http/protobuf completes with the
	// signal's, or the signal's variable's URL, used as it is.
	base, full := c.Endpoint, ""
	from := "telemetry.endpoint"
	if base == "" {
		_, signalEndpoint := firstEnv(getenv, sig.variable("ENDPOINT"))
		_, endpoint := firstEnv(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT")
		switch {
		case signalEndpoint != "":
			full, from = signalEndpoint, sig.variable("ENDPOINT")
		case endpoint != "":
			base, from = endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT"
		case t.protocol == ProtocolGRPC:
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
		return exporterTarget{}, fault.New(fault.Config, "%s: %s", from, msg).
			WithSuggestions("give the OTLP receiver's URL, e.g. http://localhost:4318 (http/protobuf) or http://localhost:4317 (grpc)")
	}
	t.endpoint = raw
	if full == "" && t.protocol == ProtocolHTTP {
		u, _ := url.Parse(base)
		u.Path = sig.httpPath(u.Path)
		t.endpoint = u.String()
	}
	if t.protocol == ProtocolHTTP {
		if _, err := exportClient(getenv, sig); err != nil {
			return exporterTarget{}, err
		}
	}

	t.headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", sig.variable("HEADERS")} {
		if err := parseHeaders(getenv(name), t.headers); err != nil {
			return exporterTarget{}, fault.Wrap(fault.Config, err, "reading %s", name).
				WithSuggestions("write it as name=value pairs separated by commas, e.g. x-api-key=abc,x-team=ops (values URL-encoded)")
		}
	}
	for k, v := range c.Headers {
		t.headers[k] = v
	}

	t.serviceName = c.ServiceName
	if t.serviceName == "" {
		if _, v := firstEnv(getenv, "OTEL_SERVICE_NAME"); v != "" {
			t.serviceName = v
		} else {
			t.serviceName = DefaultServiceName
		}
	}
	return t, nil
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

// exportClient is the HTTP client of the signal's OTLP/HTTP exporter: its
// own connection pool, closed with the exporter (the exporter's default
// shares one across the process, whose connections outlive it), with the
// timeout of OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds; default 10 s) and
// the CA file of OTEL_EXPORTER_OTLP_CERTIFICATE, or the signal's own
// variables, as the exporter itself would read them. A nil getenv means
// os.Getenv.
func exportClient(getenv func(string) string, sig signal) (*http.Client, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	timeout := 10 * time.Second
	if name, v := firstEnv(getenv, sig.variable("TIMEOUT"), "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fault.New(fault.Config, "%s=%s is not a timeout", name, v).
				WithSuggestions("give a number of milliseconds, e.g. 10000")
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if name, path := firstEnv(getenv, sig.variable("CERTIFICATE"), "OTEL_EXPORTER_OTLP_CERTIFICATE"); path != "" {
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

// serviceResource is the resource of an exporter's data: the environment's
// (OTEL_RESOURCE_ATTRIBUTES) with the service's name and version.
func serviceResource(name, version string) *resource.Resource {
	own := resource.NewSchemaless(attribute.String("service.name", name), attribute.String("service.version", version))
	res, err := resource.Merge(resource.Environment(), own)
	if err != nil {
		return own
	}
	return res
}
