package telemetrytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"
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

	mu      sync.Mutex
	points  []Point
	changed chan struct{}
}

// NewMetricsHTTP starts an OTLP/HTTP metrics receiver (protobuf bodies at
// /v1/metrics), closed when the test ends.
func NewMetricsHTTP(t testing.TB) *MetricsReceiver {
	r := &MetricsReceiver{changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var msg colmetricspb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *MetricsReceiver) add(msg *colmetricspb.ExportMetricsServiceRequest) {
	var got []Point
	for _, rm := range msg.GetResourceMetrics() {
		res := attrs(rm.GetResource().GetAttributes())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				got = append(got, points(m, res)...)
			}
		}
	}
	r.mu.Lock()
	r.points = append(r.points, got...)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
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
func (r *MetricsReceiver) Points() []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.points)
}

// Wait waits until ok holds for the points received, or fails the test
// after d.
func (r *MetricsReceiver) Wait(t testing.TB, d time.Duration, what string, ok func([]Point) bool) []Point {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		pts, changed := slices.Clone(r.points), r.changed
		r.mu.Unlock()
		if ok(pts) {
			return pts
		}
		select {
		case <-changed:
		case <-deadline.C:
			var names []string
			for _, p := range pts {
				if !slices.Contains(names, p.Metric) {
					names = append(names, p.Metric)
				}
			}
			t.Fatalf("waited %s for %s; received %d points of %v", d, what, len(pts), names)
			return nil
		}
	}
}
