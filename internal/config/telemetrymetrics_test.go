package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestTelemetryMetricsBlock: telemetry.metrics is read, written back by
// config show, and its interval checked against its limits.
func TestTelemetryMetricsBlock(t *testing.T) {
	src := agentServers + `telemetry:
  metrics:
    enabled: true
    interval: 30s
`
	cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if diff := cmp.Diff(config.TelemetryMetrics{Enabled: &on, Interval: 30 * time.Second}, cfg.Telemetry.Metrics); diff != "" {
		t.Errorf("telemetry.metrics (-want +got):\n%s", diff)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("sb.yaml", out, config.TestOpts)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	if !cfg.Telemetry.Equal(again.Telemetry) || !strings.Contains(string(out), "metrics:") {
		t.Errorf("read back %+v, want %+v\n%s", again.Telemetry, cfg.Telemetry, out)
	}
	changed := cfg.Telemetry
	changed.Metrics.Interval = time.Minute
	if cfg.Telemetry.Equal(changed) {
		t.Error("another interval is Equal: a reload would keep the old export")
	}

	_, err = config.Parse("sb.yaml", []byte(agentServers+"telemetry:\n  metrics:\n    interval: 10ms\n"), config.TestOpts)
	if err == nil || !strings.Contains(err.Error(), "sb.yaml:8:15: telemetry.metrics.interval") {
		t.Errorf("an interval under 100ms: got %v", err)
	}
}
