package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Attribute keys. The mcp.*, gen_ai.*, jsonrpc.*, rpc.*, network.*,
// server.*, error.type and user.id keys are the OpenTelemetry semantic
// conventions' (MCP and GenAI); switchboard.* are Switchboard's own.
const (
	KeyMethod          = "mcp.method.name"
	KeySessionID       = "mcp.session.id"
	KeyResourceURI     = "mcp.resource.uri"
	KeyRequestID       = "jsonrpc.request.id"
	KeyToolName        = "gen_ai.tool.name"
	KeyPromptName      = "gen_ai.prompt.name"
	KeyOperation       = "gen_ai.operation.name"
	KeyToolCallID      = "gen_ai.tool.call.id"
	KeyErrorType       = "error.type"
	KeyRPCStatus       = "rpc.response.status_code"
	KeyTransport       = "network.transport"
	KeyProtocolName    = "network.protocol.name"
	KeyServerAddress   = "server.address"
	KeyServerPort      = "server.port"
	KeyUserID          = "user.id"
	KeyModel           = "gen_ai.request.model"
	KeyInputTokens     = "gen_ai.usage.input_tokens"
	KeyOutputTokens    = "gen_ai.usage.output_tokens"
	KeyServer          = "switchboard.server"
	KeySource          = "switchboard.call.source"
	KeyCallID          = "switchboard.call.id"
	KeyQueueWait       = "switchboard.call.queue_wait_ms"
	KeyAttempts        = "switchboard.call.attempts"
	KeyRetries         = "switchboard.call.retries"
	KeyAttempt         = "switchboard.attempt"
	KeyBackoff         = "switchboard.backoff_ms"
	KeyStatus          = "switchboard.status"
	KeyHook            = "switchboard.hook.name"
	KeyHookEvent       = "switchboard.hook.event"
	KeyHookOutcome     = "switchboard.hook.outcome"
	KeyAgentStep       = "switchboard.agent.step"
	KeyAgentToolCalls  = "switchboard.agent.tool_calls"
	operationExecTool  = "execute_tool"
	errorTypeToolError = "tool_error"
)

// Span is a span in progress. A nil *Span (tracing off, or nothing to
// trace) is valid: its methods do nothing.
type Span struct {
	s trace.Span
}

// tracer returns the tracer of the provider in force, or nil.
func (t *Tracing) tracer() trace.Tracer {
	if p := t.orDefault().current.Load(); p != nil {
		return p.tracer
	}
	return nil
}

// parentTracer returns a tracer of the provider that made the span in
// ctx, or nil when ctx holds no span of a provider of this package (no
// trace, or tracing off).
func parentTracer(ctx context.Context) trace.Tracer {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	tp, ok := trace.SpanFromContext(ctx).TracerProvider().(*sdktrace.TracerProvider)
	if !ok {
		return nil
	}
	return tp.Tracer(scopeName)
}

// start begins a span under ctx's span.
func start(ctx context.Context, t trace.Tracer, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, *Span) {
	ctx, s := t.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, &Span{s: s}
}

// End ends the span; a non-nil err marks it failed, with its kind as
// error.type (never its message, which may quote arguments).
func (s *Span) End(err error) {
	if s == nil {
		return
	}
	if err != nil {
		s.fail(errorType(err))
	}
	s.s.End()
}

// EndTool ends a span whose work produced a tool result: a result with
// isError counts as failed (error.type tool_error), like err.
func (s *Span) EndTool(res *mcp.CallToolResult, err error) {
	if s == nil {
		return
	}
	if err == nil && res != nil && res.IsError {
		s.fail(errorTypeToolError)
	}
	s.End(err)
}

func (s *Span) fail(kind string) {
	s.s.SetAttributes(attribute.String(KeyErrorType, kind))
	s.s.SetStatus(codes.Error, kind)
}

// errorType names an error for error.type: the JSON-RPC code a peer
// answered with, else the Switchboard error kind (timeout, connection,
// validation, ...).
func errorType(err error) string {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return strconv.FormatInt(rpcErr.Code, 10)
	}
	return string(fault.KindOf(err))
}

// Call describes an engine call for StartCall.
type Call struct {
	ID, Server, Tool, Source, Session, User string
}

// StartCall begins the span of one engine call (execute_tool TOOL).
func (tr *Tracing) StartCall(ctx context.Context, c Call) (context.Context, *Span) {
	t := tr.tracer()
	if t == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{
		attribute.String(KeyOperation, operationExecTool),
		attribute.String(KeyToolName, c.Tool),
		attribute.String(KeyServer, c.Server),
		attribute.String(KeyToolCallID, c.ID),
		attribute.String(KeyCallID, c.ID),
		attribute.String(KeySource, c.Source),
	}
	if c.Session != "" {
		attrs = append(attrs, attribute.String(KeySessionID, c.Session))
	}
	if c.User != "" {
		attrs = append(attrs, attribute.String(KeyUserID, c.User))
	}
	return start(ctx, t, operationExecTool+" "+c.Tool, trace.SpanKindInternal, attrs...)
}

// Queued records how long a call waited for a slot.
func (s *Span) Queued(d time.Duration) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.Float64(KeyQueueWait, float64(d)/float64(time.Millisecond)))
	if d >= time.Millisecond {
		s.s.AddEvent("queue wait", trace.WithAttributes(attribute.Float64(KeyQueueWait, float64(d)/float64(time.Millisecond))))
	}
}

// Attempt records that attempt n (1 for the first) is sent.
func (s *Span) Attempt(n int) {
	if s == nil {
		return
	}
	s.s.AddEvent("attempt", trace.WithAttributes(attribute.Int(KeyAttempt, n)))
	s.s.SetAttributes(attribute.Int(KeyAttempts, n))
}

// Retry records that a failed attempt n is retried after backoff.
func (s *Span) Retry(n int, err error, backoff time.Duration) {
	if s == nil {
		return
	}
	s.s.AddEvent("retry", trace.WithAttributes(
		attribute.Int(KeyAttempt, n),
		attribute.String(KeyErrorType, errorType(err)),
		attribute.Int64(KeyBackoff, backoff.Milliseconds()),
	))
	s.s.SetAttributes(attribute.Int(KeyRetries, n))
}

// Status records how the call ended (success, error, timeout, cancelled).
func (s *Span) Status(status string) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.String(KeyStatus, status))
}

// StartClient begins the span of a request Switchboard sends to an
// upstream server (kind client): method, and target, the tool's or
// prompt's name (or a resource's URI, kept out of the span's name).
// endpoint is a network server's URL, "" for stdio. A request made
// outside any trace (a health ping, discovery in the background) gets no
// span.
func StartClient(ctx context.Context, server, method, target, endpoint string) (context.Context, *Span) {
	t := parentTracer(ctx)
	if t == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{attribute.String(KeyMethod, method), attribute.String(KeyServer, server)}
	attrs = append(attrs, targetAttrs(method, target)...)
	if endpoint == "" {
		attrs = append(attrs, attribute.String(KeyTransport, "pipe"))
	} else if u, err := url.Parse(endpoint); err == nil {
		attrs = append(attrs, attribute.String(KeyTransport, "tcp"), attribute.String(KeyServerAddress, u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			attrs = append(attrs, attribute.Int(KeyServerPort, p))
		}
	}
	return start(ctx, t, spanName(method, target), trace.SpanKindClient, attrs...)
}

// targetAttrs are the attributes naming what a request is about.
func targetAttrs(method, target string) []attribute.KeyValue {
	if target == "" {
		return nil
	}
	switch method {
	case "tools/call":
		return []attribute.KeyValue{attribute.String(KeyToolName, target), attribute.String(KeyOperation, operationExecTool)}
	case "prompts/get":
		return []attribute.KeyValue{attribute.String(KeyPromptName, target)}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return []attribute.KeyValue{attribute.String(KeyResourceURI, target)}
	}
	return nil
}

// spanName is "{mcp.method.name} {target}" for tools and prompts, else
// the method (a resource URI is not a low-cardinality name).
func spanName(method, target string) string {
	switch method {
	case "tools/call", "prompts/get":
		if target != "" {
			return method + " " + target
		}
	}
	return method
}

// Request describes a request a client sent to the gateway, for
// StartServer.
type Request struct {
	// Method is the JSON-RPC method, Target the tool's or prompt's name or
	// the resource's URI.
	Method, Target string
	// Meta is the request's params._meta, where a client may put
	// traceparent and tracestate.
	Meta map[string]any
	// Header is the HTTP request's header (nil over stdio).
	Header http.Header
	// Session is the MCP session id, RequestID the JSON-RPC id as sent.
	Session, RequestID string
}

// StartServer begins the span of a request a client sent to the gateway
// (kind server). Its parent is the trace context of the request's _meta,
// else of its HTTP headers, else none (a new trace).
func (tr *Tracing) StartServer(ctx context.Context, r Request) (context.Context, *Span) {
	t := tr.tracer()
	if t == nil {
		return ctx, nil
	}
	ctx = Extract(ctx, r.Meta, r.Header)
	attrs := []attribute.KeyValue{attribute.String(KeyMethod, r.Method)}
	attrs = append(attrs, targetAttrs(r.Method, r.Target)...)
	if r.Session != "" {
		attrs = append(attrs, attribute.String(KeySessionID, r.Session))
	}
	if r.RequestID != "" {
		attrs = append(attrs, attribute.String(KeyRequestID, strings.Trim(r.RequestID, `"`)))
	}
	if r.Header != nil {
		attrs = append(attrs, attribute.String(KeyTransport, "tcp"), attribute.String(KeyProtocolName, "http"))
	} else {
		attrs = append(attrs, attribute.String(KeyTransport, "pipe"))
	}
	return start(ctx, t, spanName(r.Method, r.Target), trace.SpanKindServer, attrs...)
}

// StartHook begins the span of one hook's run for an event.
func (tr *Tracing) StartHook(ctx context.Context, event, hook string) (context.Context, *Span) {
	t := tr.tracer()
	if t == nil {
		return ctx, nil
	}
	return start(ctx, t, "hook "+hook, trace.SpanKindInternal,
		attribute.String(KeyHook, hook), attribute.String(KeyHookEvent, event))
}

// EndHook ends a hook's span with how its run ended (allow, deny,
// rewrite, failed); a failed run marks the span failed (error.type
// hook_failed).
func (s *Span) EndHook(outcome string, failed bool) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.String(KeyHookOutcome, outcome))
	if failed {
		s.fail("hook_failed")
	}
	s.s.End()
}

// StartAgentStep begins the span of one agent step: a request to the
// model and the tool calls it asked for.
func (tr *Tracing) StartAgentStep(ctx context.Context, step int, model string) (context.Context, *Span) {
	t := tr.tracer()
	if t == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{attribute.Int(KeyAgentStep, step)}
	if model != "" {
		attrs = append(attrs, attribute.String(KeyModel, model))
	}
	return start(ctx, t, "agent step", trace.SpanKindInternal, attrs...)
}

// Usage records the model's token counts and how many tool calls it
// asked for.
func (s *Span) Usage(promptTokens, completionTokens, toolCalls int) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.Int(KeyInputTokens, promptTokens), attribute.Int(KeyOutputTokens, completionTokens),
		attribute.Int(KeyAgentToolCalls, toolCalls))
}
