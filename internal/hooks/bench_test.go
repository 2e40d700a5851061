package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// discardStore records nothing, so that a benchmark measures dispatch and
// not SQLite.
type discardStore struct{ store.Store }

func (discardStore) RecordHookRuns(context.Context, []store.HookRun) error { return nil }
func (discardStore) PruneHookRuns(context.Context, int) (int64, error)     { return 0, nil }

// benchEngine has n hooks: one on bench.event with a condition and an mcp
// action with three mappings, every 20th a glob, the rest on other events
// (none on tool.*).
func benchEngine(b *testing.B, n int) *hooks.Engine {
	var sb strings.Builder
	sb.WriteString(`hooks:
  - name: target
    on: bench.event
    if: {feature: {glob: "0*-*"}}
    actions:
      - type: mcp
        server: s
        tool: create_issue
        params:
          - {param: title, value: "Plan for {feature} by {user}"}
          - {param: count, value: "{count}"}
          - {param: labels, source: literal, value: [plan]}
`)
	for i := 1; i < n; i++ {
		on := fmt.Sprintf("bench.other.%d", i)
		if i%20 == 0 {
			on = fmt.Sprintf("glob%d.*", i)
		}
		fmt.Fprintf(&sb, "  - {name: h%d, on: %q, actions: [{type: event, event: sink.x}]}\n", i, on)
	}
	cfg := parseConfig(b, []config.Server{okServer(b, "s")}, sb.String())
	e, err := hooks.New(hooks.Options{Config: cfg, Describe: fakeDescribe, Dir: b.TempDir(), Store: discardStore{}})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkDispatch is the overhead of one event at 1,000 configured
// hooks: standard context, matching (name and condition), mapping the
// matched hook's parameters, queueing and recording its run — the action
// itself excluded.
func BenchmarkDispatch(b *testing.B) {
	e := benchEngine(b, 1000)
	ctx := context.Background()
	fields := map[string]any{"count": json.Number("3"), "note": "benchmark"}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		args, err := e.DispatchInline(ctx, "bench.event", fields)
		if err != nil || len(args) != 1 || args[0]["count"] != json.Number("3") {
			b.Fatalf("got %v, %v; want the one matched action's arguments, count 3", args, err)
		}
	}
	b.StopTimer()
	_ = e.FlushRuns(ctx)
}

// BenchmarkDispatchMiss is an event no hook matches, at 1,000 hooks.
func BenchmarkDispatchMiss(b *testing.B) {
	e := benchEngine(b, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Emit(ctx, "nothing.here", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInterceptNoToolHooks is what Before and After cost a tool call
// when, of 1,000 hooks, none is on tool.*: the gateway's per-call budget.
func BenchmarkInterceptNoToolHooks(b *testing.B) {
	e := benchEngine(b, 1000)
	ctx := context.Background()
	req := &toolcall.Request{Server: "s", Tool: "t", Arguments: map[string]any{"a": 1}}
	res := &toolcall.Result{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if args, err := e.Before(ctx, req); args != nil || err != nil {
			b.Fatal(args, err)
		}
		e.After(ctx, req, res, nil)
	}
}
