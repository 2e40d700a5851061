package daemon

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry/telemetrytest"
)

// TestMetricsOverOTLP: with telemetry.metrics on, a call through the
// gateway reaches a real OTLP/HTTP receiver (decoding the official OTLP
// protobuf types) as the Prometheus metrics have it: the calls counter, a
// monotonic sum with its server, tool, status and source, and the latency
// histogram with its server, status and buckets; under the configured
// service name. Traces stay off.
func TestMetricsOverOTLP(t *testing.T) {
	t.Parallel()
	rcv := telemetrytest.NewMetricsHTTP(t)
	cfg := testConfig(okHTTPServer(t, "go"))
	on := true
	cfg.Telemetry = config.Telemetry{Endpoint: rcv.URL, ServiceName: "sb-metrics",
		Metrics: config.TelemetryMetrics{Enabled: &on, Interval: 100 * time.Millisecond}}
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "go's tools", has("go__whoami"))
	call(t, cs, "go__whoami", map[string]any{})

	var counter, histogram telemetrytest.Point
	rcv.Wait(t, 60*time.Second, "the call's counter and latency histogram", func(ps []telemetrytest.Point) bool {
		var gotC, gotH bool
		for _, p := range ps {
			switch {
			case p.Metric == "switchboard_calls_total" && p.Kind == "sum" && p.Attrs["server"] == "go" && p.Attrs["tool"] == "whoami" && p.Value >= 1:
				counter, gotC = p, true
			case p.Metric == "switchboard_call_duration_seconds" && p.Kind == "histogram" && p.Attrs["server"] == "go" && p.Count >= 1:
				histogram, gotH = p, true
			}
		}
		return gotC && gotH
	})
	if !counter.Monotonic || counter.Attrs["status"] != "success" || counter.Attrs["source"] != "gateway" || counter.Resource["service.name"] != "sb-metrics" {
		t.Errorf("calls counter: got %+v, want a monotonic sum of a successful gateway call from service sb-metrics", counter)
	}
	if histogram.Attrs["status"] != "success" || len(histogram.Bounds) == 0 || histogram.Sum <= 0 {
		t.Errorf("latency histogram: got %+v, want a successful call's duration with the buckets' bounds", histogram)
	}
}
