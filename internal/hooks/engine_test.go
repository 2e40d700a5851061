package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// everything is server-everything over stdio; a missing peer fails the
// test with the install hint (make peers).
func everything(t *testing.T) config.Server {
	bin, args := testpeer.EverythingCommand(t)
	return config.Server{Name: "everything", Command: bin, Args: args}
}

// outputText is a run's output as text.
func outputText(r hooks.Run) string { return hooks.Stringify(r.Output) }

// TestMCPActionMappings runs mcp actions against server-everything with
// every mapping source.
func TestMCPActionMappings(t *testing.T) {
	cfg := parseConfig(t, []config.Server{everything(t)}, `hooks:
  - name: mappings
    on: spec.after-plan
    actions:
      - type: mcp
        server: everything
        tool: echo
        params: [{param: message, source: context, value: feature}]
      - type: mcp
        server: everything
        tool: echo
        params: [{param: message, source: literal, value: "just {this}"}]
      - type: mcp
        server: everything
        tool: echo
        params: [{param: message, source: template, value: "{user} plans {feature} on {target|main}"}]
      - type: mcp
        server: everything
        tool: get-sum
        params:
          - {param: a, value: "{count}"}
          - {param: b, value: "{missing|2}"}
`)
	f := newFixture(t, cfg, []string{"everything"}, nil)
	rep, err := f.eng.Fire(context.Background(), "spec.after-plan", map[string]any{"count": json.Number("3")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Echo: 003-user-auth", "Echo: just {this}", "Echo: tester plans 003-user-auth on main", "The sum of 3 and 2 is 5"}
	if len(rep.Runs) != len(want) || rep.Failed || rep.Blocked {
		t.Fatalf("got report %+v, want %d successful runs", rep, len(want))
	}
	for i, w := range want {
		if r := rep.Runs[i]; r.Status != hooks.StatusSuccess || !strings.Contains(outputText(r), w) {
			t.Errorf("run %d: got %s %q (%s), want success containing %q", i, r.Status, outputText(r), r.Error, w)
		}
	}
	recs := f.runs(t, store.HookRunFilter{Hook: "mappings"}, 4)
	var ctx map[string]any
	if err := json.Unmarshal(recs[0].Context, &ctx); err != nil || ctx["feature"] != "003-user-auth" || ctx["event"] != "spec.after-plan" {
		t.Errorf("recorded context: got %s (%v), want the standard context", recs[0].Context, err)
	}
	calls := 0
	for _, r := range recs {
		if r.Status == "success" && r.Action == "mcp everything/echo" {
			calls++
		}
	}
	if calls != 3 {
		t.Errorf("got %d recorded echo runs, want 3", calls)
	}
}

// TestMCPActionTypesTextFields: event fields given as text (hooks fire
// key=value, git) reach a parameter that takes no string as its type when
// they read as one; text that does not is left for validation to refuse.
func TestMCPActionTypesTextFields(t *testing.T) {
	cfg := parseConfig(t, []config.Server{everything(t)}, `hooks:
  - name: sum
    on: numbers.given
    actions:
      - type: mcp
        server: everything
        tool: get-sum
        params:
          - {param: a, value: "{a}"}
          - {param: b, value: "{b}"}
`)
	f := newFixture(t, cfg, []string{"everything"}, nil)
	rep, err := f.eng.Fire(context.Background(), "numbers.given", map[string]any{"a": "4", "b": "-2.5"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Status != hooks.StatusSuccess || !strings.Contains(outputText(rep.Runs[0]), "The sum of 4 and -2.5 is 1.5") {
		t.Fatalf("text numbers: got %+v, want the sum of 4 and -2.5", rep.Runs)
	}
	rep, err = f.eng.Fire(context.Background(), "numbers.given", map[string]any{"a": "four", "b": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Status != hooks.StatusFailure || !strings.Contains(rep.Runs[0].Error, "a: got string, want number") {
		t.Fatalf("text that is no number: got %+v, want a failure naming the parameter and its type", rep.Runs)
	}
}

// TestMCPSchemaValidation checks that mappings to parameters a tool does
// not have, and required parameters left unmapped, make the hook invalid
// once the schema is known, citing file positions.
func TestMCPSchemaValidation(t *testing.T) {
	cfg := parseConfig(t, []config.Server{everything(t)}, `hooks:
  - name: bad-mapping
    on: check.mapping
    actions:
      - type: mcp
        server: everything
        tool: echo
        params: [{param: mesage, value: x}]
  - name: no-such-tool
    on: check.mapping
    actions:
      - {type: mcp, server: everything, tool: ehco}
`)
	f := newFixture(t, cfg, []string{"everything"}, nil)
	list := f.eng.List()
	if len(list) != 2 || list[0].Valid || list[1].Valid {
		t.Fatalf("got %+v, want two invalid hooks", list)
	}
	probs := strings.Join(list[0].Problems, "\n")
	for _, w := range []string{`17:19: tool everything/echo has no parameter "mesage" (it has: message)`, `14:9: required parameter "message" of everything/echo is not mapped`} {
		if !strings.Contains(probs, w) {
			t.Errorf("problems %q: want one containing %q", probs, w)
		}
	}
	if p := strings.Join(list[1].Problems, ""); !strings.Contains(p, `has no tool named "ehco"`) {
		t.Errorf("problems %q: want the unknown tool", p)
	}
	rep, err := f.eng.Fire(context.Background(), "check.mapping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed || len(rep.Runs) != 2 || rep.Runs[0].Status != hooks.StatusFailure || !strings.Contains(rep.Runs[0].Error, "has no parameter") {
		t.Errorf("got %+v, want both hooks failed as invalid", rep)
	}
}

// TestMCPSkipAndTimeout: an unavailable server skips the action without
// failing the hook; a slow tool times out.
func TestMCPSkipAndTimeout(t *testing.T) {
	down := testserver.Server(t, "down", "exit")
	cfg := parseConfig(t, []config.Server{okServer(t, "alpha"), down}, `hooks:
  - name: skip
    on: run.skip
    actions:
      - {type: mcp, server: down, tool: echo, params: [{param: message, value: hi}]}
      - {type: mcp, server: alpha, tool: echo, params: [{param: message, value: after}]}
  - name: slow
    on: run.slow
    actions:
      - {type: mcp, server: alpha, tool: slow, timeout: 1s, params: [{param: seconds, source: literal, value: 10}]}
`)
	f := newFixture(t, cfg, []string{"alpha"}, nil)
	ctx := context.Background()
	rep, err := f.eng.Fire(ctx, "run.skip", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed || len(rep.Runs) != 2 || rep.Runs[0].Status != hooks.StatusSkipped || rep.Runs[1].Status != hooks.StatusSuccess {
		t.Fatalf("got %+v, want skipped then success, not failed", rep)
	}
	if !strings.Contains(rep.Runs[0].Error, "server down is unavailable") {
		t.Errorf("skip reason: got %q, want the server named", rep.Runs[0].Error)
	}
	start := time.Now()
	rep, err = f.eng.Fire(ctx, "run.slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Status != hooks.StatusTimeout || !rep.Failed {
		t.Fatalf("got %+v, want one timeout", rep)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the timeout took %s, want about 1s", d)
	}
	f.runs(t, store.HookRunFilter{Status: "timeout"}, 1)
	f.runs(t, store.HookRunFilter{Status: "skipped"}, 1)
}

// TestGuards runs tool.before guards through a real execution engine.
func TestGuards(t *testing.T) {
	dir := t.TempDir()
	deny := script(t, dir, "deny.sh", `echo '{"decision":"deny","reason":"no echoes today"}'`)
	exit2 := script(t, dir, "exit2.sh", `echo "not on main" >&2; exit 2`)
	rewrite := script(t, dir, "rewrite.sh", `echo '{"arguments":{"message":"rewritten"}}'`)
	crash := script(t, dir, "crash.sh", `echo boom >&2; exit 1`)
	hang := script(t, dir, "hang.sh", `exec sleep 30`)
	allow := script(t, dir, "allow.sh", `cat >/dev/null`)
	tests := []struct {
		name     string
		hook     string
		wantText string // the call's result, when allowed
		wantDeny string // the denial's message, when denied
	}{
		{"allow", fmt.Sprintf("actions: [{type: command, command: [%q]}]", allow), "hello", ""},
		{"deny by decision", fmt.Sprintf("actions: [{type: command, command: [%q]}]", deny), "", "denied by hook guard: no echoes today"},
		{"deny by exit 2", fmt.Sprintf("actions: [{type: command, command: [%q]}]", exit2), "", "denied by hook guard: not on main"},
		{"rewrite", fmt.Sprintf("actions: [{type: command, command: [%q]}]", rewrite), "rewritten", ""},
		{"crash blocks by default", fmt.Sprintf("actions: [{type: command, command: [%q]}]", crash), "", "denied by hook guard: hook guard failed: " + crash + " exited with status 1: boom"},
		{"timeout blocks by default", fmt.Sprintf("actions: [{type: command, timeout: 1s, command: [%q]}]", hang), "", "denied by hook guard: hook guard failed: timed out after 1s"},
		{"crash with on_failure continue", fmt.Sprintf("on_failure: continue\n    actions: [{type: command, command: [%q]}]", crash), "hello", ""},
		{"condition does not match", fmt.Sprintf("if: {tool: add}\n    actions: [{type: command, command: [%q]}]", deny), "hello", ""},
	}
	alpha := echoServer(t, "alpha")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseConfig(t, []config.Server{alpha}, "hooks:\n  - name: guard\n    on: tool.before\n    "+tt.hook+"\n")
			f := newFixture(t, cfg, []string{"alpha"}, nil)
			res, err := f.calls.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "hello"}})
			if tt.wantDeny != "" {
				if err == nil {
					t.Fatalf("got result %v, want denied", res)
				}
				fe := fault.As(err)
				if fe.Kind != fault.Authorization || fe.Message != tt.wantDeny || fe.Details["hook"] != "guard" {
					t.Fatalf("got %s error %q (%v), want authorization %q", fe.Kind, fe.Message, fe.Details, tt.wantDeny)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want allowed", err)
			}
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			if text != tt.wantText {
				t.Errorf("result: got %q, want %q", text, tt.wantText)
			}
		})
	}
}

// TestMergeDeterministic runs guards that finish in every order: the
// merged decision must never change. Each guard waits until the guard
// named in its ".after" file has exited and been reaped, so each run's
// finishing order is the one chosen, however loaded the machine: one run
// per order (the 3! orders of the rewriting guards, each with one of the
// two orders of the denying pair) covers what 100 runs in a random order
// covered by chance.
func TestMergeDeterministic(t *testing.T) {
	dir := t.TempDir()
	file := func(name, ext string) string { return filepath.Join(dir, name+ext) }
	mk := func(name, out string) string {
		// kill -0 succeeds until the process is reaped, which the engine
		// does just before it keeps the guard's outcome.
		return script(t, dir, name+".sh", fmt.Sprintf(`echo $$ > %[1]q
pred=$(cat %[2]q)
if [ -n "$pred" ]; then
  while [ ! -s "%[3]s/$pred.pid" ]; do sleep 0.005; done
  p=$(cat "%[3]s/$pred.pid")
  while kill -0 "$p" 2>/dev/null; do sleep 0.005; done
fi
echo '%[4]s'
`, file(name, ".pid"), file(name, ".after"), dir, out))
	}
	r3 := mk("r3", `{"arguments":{"message":"from-3","third":true}}`)
	r1 := mk("r1", `{"arguments":{"message":"from-1","first":true}}`)
	r2 := mk("r2", `{"arguments":{"message":"from-2","drop":null}}`)
	d5 := mk("d5", `{"decision":"deny","reason":"five"}`)
	d4 := mk("d4", `{"decision":"deny","reason":"four"}`)
	cfg := parseConfig(t, nil, fmt.Sprintf(`hooks:
  - {name: r3, on: tool.before, priority: 3, actions: [{type: command, command: [%q]}]}
  - {name: r1, on: tool.before, priority: 1, actions: [{type: command, command: [%q]}]}
  - {name: r2, on: tool.before, priority: 2, actions: [{type: command, command: [%q]}]}
  - {name: d5, on: tool.before, priority: 5, if: {arguments.mode: deny}, actions: [{type: command, command: [%q]}]}
  - {name: d4, on: tool.before, priority: 4, if: {arguments.mode: deny}, actions: [{type: command, command: [%q]}]}
`, r3, r1, r2, d5, d4))
	f := newFixture(t, cfg, nil, nil)
	want := map[string]any{"message": "from-3", "first": true, "third": true, "mode": "rewrite"}
	// setOrder makes the guards finish in the order given.
	setOrder := func(finishing ...string) {
		for i, name := range finishing {
			pred := ""
			if i > 0 {
				pred = finishing[i-1]
			}
			if err := os.Remove(file(name, ".pid")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if err := os.WriteFile(file(name, ".after"), []byte(pred), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	orders := [][]string{{"r1", "r2", "r3"}, {"r1", "r3", "r2"}, {"r2", "r1", "r3"}, {"r2", "r3", "r1"}, {"r3", "r1", "r2"}, {"r3", "r2", "r1"}}
	for i, order := range orders {
		setOrder(order...)
		args, err := f.eng.Before(context.Background(), &toolcall.Request{Server: "s", Tool: "t", Arguments: map[string]any{"mode": "rewrite", "drop": 1}})
		if err != nil {
			t.Fatalf("finishing %v: %v", order, err)
		}
		if fmt.Sprint(args) != fmt.Sprint(want) {
			t.Fatalf("finishing %v: got %v, want %v", order, args, want)
		}
		denials := []string{"d4", "d5"}
		if i%2 == 1 {
			denials = []string{"d5", "d4"}
		}
		setOrder(append(denials, order...)...)
		_, err = f.eng.Before(context.Background(), &toolcall.Request{Server: "s", Tool: "t", Arguments: map[string]any{"mode": "deny"}})
		if fe := fault.As(err); fe == nil || fe.Message != "denied by hook d4: four" {
			t.Fatalf("finishing %v then %v: got %v, want the priority-4 denial", denials, order, err)
		}
	}
}

// TestBurst fires 1,000 events at a pool of 5 whose workers are held:
// every event is accounted for (success or rejected), the queue stays
// bounded and no more than 5 run at once.
func TestBurst(t *testing.T) {
	var inFlight, maxSeen, served atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			m := maxSeen.Load()
			if n <= m || maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		<-release
		inFlight.Add(-1)
		served.Add(1)
	}))
	defer srv.Close()
	cfg := parseConfig(t, nil, fmt.Sprintf(`hook_settings: {max_concurrent: 5, queue_size: 100}
hooks:
  - {name: sink, on: burst.event, actions: [{type: http, url: %q}]}
`, srv.URL))
	f := newFixture(t, cfg, nil, nil)
	for i := range 1000 {
		if _, err := f.eng.Emit(context.Background(), "burst.event", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			waitFor(t, 10*time.Second, "the first request", func() bool { return inFlight.Load() == 1 })
		}
	}
	if got := f.eng.QueueLen(); got > 100 {
		t.Errorf("queue length: got %d, want at most 100", got)
	}
	close(release)
	recs := f.runs(t, store.HookRunFilter{Hook: "sink"}, 1000)
	counts := map[string]int{}
	for _, r := range recs {
		counts[r.Status]++
	}
	if len(recs) != 1000 || counts["success"]+counts["rejected"] != 1000 {
		t.Fatalf("got %d runs %v, want 1000, each success or rejected", len(recs), counts)
	}
	if counts["rejected"] < 1000-105 || counts["success"] > 105 || int64(counts["success"]) != served.Load() {
		t.Errorf("got %v (%d served), want at most 105 run (5 workers + 100 queued) and the rest rejected", counts, served.Load())
	}
	if m := maxSeen.Load(); m > 5 {
		t.Errorf("max in flight: got %d, want at most 5", m)
	}
}

// TestChainLimits checks the depth limit and cycle detection.
func TestChainLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("hooks:\n  - {name: ping, on: a.ping, actions: [{type: event, event: b.pong}]}\n")
	b.WriteString("  - {name: pong, on: b.pong, actions: [{type: event, event: a.ping}]}\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "  - {name: step%d, on: chain.%d, actions: [{type: event, event: chain.%d}]}\n", i, i, i+1)
	}
	f := engineOnly(t, b.String(), nil)
	ctx := context.Background()
	if _, err := f.eng.Emit(ctx, "a.ping", nil); err != nil {
		t.Fatal(err)
	}
	rej := f.runs(t, store.HookRunFilter{Hook: "ping", Status: "rejected"}, 1)
	if want := "cycle: a.ping/ping → b.pong/pong → a.ping/ping"; rej[0].Error != want || rej[0].Depth != 3 {
		t.Errorf("cycle: got %q at depth %d, want %q at depth 3", rej[0].Error, rej[0].Depth, want)
	}

	if _, err := f.eng.Emit(ctx, "chain.1", nil); err != nil {
		t.Fatal(err)
	}
	rej = f.runs(t, store.HookRunFilter{Hook: "step11"}, 1)
	if rej[0].Status != "rejected" || !strings.HasPrefix(rej[0].Error, "chain depth limit 10 reached") || rej[0].Depth != 11 {
		t.Errorf("depth: got %s %q at depth %d, want rejected at depth 11", rej[0].Status, rej[0].Error, rej[0].Depth)
	}
	ok := f.runs(t, store.HookRunFilter{Hook: "step10"}, 1)
	if ok[0].Status != "success" || ok[0].ChainID != rej[0].ChainID {
		t.Errorf("step10: got %+v, want success in the same chain", ok[0])
	}
	if got, _ := f.st.HookRuns(ctx, store.HookRunFilter{Hook: "step12"}); len(got) != 0 {
		t.Errorf("step12: got %d runs, want none", len(got))
	}
}

// TestToolHooksOwnCalls: a tool.after hook whose action calls a tool does
// not trigger itself forever; its own call is refused as a cycle.
func TestToolHooksOwnCalls(t *testing.T) {
	cfg := parseConfig(t, []config.Server{okServer(t, "alpha")}, `hooks:
  - name: log
    on: tool.after
    actions:
      - {type: mcp, server: alpha, tool: echo, params: [{param: message, value: "logged {tool}"}]}
`)
	f := newFixture(t, cfg, []string{"alpha"}, nil)
	if _, err := f.calls.Call(context.Background(), toolcall.Request{Server: "alpha", Tool: "add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil {
		t.Fatal(err)
	}
	runs := f.runs(t, store.HookRunFilter{Hook: "log"}, 2)
	var statuses []string
	for _, r := range runs {
		statuses = append(statuses, r.Status)
	}
	if len(runs) != 2 || runs[0].Status != "rejected" || runs[1].Status != "success" || !strings.HasPrefix(runs[0].Error, "cycle:") {
		t.Errorf("got %v, want one success then one cycle rejection", statuses)
	}
	// The history says which hook, on which event, made the hook's call.
	var origins []string
	for _, r := range f.records() {
		if r.Source == string(toolcall.SourceHook) {
			origins = append(origins, r.Origin)
		}
	}
	want := fmt.Sprintf("hook log on tool.after (event %s)", runs[1].EventID)
	if len(origins) != 1 || origins[0] != want {
		t.Errorf("origins of the hook's calls: got %q, want [%q]", origins, want)
	}
}

// TestAfterAsync checks tool.after and tool.failed fire without blocking
// the caller and carry the call's details.
func TestAfterAsync(t *testing.T) {
	var mu sync.Mutex
	got := map[string]map[string]any{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got[body["event"].(string)] = body
		mu.Unlock()
	}))
	defer srv.Close()
	cfg := parseConfig(t, []config.Server{okServer(t, "alpha")}, fmt.Sprintf(`hooks:
  - {name: seen, on: "tool.*", if: {event: {glob: "tool.[af]*"}}, actions: [{type: http, url: %q}]}
`, srv.URL))
	f := newFixture(t, cfg, []string{"alpha"}, nil)
	ctx := context.Background()
	if _, err := f.calls.Call(ctx, toolcall.Request{Server: "alpha", Tool: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		t.Fatal(err)
	}
	if res, err := f.calls.Call(ctx, toolcall.Request{Server: "alpha", Tool: "fail"}); err != nil || !res.IsError {
		t.Fatalf("fail: got %v, %v, want a tool error", res, err)
	}
	waitFor(t, 10*time.Second, "both events", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if a := got["tool.after"]; a["tool"] != "echo" || a["result"] != "hi" || a["status"] != "success" {
		t.Errorf("tool.after: got %v", a)
	}
	if fl := got["tool.failed"]; fl["tool"] != "fail" || !strings.Contains(fmt.Sprint(fl["error"]), "gizmo") {
		t.Errorf("tool.failed: got %v", fl)
	}
}

// TestDryRun reports resolved parameters without running anything.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	marker := dir + "/ran"
	f := engineOnly(t, fmt.Sprintf(`hooks:
  - name: plan
    on: spec.after-plan
    actions:
      - {type: command, command: [touch, %q, "{feature}"]}
      - {type: event, event: review.requested, fields: [{field: n, value: "{n}"}, {field: who, value: "{user}"}]}
      - {type: agent, prompt: "Review {missing}"}
`, marker), nil)
	rep, err := f.eng.DryRun(context.Background(), "spec.after-plan", map[string]any{"n": 7.0})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("got %d runs, want 3", len(rep.Runs))
	}
	if got := fmt.Sprint(rep.Runs[0].Params["command"]); got != fmt.Sprintf("[touch %s 003-user-auth]", marker) || rep.Runs[0].Status != hooks.StatusPlanned {
		t.Errorf("command: got %s %s", rep.Runs[0].Status, got)
	}
	if got := rep.Runs[1].Params["fields"].(map[string]any); got["n"] != 7.0 || got["who"] != "tester" {
		t.Errorf("event fields: got %v, want n kept as a number", got)
	}
	if r := rep.Runs[2]; r.Status != hooks.StatusFailure || !strings.Contains(r.Error, `no field "missing"`) || !rep.Failed {
		t.Errorf("agent: got %+v, want the missing field reported", r)
	}
	if _, err := f.st.HookRuns(context.Background(), store.HookRunFilter{}); err != nil {
		t.Fatal(err)
	}
	if err := f.eng.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.st.HookRuns(context.Background(), store.HookRunFilter{}); len(got) != 0 {
		t.Errorf("dry run recorded %d runs, want none", len(got))
	}
}
