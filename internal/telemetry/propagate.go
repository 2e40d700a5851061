package telemetry

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C trace context keys, in HTTP headers and (SEP-414) in
// params._meta.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
)

// metaCarrier reads and writes the trace context keys of a _meta map.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	return []string{MetaTraceparent, MetaTracestate}
}

// Extract returns ctx with the remote trace context a request carries:
// that of its _meta when it has a valid traceparent, else that of its
// HTTP headers; ctx unchanged when neither does.
func Extract(ctx context.Context, meta map[string]any, header http.Header) context.Context {
	if _, ok := meta[MetaTraceparent].(string); ok {
		if c := propagator.Extract(ctx, metaCarrier(meta)); trace.SpanContextFromContext(c).IsValid() {
			return c
		}
	}
	if header != nil && header.Get(MetaTraceparent) != "" {
		return propagator.Extract(ctx, propagation.HeaderCarrier(header))
	}
	return ctx
}

// active reports whether ctx holds a span context to pass on: that of a
// span a provider of this package made. It is false whenever tracing is
// off.
func active(ctx context.Context) bool {
	return parentTracer(ctx) != nil
}

// WithMeta returns meta with ctx's trace context in its traceparent and
// tracestate (replacing any there): a new map, meta itself untouched.
// While tracing is off, or outside a trace, it returns meta unchanged.
func WithMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !active(ctx) {
		return meta
	}
	out := make(map[string]any, len(meta)+2)
	for k, v := range meta {
		if k != MetaTraceparent && k != MetaTracestate {
			out[k] = v
		}
	}
	propagator.Inject(ctx, metaCarrier(out))
	return out
}

// CallParams returns params with ctx's trace context in its _meta (a
// copy; params itself untouched), or params while tracing is off.
func CallParams(ctx context.Context, params *mcp.CallToolParams) *mcp.CallToolParams {
	if !active(ctx) {
		return params
	}
	p := *params
	p.Meta = WithMeta(ctx, params.Meta)
	return &p
}

// HTTPRequest returns req with ctx's trace context (req's own) in its
// traceparent and tracestate headers: a clone, req untouched. While
// tracing is off, or outside a trace, it returns req itself.
func HTTPRequest(req *http.Request) *http.Request {
	ctx := req.Context()
	if !active(ctx) {
		return req
	}
	out := req.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(out.Header))
	return out
}

// ServerMiddleware gives every request a client sends to a go-sdk server
// (the gateway's views, over streamable HTTP, SSE and stdio) a server
// span, whose context the handler's work inherits. Notifications get
// none.
func (t *Tracing) ServerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !t.Enabled() || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		r := Request{Method: method}
		params := req.GetParams()
		if !isNil(params) {
			r.Meta = params.GetMeta()
			r.Target = target(params)
		}
		if ex := req.GetExtra(); ex != nil {
			r.Header = ex.Header
		}
		if ss := req.GetSession(); !isNil(ss) {
			r.Session = ss.ID()
		}
		ctx, span := t.StartServer(ctx, r)
		res, err := next(ctx, method, req)
		if ctr, ok := res.(*mcp.CallToolResult); ok {
			span.EndTool(ctr, err)
		} else {
			span.End(err)
		}
		return res, err
	}
}

// ClientMiddleware gives each request a go-sdk client sends to server
// within a trace a client span, and puts its trace context in the
// request's _meta. tools/call is left to the caller (upstream.Client
// traces it itself, as it may not go through the SDK); notifications get
// nothing.
func ClientMiddleware(server, endpoint string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !active(ctx) || method == "tools/call" || strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			params := req.GetParams()
			tgt := ""
			if !isNil(params) {
				tgt = target(params)
			}
			ctx, span := StartClient(ctx, server, method, tgt, endpoint)
			if !isNil(params) {
				params.SetMeta(WithMeta(ctx, params.GetMeta()))
			}
			res, err := next(ctx, method, req)
			span.End(err)
			return res, err
		}
	}
}

// target is what a request's params name: a tool, a prompt, a resource.
func target(p mcp.Params) string {
	switch p := p.(type) {
	case *mcp.CallToolParamsRaw:
		return p.Name
	case *mcp.CallToolParams:
		return p.Name
	case *mcp.GetPromptParams:
		return p.Name
	case *mcp.ReadResourceParams:
		return p.URI
	case *mcp.SubscribeParams:
		return p.URI
	case *mcp.UnsubscribeParams:
		return p.URI
	}
	return ""
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Carried is the trace context of work handed to another goroutine (a
// hook queued for the pool), which starts from a context of its own.
type Carried struct {
	sc trace.SpanContext
}

// Carry takes ctx's trace context along (nothing while tracing is off:
// ctx then holds none of a span of this package's providers).
func Carry(ctx context.Context) Carried {
	if !active(ctx) {
		return Carried{}
	}
	return Carried{sc: trace.SpanContextFromContext(ctx)}
}

// Into returns ctx continuing the carried trace, or ctx itself when
// nothing was carried.
func (c Carried) Into(ctx context.Context) context.Context {
	if !c.sc.IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, c.sc)
}
