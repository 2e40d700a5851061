// Package telemetrytest runs OTLP receivers for tests: real OTLP/HTTP
// endpoints of traces and metrics (httptest servers) and a real OTLP/gRPC
// endpoint of traces, decoding what they receive with the official OTLP
// protobuf types (go.opentelemetry.io/proto/otlp), and keeping the spans
// and metric points for the test to inspect. One collector keeps what
// either kind of receiver is sent and wakes the tests waiting on it.
package telemetrytest

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened for tests.
type Span struct {
	Name     string
	Kind     tracepb.Span_SpanKind
	TraceID  string // hex
	SpanID   string // hex
	ParentID string // hex; "" for a root
	Attrs    map[string]string
	Events   []Event
	Status   tracepb.Status_StatusCode
	// Resource holds the attributes of the span's resource.
	Resource map[string]string
}

// Event is one event of a span.
type Event struct {
	Name  string
	Attrs map[string]string
}

// collector keeps what a receiver is sent (items and the headers of each
// export) and wakes the tests waiting on it. Receiver and MetricsReceiver
// are the two kinds of items it keeps.
type collector[T any] struct {
	// describe sums up the items received, for a failed Wait.
	describe func([]T) string

	mu      sync.Mutex
	items   []T
	headers []http.Header // of each HTTP export, or gRPC metadata as headers
	changed chan struct{}
}

func newCollector[T any](describe func([]T) string) collector[T] {
	return collector[T]{describe: describe, changed: make(chan struct{})}
}

func (c *collector[T]) add(items []T, h http.Header) {
	c.mu.Lock()
	c.items = append(c.items, items...)
	c.headers = append(c.headers, h)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *collector[T]) all() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.items)
}

// Headers returns the headers (gRPC: metadata) of each export so far.
func (c *collector[T]) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.headers)
}

// Wait waits until ok holds for what was received, or fails the test
// after d.
func (c *collector[T]) Wait(t testing.TB, d time.Duration, what string, ok func([]T) bool) []T {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		items, changed := slices.Clone(c.items), c.changed
		c.mu.Unlock()
		if ok(items) {
			return items
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("waited %s for %s; received %s", d, what, c.describe(items))
			return nil
		}
	}
}

// serveHTTP starts an OTLP/HTTP endpoint at path (protobuf bodies),
// closed when the test ends: each request is decoded into a new Req and
// handed to add with its headers, and answered with resp. It returns the
// server's base URL.
func serveHTTP[Req proto.Message](t testing.TB, path string, newReq func() Req, resp proto.Message, add func(Req, http.Header)) string {
	out, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
			return
		}
		msg := newReq()
		if err := proto.Unmarshal(body, msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		add(msg, req.Header.Clone())
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Receiver keeps the spans sent to it.
type Receiver struct {
	// URL is the endpoint to configure: for OTLP/HTTP the base URL (the
	// exporter adds /v1/traces), for gRPC http://host:port.
	URL string

	collector[Span]
}

func newReceiver() *Receiver {
	return &Receiver{collector: newCollector(func(spans []Span) string {
		return fmt.Sprintf("%d spans: %v", len(spans), names(spans))
	})}
}

// NewHTTP starts an OTLP/HTTP receiver (protobuf bodies at /v1/traces),
// closed when the test ends.
func NewHTTP(t testing.TB) *Receiver {
	r := newReceiver()
	r.URL = serveHTTP(t, "/v1/traces", func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) },
		&coltracepb.ExportTraceServiceResponse{}, r.addSpans)
	return r
}

// grpcService is the receiver's OTLP trace service.
type grpcService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s grpcService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	h := http.Header{}
	if md, ok := metadataFrom(ctx); ok {
		for k, vs := range md {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
	}
	s.r.addSpans(req, h)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// NewGRPC starts an OTLP/gRPC receiver on 127.0.0.1, stopped when the
// test ends.
func NewGRPC(t testing.TB) *Receiver {
	r := newReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcService{r: r})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	r.URL = "http://" + ln.Addr().String()
	return r
}

func (r *Receiver) addSpans(msg *coltracepb.ExportTraceServiceRequest, h http.Header) {
	var got []Span
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Name:     s.GetName(),
					Kind:     s.GetKind(),
					TraceID:  hex.EncodeToString(s.GetTraceId()),
					SpanID:   hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Attrs:    attrs(s.GetAttributes()),
					Status:   s.GetStatus().GetCode(),
					Resource: res,
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, Event{Name: e.GetName(), Attrs: attrs(e.GetAttributes())})
				}
				got = append(got, sp)
			}
		}
	}
	r.add(got, h)
}

// attrs flattens OTLP attributes to strings (ints and doubles in their
// decimal form).
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.GetKey()] = valueString(kv.GetValue())
	}
	return m
}

func valueString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return formatInt(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return formatFloat(x.DoubleValue)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span { return r.all() }

func names(spans []Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// Trace returns the spans of one trace.
func Trace(spans []Span, traceID string) []Span {
	var out []Span
	for _, s := range spans {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// Find returns the first span named name, or false.
func Find(spans []Span, name string) (Span, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return Span{}, false
}

// Tree renders spans as an indented tree, children under their parent,
// with each span's kind and chosen attributes: for failure messages and
// for documentation. A span whose parent is not among spans is a root.
func Tree(spans []Span, attrs ...string) string {
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var b strings.Builder
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range spans {
			isRoot := parent == "" && !ids[s.ParentID]
			if !isRoot && (parent == "" || s.ParentID != parent) {
				continue
			}
			fmt.Fprintf(&b, "%s%s  [%s]", strings.Repeat("  ", depth), s.Name, strings.TrimPrefix(s.Kind.String(), "SPAN_KIND_"))
			for _, a := range attrs {
				if v, ok := s.Attrs[a]; ok {
					fmt.Fprintf(&b, " %s=%s", a, v)
				}
			}
			for _, e := range s.Events {
				fmt.Fprintf(&b, " event:%s", strings.ReplaceAll(e.Name, " ", "_"))
			}
			b.WriteByte('\n')
			walk(s.SpanID, depth+1)
		}
	}
	walk("", 0)
	return b.String()
}
