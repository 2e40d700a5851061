package telemetry_test

import (
	"context"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/telemetry/telemetrytest"
)

// TestExportClientFiles: traces and metrics read the exporter's timeout
// and CA file alike, each from its own variable before the shared one: a
// PEM file of a real CA and a timeout in milliseconds are taken, a file
// with no certificate is refused naming the variable it came from.
func TestExportClientFiles(t *testing.T) {
	t.Parallel()
	tlsSrv := httptest.NewUnstartedServer(nil)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}

	resolve := map[string]func(env map[string]string) error{
		"TRACES": func(env map[string]string) error {
			_, err := telemetry.Resolve(config.Telemetry{Enabled: ptr(true)}, envOf(env))
			return err
		},
		"METRICS": func(env map[string]string) error {
			env["OTEL_METRICS_EXPORTER"] = "otlp"
			_, err := telemetry.ResolveMetrics(config.Telemetry{}, envOf(env))
			return err
		},
	}
	for signal, resolve := range resolve {
		own := "OTEL_EXPORTER_OTLP_" + signal + "_CERTIFICATE"
		if err := resolve(map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": ca, "OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}); err != nil {
			t.Errorf("%s with a CA file and a timeout: %v", signal, err)
		}
		if err := resolve(map[string]string{own: ca, "OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM}); err != nil {
			t.Errorf("%s: its own CA file must win over the shared one: %v", signal, err)
		}
		err := resolve(map[string]string{own: notPEM})
		if want := own + " (" + notPEM + ") holds no PEM certificate"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s with a file of no certificate: got %v, want it to say %q", signal, err, want)
		}
	}
}

// TestExportHTTPFlush: over http/protobuf, a provider sends to the base
// URL's /v1/traces with the file's headers, and ForceFlush sends what is
// buffered without waiting for the batch or Shutdown.
func TestExportHTTPFlush(t *testing.T) {
	rcv := telemetrytest.NewHTTP(t)
	p, err := telemetry.New(context.Background(), config.Telemetry{Enabled: ptr(true), Endpoint: rcv.URL,
		Headers: map[string]string{"x-api-key": "k2"}}, telemetry.Options{Getenv: envOf(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Settings().Endpoint, rcv.URL+"/v1/traces"; got != want {
		t.Errorf("endpoint: got %s, want %s", got, want)
	}
	tr := telemetry.NewTracing()
	tr.Use(p)
	defer func() {
		if err := tr.Stop(); err != nil {
			t.Error(err)
		}
	}()
	_, call := tr.StartCall(context.Background(), telemetry.Call{ID: "c2", Server: "srv", Tool: "flushed", Source: "cli"})
	call.End(nil)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rcv.Wait(t, 30*time.Second, "the flushed span", func(spans []telemetrytest.Span) bool {
		_, ok := telemetrytest.Find(spans, "execute_tool flushed")
		return ok
	})
	if hs := rcv.Headers(); len(hs) == 0 || hs[0].Get("x-api-key") != "k2" {
		t.Errorf("export headers: %v, want x-api-key: k2", hs)
	}
}
