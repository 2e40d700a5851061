package telemetrytest

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// Point is one received data point of a metric, flattened for tests.
type Point struct {
	// Metric is the metric's name; Kind "sum", "gauge" or "histogram".
	Metric, Kind string
	// Monotonic is true for a monotonic sum (a counter).
	Monotonic bool
	Attrs     map[string]string
	// Value is a sum's or gauge's value.
	Value float64
	// Count, Sum and Bounds are a histogram's.
	Count  uint64
	Sum    float64
	Bounds []float64
	// Resource holds the attributes of the point's resource.
	Resource map[string]string
}

// MetricsReceiver keeps the metric points sent to it.
type MetricsReceiver struct {
	// URL is the base URL to configure (the exporter adds /v1/metrics).
	URL string

	collector[Point]
}

// NewMetricsHTTP starts an OTLP/HTTP metrics receiver (protobuf bodies at
// /v1/metrics), closed when the test ends.
func NewMetricsHTTP(t testing.TB) *MetricsReceiver {
	r := &MetricsReceiver{collector: newCollector(func(pts []Point) string {
		var names []string
		for _, p := range pts {
			if !slices.Contains(names, p.Metric) {
				names = append(names, p.Metric)
			}
		}
		return fmt.Sprintf("%d points of %v", len(pts), names)
	})}
	r.URL = serveHTTP(t, "/v1/metrics", func() *colmetricspb.ExportMetricsServiceRequest { return new(colmetricspb.ExportMetricsServiceRequest) },
		&colmetricspb.ExportMetricsServiceResponse{}, r.addPoints)
	return r
}

func (r *MetricsReceiver) addPoints(msg *colmetricspb.ExportMetricsServiceRequest, h http.Header) {
	var got []Point
	for _, rm := range msg.GetResourceMetrics() {
		res := attrs(rm.GetResource().GetAttributes())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				got = append(got, points(m, res)...)
			}
		}
	}
	r.add(got, h)
}

// points flattens one metric's data points.
func points(m *metricspb.Metric, res map[string]string) []Point {
	var out []Point
	number := func(kind string, monotonic bool, dps []*metricspb.NumberDataPoint) {
		for _, dp := range dps {
			v := dp.GetAsDouble()
			if _, ok := dp.GetValue().(*metricspb.NumberDataPoint_AsInt); ok {
				v = float64(dp.GetAsInt())
			}
			out = append(out, Point{Metric: m.GetName(), Kind: kind, Monotonic: monotonic, Attrs: attrs(dp.GetAttributes()), Value: v, Resource: res})
		}
	}
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Sum:
		number("sum", d.Sum.GetIsMonotonic(), d.Sum.GetDataPoints())
	case *metricspb.Metric_Gauge:
		number("gauge", false, d.Gauge.GetDataPoints())
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.GetDataPoints() {
			out = append(out, Point{Metric: m.GetName(), Kind: "histogram", Attrs: attrs(dp.GetAttributes()),
				Count: dp.GetCount(), Sum: dp.GetSum(), Bounds: dp.GetExplicitBounds(), Resource: res})
		}
	}
	return out
}

// Points returns the points received so far.
func (r *MetricsReceiver) Points() []Point { return r.all() }
