package telemetry_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/telemetry/telemetrytest"
)

// TestTracingsKeepTheirSpansApart: two Tracings in one process (two
// daemons) each send their spans to their own provider; a span begun in
// another span (an upstream request, a hook carried to another
// goroutine) follows the provider of that span, and a Tracing with none
// in force traces nothing, whatever the other has.
func TestTracingsKeepTheirSpansApart(t *testing.T) {
	t.Parallel()
	newProvider := func(rcv *telemetrytest.Receiver) *telemetry.Provider {
		p, err := telemetry.New(context.Background(), config.Telemetry{Enabled: ptr(true), Endpoint: rcv.URL},
			telemetry.Options{Getenv: envOf(nil)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	rcvA, rcvB := telemetrytest.NewHTTP(t), telemetrytest.NewHTTP(t)
	a, b, off := telemetry.NewTracing(), telemetry.NewTracing(), telemetry.NewTracing()
	a.Use(newProvider(rcvA))
	b.Use(newProvider(rcvB))

	ctx, call := a.StartCall(context.Background(), telemetry.Call{ID: "a1", Server: "srv", Tool: "echo"})
	params := telemetry.CallParams(ctx, &mcp.CallToolParams{Name: "echo"})
	if params.Meta[telemetry.MetaTraceparent] == nil {
		t.Error("a call in a's trace sent no traceparent upstream")
	}
	_, up := telemetry.StartClient(ctx, "srv", "tools/call", "echo", "")
	up.End(nil)
	hookCtx, hook := b.StartHook(telemetry.Carry(ctx).Into(context.Background()), "tool.before", "audit")
	hook.EndHook("allow", false)
	call.End(nil)
	if _, s := off.StartCall(hookCtx, telemetry.Call{ID: "off1", Server: "srv", Tool: "echo"}); s != nil {
		t.Error("a Tracing with no provider in force began a span")
	}
	if off.Enabled() || !a.Enabled() {
		t.Errorf("Enabled: off %v, a %v; want false, true", off.Enabled(), a.Enabled())
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}

	var namesA, namesB []string
	for _, s := range rcvA.Spans() {
		namesA = append(namesA, s.Name)
	}
	for _, s := range rcvB.Spans() {
		namesB = append(namesB, s.Name)
	}
	if len(namesA) != 2 {
		t.Errorf("a's receiver got %q, want the call's and its upstream request's spans only", namesA)
	}
	if len(namesB) != 1 || namesB[0] != "hook audit" {
		t.Errorf("b's receiver got %q, want the hook's span only", namesB)
	}
	eng, _ := telemetrytest.Find(rcvA.Spans(), "execute_tool echo")
	hk, _ := telemetrytest.Find(rcvB.Spans(), "hook audit")
	if hk.TraceID != eng.TraceID || hk.ParentID != eng.SpanID {
		t.Errorf("the hook's span %+v does not continue the call's trace %+v", hk, eng)
	}
}
