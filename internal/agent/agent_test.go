package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

const apiKey = "sk-agent-test-SECRET-0123456789"

// fixture is real MCP servers (testserver subprocesses) behind a real
// pool, catalog and execution engine.
type fixture struct {
	cfg  *config.Config
	eng  *toolcall.Engine
	pool *upstream.Pool
	cat  *catalog.Catalog

	// recs are the call records the execution engine made.
	recMu sync.Mutex
	recs  []store.CallRecord
}

// Commit keeps the execution engine's call records (toolcall.Recorder).
func (f *fixture) Commit(_ context.Context, r store.CallRecord) error {
	f.recMu.Lock()
	defer f.recMu.Unlock()
	f.recs = append(f.recs, r)
	return nil
}

// newFixture runs the ok test server as "alpha" and "beta", and a
// disabled "gamma"; change may add servers.
func newFixture(t *testing.T, change func(*config.Config)) *fixture {
	t.Helper()
	gamma := testserver.Server(t, "gamma", "ok")
	gamma.Enabled = false
	cfg := &config.Config{
		Servers: []config.Server{testserver.Server(t, "alpha", "ok"), testserver.Server(t, "beta", "ok"), gamma},
		Defaults: config.Defaults{RequestTimeout: 10 * time.Second, Health: config.Health{PingInterval: time.Hour, PingTimeout: time.Second,
			Backoff: []time.Duration{20 * time.Millisecond}, MaxFailures: 3}},
		Limits: config.Limits{MaxConcurrent: 25, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20},
		LLM:    config.DefaultLLM(),
		Agent:  config.DefaultAgent(),
	}
	if change != nil {
		change(cfg)
	}
	f := &fixture{cfg: cfg}
	var err error
	f.pool, err = upstream.NewPool(upstream.PoolOptions{Config: cfg, OnConnect: func(c *upstream.Client) { f.cat.Connected(c.Server().Name) }})
	if err != nil {
		t.Fatal(err)
	}
	f.cat = catalog.New(catalog.Options{Source: f.pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = f.pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = f.cat.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, s := range cfg.Servers {
		if !s.Enabled {
			continue
		}
		if _, err := f.pool.WaitConnected(context.Background(), s.Name, 30*time.Second); err != nil {
			t.Fatalf("connecting %s: %v", s.Name, err)
		}
		if err := f.cat.Refresh(context.Background(), s.Name); err != nil {
			t.Fatalf("discovering %s: %v", s.Name, err)
		}
	}
	f.eng, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: f.pool, Catalog: f.cat, Recorder: f})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// options returns run options against the scripted endpoint; the tools
// are narrowed to echo, add, fail, image, slow, hold and maxseen so that
// the late-appearing tool does not change what the model is offered.
func (f *fixture) options(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) agent.Options {
	t.Helper()
	cc := llm.Config{BaseURL: srv.URL(), Model: "test-model", APIKey: apiKey}
	if mod != nil {
		mod(&cc)
	}
	client, err := llm.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	return agent.Options{
		Config: f.cfg, Engine: f.eng, Catalog: f.cat, Client: client,
		LLM:          config.LLM{Stream: false, MaxRetries: 2},
		Selection:    agent.Selection{Tools: []string{"*__echo", "*__add", "*__fail", "*__image", "*__slow", "*__hold", "*__maxseen"}},
		Limits:       agent.Limits{MaxSteps: 10},
		Identity:     "tester",
		RetryBackoff: 5 * time.Millisecond,
		StopPoll:     10 * time.Millisecond,
	}
}

// step is how many assistant messages a request carries: 0 for the first
// request of a prompt's run.
func step(req llmtest.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// toolMessages returns the tool messages of a request by call id.
func toolMessages(req llmtest.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Chat {
		if m.Role == llm.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// TestParallelToolCallsAndAnswer: the model asks for two calls at once,
// which run concurrently; it then checks the results it receives and
// answers.
func TestParallelToolCallsAndAnswer(t *testing.T) {
	f := newFixture(t, nil)
	var mu sync.Mutex
	var problems []string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		switch step(req) {
		case 0:
			return llmtest.Response{ToolCalls: []llm.ToolCall{
				call("c1", "alpha__hold", `{"ms": 400}`),
				call("c2", "alpha__hold", `{"ms": 400}`),
				call("c3", "beta__echo", `{"message": "hi there"}`),
			}, PromptTokens: 100, CompletionTokens: 10}
		case 1:
			got := toolMessages(req)
			want := map[string]string{"c1": "held", "c2": "held", "c3": "hi there"}
			if diff := cmp.Diff(want, got); diff != "" {
				mu.Lock()
				problems = append(problems, "tool results (-want +got):\n"+diff)
				mu.Unlock()
			}
			return llmtest.Response{ToolCalls: []llm.ToolCall{call("c4", "alpha__maxseen", `{}`)}, PromptTokens: 200, CompletionTokens: 10}
		default:
			if got := toolMessages(req)["c4"]; got != "2" {
				mu.Lock()
				problems = append(problems, "got maxseen "+got+", want 2 (the two hold calls did not overlap)")
				mu.Unlock()
			}
			return llmtest.Response{Text: "All done.", PromptTokens: 300, CompletionTokens: 5}
		}
	})
	opts := f.options(t, srv, nil)
	var transcript bytes.Buffer
	opts.Transcript = &transcript
	opts.Prompt = "hold twice and echo"
	var text strings.Builder
	opts.OnText = func(s string) { text.WriteString(s) }
	out, err := agent.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	want := &agent.Outcome{Answer: "All done.", Stop: agent.StopAnswered, Steps: 3, ToolCalls: 4, PromptTokens: 600, CompletionTokens: 25}
	if diff := cmp.Diff(want, out, cmp.FilterPath(func(p cmp.Path) bool { return strings.HasPrefix(p.Last().String(), ".Duration") }, cmp.Ignore())); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if got := text.String(); got != "All done." {
		t.Errorf("got text %q, want %q", got, "All done.")
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("got %d requests, want 3", len(reqs))
	}
	var names []string
	for _, fn := range reqs[0].Tools {
		names = append(names, fn.Name)
		if fn.Parameters["type"] != "object" {
			t.Errorf("function %s: got parameters type %v, want object", fn.Name, fn.Parameters["type"])
		}
	}
	wantNames := []string{"alpha__add", "alpha__echo", "alpha__fail", "alpha__hold", "alpha__image", "alpha__maxseen", "alpha__slow",
		"beta__add", "beta__echo", "beta__fail", "beta__hold", "beta__image", "beta__maxseen", "beta__slow"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("functions offered (-want +got):\n%s", diff)
	}
	if reqs[0].APIKey != apiKey {
		t.Errorf("got API key %q, want the configured one", reqs[0].APIKey)
	}
	// The transcript: JSON lines with every message, call, result and
	// token count, and never the API key.
	if strings.Contains(transcript.String(), apiKey) {
		t.Error("the transcript holds the API key")
	}
	counts := map[agent.EventType]int{}
	for _, line := range strings.Split(strings.TrimSpace(transcript.String()), "\n") {
		var ev agent.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		counts[ev.Type]++
	}
	wantCounts := map[agent.EventType]int{agent.EventStart: 1, agent.EventMessage: 5, agent.EventUsage: 3, agent.EventToolCall: 4, agent.EventToolResult: 4, agent.EventEnd: 1}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("transcript events (-want +got):\n%s", diff)
	}
	// The history says which step and which of the model's tool calls
	// made each call, as the transcript names them.
	f.recMu.Lock()
	var origins []string
	for _, r := range f.recs {
		origins = append(origins, r.Origin)
	}
	f.recMu.Unlock()
	slices.Sort(origins)
	wantOrigins := []string{"agent step 1, tool call c1", "agent step 1, tool call c2", "agent step 1, tool call c3", "agent step 2, tool call c4"}
	if diff := cmp.Diff(wantOrigins, origins); diff != "" {
		t.Errorf("origins recorded (-want +got):\n%s", diff)
	}
}

// TestToolErrorsFedBack: an unknown tool, arguments that are not JSON,
// arguments that fail the schema and a tool that reports an error all go
// back to the model as tool messages it can act on.
func TestToolErrorsFedBack(t *testing.T) {
	f := newFixture(t, nil)
	var mu sync.Mutex
	var got map[string]string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if step(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{
				call("unknown", "alpha__ecko", `{"message": "x"}`),
				call("malformed", "alpha__echo", `{"message": "x"`),
				call("schema", "alpha__add", `{"a": "one", "b": 2}`),
				call("failing", "alpha__fail", `{}`),
				call("fine", "alpha__add", `{"a": 1, "b": 2}`),
			}}
		}
		mu.Lock()
		got = toolMessages(req)
		mu.Unlock()
		return llmtest.Response{Text: "corrected"}
	})
	opts := f.options(t, srv, nil)
	opts.Prompt = "go"
	out, err := agent.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopAnswered || out.Answer != "corrected" {
		t.Errorf("got stop %s answer %q, want answered %q", out.Stop, out.Answer, "corrected")
	}
	for id, want := range map[string][]string{
		"unknown":   {"There is no tool named \"alpha__ecko\"", "Did you mean \"alpha__echo\"?", "not_found_error"},
		"malformed": {"The arguments for alpha__echo are not valid JSON", "validation_error"},
		"schema":    {"validation_error", "\"field\":\"a\""},
		"failing":   {"The tool reported an error:", "the gizmo is broken"},
		"fine":      {"3"},
	} {
		for _, w := range want {
			if !strings.Contains(got[id], w) {
				t.Errorf("tool message %s: got %q, want it to contain %q", id, got[id], w)
			}
		}
	}
}

// TestViewRenames: with a view, the model sees and calls tools by the
// names the view gives them, and the calls reach the right tools.
func TestViewRenames(t *testing.T) {
	f := newFixture(t, func(cfg *config.Config) {
		cfg.Gateway.Views = []config.View{{Name: "plain", Servers: []string{"alpha"}, Include: []string{"add"}, Prefix: config.PrefixNever,
			Rename: map[string]string{"add": "sum"}, Descriptions: map[string]string{"add": "Sums two numbers."}}}
	})
	var mu sync.Mutex
	var offered []string
	var got map[string]string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if step(req) == 0 {
			mu.Lock()
			for _, tool := range req.Tools {
				offered = append(offered, tool.Name+": "+tool.Description)
			}
			mu.Unlock()
			return llmtest.Response{ToolCalls: []llm.ToolCall{call("renamed", "sum", `{"a": 2, "b": 3}`), call("old", "alpha__add", `{"a": 1, "b": 1}`)}}
		}
		mu.Lock()
		got = toolMessages(req)
		mu.Unlock()
		return llmtest.Response{Text: "5"}
	})
	opts := f.options(t, srv, nil)
	opts.Selection = agent.Selection{View: "plain"}
	opts.Prompt = "add 2 and 3"
	out, err := agent.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopAnswered || out.Answer != "5" {
		t.Errorf("got stop %s answer %q, want answered %q", out.Stop, out.Answer, "5")
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"sum: Sums two numbers."}, offered); diff != "" {
		t.Errorf("tools offered (-want +got):\n%s", diff)
	}
	if got["renamed"] != "5" {
		t.Errorf("the call of sum: got %q, want alpha's add to answer 5", got["renamed"])
	}
	if !strings.Contains(got["old"], `There is no tool named \"alpha__add\"`) {
		t.Errorf("the call by the name the view replaced: got %q, want no such tool", got["old"])
	}
}

// TestLimits: each limit ends the run with a clear message and whatever
// answer exists.
func TestLimits(t *testing.T) {
	f := newFixture(t, nil)
	// loop always calls echo (with some text), never answering.
	loop := func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "thinking", ToolCalls: []llm.ToolCall{call("c", "alpha__echo", `{"message": "again"}`)}, PromptTokens: 1000, CompletionTokens: 100}
	}
	tests := []struct {
		name      string
		script    func(llmtest.Request) llmtest.Response
		limits    agent.Limits
		prices    [2]float64
		wantStop  agent.Stop
		wantSteps int
		wantCalls int
		wantMsg   string
	}{
		{name: "steps", script: loop, limits: agent.Limits{MaxSteps: 3}, wantStop: agent.StopMaxSteps, wantSteps: 3, wantCalls: 3, wantMsg: "step limit (3"},
		{
			name: "tool calls",
			script: func(req llmtest.Request) llmtest.Response {
				return llmtest.Response{ToolCalls: []llm.ToolCall{call("a", "alpha__echo", `{"message":"1"}`), call("b", "alpha__echo", `{"message":"2"}`), call("c", "alpha__echo", `{"message":"3"}`)}}
			},
			limits: agent.Limits{MaxSteps: 10, MaxToolCalls: 2}, wantStop: agent.StopMaxToolCalls, wantSteps: 1, wantCalls: 2, wantMsg: "tool call limit (2)",
		},
		{name: "tokens", script: loop, limits: agent.Limits{MaxSteps: 10, MaxTokens: 2500}, wantStop: agent.StopMaxTokens, wantSteps: 2, wantCalls: 2, wantMsg: "token limit (2500)"},
		// Free prompts and 100 completion tokens at 1000/1M: 0.1 a step;
		// the third step gets max_tokens 50 but the endpoint overspends.
		{name: "cost", script: loop, limits: agent.Limits{MaxSteps: 10, MaxCost: 0.25}, prices: [2]float64{0, 1000}, wantStop: agent.StopMaxCost, wantSteps: 3, wantCalls: 3, wantMsg: "cost limit (0.25)"},
		{
			name: "time",
			script: func(req llmtest.Request) llmtest.Response {
				return llmtest.Response{Text: "waiting", ToolCalls: []llm.ToolCall{call("s", "alpha__slow", `{"seconds": 30}`)}}
			},
			limits: agent.Limits{MaxSteps: 10, Timeout: 700 * time.Millisecond}, wantStop: agent.StopTimeout, wantSteps: 1, wantCalls: 1, wantMsg: "time limit (700ms)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, tt.script)
			opts := f.options(t, srv, func(c *llm.Config) { c.PromptPrice, c.CompletionPrice = tt.prices[0], tt.prices[1] })
			opts.Limits = tt.limits
			opts.Prompt = "go"
			start := time.Now()
			out, err := agent.Run(context.Background(), opts)
			if err != nil {
				t.Fatalf("got error %v, want a limit", err)
			}
			if out.Stop != tt.wantStop || out.Steps != tt.wantSteps || out.ToolCalls != tt.wantCalls {
				t.Errorf("got stop %s after %d steps and %d calls, want %s after %d and %d", out.Stop, out.Steps, out.ToolCalls, tt.wantStop, tt.wantSteps, tt.wantCalls)
			}
			if !out.LimitHit() || !strings.Contains(out.Message, tt.wantMsg) {
				t.Errorf("got message %q, want one containing %q", out.Message, tt.wantMsg)
			}
			if n := len(srv.Requests()); n != tt.wantSteps {
				t.Errorf("got %d requests, want %d", n, tt.wantSteps)
			}
			if tt.wantStop == agent.StopMaxCost {
				// 0.05 left buys 50 completion tokens at 1000/1M.
				if got := srv.Requests()[2].MaxTokens; got != 50 {
					t.Errorf("got max_tokens %d on the last request, want 50 (what the budget leaves)", got)
				}
			}
			if tt.wantStop == agent.StopTimeout && time.Since(start) > 5*time.Second {
				t.Errorf("the time limit took %s to end the run", time.Since(start))
			}
			if tt.name != "tool calls" && out.Answer == "" {
				t.Error("got no answer, want the last text the model gave")
			}
		})
	}
}

// TestStopSwitch: switchboard stop ends a run while the model thinks.
func TestStopSwitch(t *testing.T) {
	f := newFixture(t, nil)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "too late", Delay: 30 * time.Second}
	})
	opts := f.options(t, srv, nil)
	opts.Prompt = "go"
	done := make(chan struct{})
	var out *agent.Outcome
	var err error
	go func() {
		defer close(done)
		out, err = agent.Run(context.Background(), opts)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the model was never asked")
		}
		time.Sleep(5 * time.Millisecond) // polling, not synchronising
	}
	f.eng.Stop()
	t.Cleanup(f.eng.Resume)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not end after the stop switch")
	}
	if err != nil {
		t.Fatalf("got error %v, want a stop", err)
	}
	if out.Stop != agent.StopStopped || !strings.Contains(out.Message, "switchboard resume") {
		t.Errorf("got stop %s message %q, want stopped with a hint", out.Stop, out.Message)
	}
}

// TestEndpointErrors: 401 fails at once; 429 waits as asked and retries;
// 5xx backs off and retries, both bounded.
func TestEndpointErrors(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		name     string
		answers  []llmtest.Response // by request; the last repeats
		wantReqs int
		wantKind fault.Kind
		wantWait time.Duration // at least, between the first two requests
	}{
		{name: "401", answers: []llmtest.Response{{Status: 401, Text: "bad key " + apiKey}}, wantReqs: 1, wantKind: fault.Authentication},
		{name: "429 then ok", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After-Ms": "300"}}, {Text: "ok"}}, wantReqs: 2, wantWait: 300 * time.Millisecond},
		{name: "429 Retry-After seconds", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After": "1"}}, {Text: "ok"}}, wantReqs: 2, wantWait: time.Second},
		{name: "429 always", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After-Ms": "10"}}}, wantReqs: 3, wantKind: fault.Backend},
		{name: "500 then ok", answers: []llmtest.Response{{Status: 500}, {Status: 503}, {Text: "ok"}}, wantReqs: 3},
		{name: "502 always", answers: []llmtest.Response{{Status: 502}}, wantReqs: 3, wantKind: fault.Backend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
				mu.Lock()
				defer mu.Unlock()
				times = append(times, time.Now())
				return tt.answers[min(len(times)-1, len(tt.answers)-1)]
			})
			opts := f.options(t, srv, nil)
			opts.Prompt = "go"
			var retries int
			opts.OnEvent = func(ev agent.Event) {
				if ev.Type == agent.EventRetry {
					retries++
				}
			}
			out, err := agent.Run(context.Background(), opts)
			if n := len(srv.Requests()); n != tt.wantReqs {
				t.Errorf("got %d requests, want %d", n, tt.wantReqs)
			}
			if retries != tt.wantReqs-1 {
				t.Errorf("got %d retry events, want %d", retries, tt.wantReqs-1)
			}
			if tt.wantKind != "" {
				if k := fault.KindOf(err); k != tt.wantKind {
					t.Fatalf("got error %v (kind %s), want kind %s", err, k, tt.wantKind)
				}
				if strings.Contains(err.Error(), apiKey) {
					t.Errorf("the error shows the API key: %v", err)
				}
				if out == nil || out.Stop != agent.StopError {
					t.Fatalf("got outcome %+v, want one that says error", out)
				}
				// The outcome says what failed, as the error does.
				if want := "failed: " + fault.As(err).Message; out.Message != want {
					t.Errorf("got message %q, want %q", out.Message, want)
				}
				if strings.Contains(out.Message, apiKey) {
					t.Errorf("the message shows the API key: %q", out.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Answer != "ok" {
				t.Errorf("got answer %q, want ok", out.Answer)
			}
			if tt.wantWait > 0 {
				if got := times[1].Sub(times[0]); got < tt.wantWait {
					t.Errorf("got a wait of %s before retrying, want at least %s", got, tt.wantWait)
				}
			}
		})
	}
}

// TestStreaming: a streaming endpoint's text arrives in pieces, its tool
// calls are gathered from their deltas; an endpoint that ignores stream
// is read whole.
func TestStreaming(t *testing.T) {
	f := newFixture(t, nil)
	for _, noStream := range []bool{false, true} {
		srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
			if !req.Stream {
				return llmtest.Response{Status: 400, Text: "expected a streaming request"}
			}
			if step(req) == 0 {
				return llmtest.Response{Text: "Let me check. ", ToolCalls: []llm.ToolCall{call("s1", "beta__add", `{"a": 2, "b": 40}`)}, NoStream: noStream}
			}
			return llmtest.Response{Text: "The answer is " + toolMessages(req)["s1"] + ", as computed by the tool.", NoStream: noStream}
		})
		opts := f.options(t, srv, nil)
		opts.LLM.Stream = true
		opts.Prompt = "add"
		var pieces []string
		opts.OnText = func(s string) { pieces = append(pieces, s) }
		var streamed []bool
		opts.OnEvent = func(ev agent.Event) {
			if ev.Type == agent.EventUsage {
				streamed = append(streamed, ev.Streamed)
			}
		}
		out, err := agent.Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := "The answer is 42, as computed by the tool."; out.Answer != want {
			t.Errorf("noStream=%v: got answer %q, want %q", noStream, out.Answer, want)
		}
		if got, want := strings.Join(pieces, ""), "Let me check. \nThe answer is 42, as computed by the tool."; got != want {
			t.Errorf("noStream=%v: got text %q, want %q", noStream, got, want)
		}
		if wantStreamed := !noStream; len(streamed) != 2 || streamed[0] != wantStreamed {
			t.Errorf("noStream=%v: got streamed %v, want %v twice", noStream, streamed, wantStreamed)
		}
		if !noStream && len(pieces) < 4 {
			t.Errorf("got %d pieces of text, want the answers in several", len(pieces))
		}
	}
}

// TestImages: an image result goes to a vision model as an image part and
// is described to others.
func TestImages(t *testing.T) {
	f := newFixture(t, nil)
	for _, vision := range []bool{true, false} {
		var mu sync.Mutex
		var last llmtest.Request
		srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
			if step(req) == 0 {
				return llmtest.Response{ToolCalls: []llm.ToolCall{call("i1", "alpha__image", `{}`)}}
			}
			mu.Lock()
			last = req
			mu.Unlock()
			return llmtest.Response{Text: "a pixel"}
		})
		opts := f.options(t, srv, nil)
		opts.LLM.Vision = vision
		opts.Prompt = "show"
		if _, err := agent.Run(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		tool := toolMessages(last)["i1"]
		final := last.Chat[len(last.Chat)-1]
		if vision {
			if !strings.Contains(tool, "attached in the next message") {
				t.Errorf("vision: got tool message %q, want a pointer to the image", tool)
			}
			if final.Role != llm.RoleUser || len(final.Images) != 1 || !bytes.Equal(final.Images[0].Data, testserver.PNG) || final.Images[0].MIMEType != "image/png" {
				t.Errorf("vision: got last message %+v, want a user message with the PNG", final)
			}
		} else {
			if !strings.Contains(tool, "does not accept images") {
				t.Errorf("no vision: got tool message %q, want a description", tool)
			}
			if final.Role != llm.RoleTool {
				t.Errorf("no vision: got last message role %s, want tool", final.Role)
			}
		}
	}
}

// TestSessionKeepsHistory: the interactive mode's second prompt carries
// the first exchange.
func TestSessionKeepsHistory(t *testing.T) {
	f := newFixture(t, nil)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "answer " + req.Messages[len(req.Messages)-1].Content}
	})
	opts := f.options(t, srv, nil)
	s, err := agent.NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"one", "two"} {
		out, err := s.Ask(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if out.Answer != "answer "+p {
			t.Errorf("got %q, want %q", out.Answer, "answer "+p)
		}
	}
	var roles []string
	for _, m := range srv.Requests()[1].Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	want := []string{"system:" + agent.DefaultSystemPrompt, "user:one", "assistant:answer one", "user:two"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
}

// TestCancelled: the caller cancelling is an error, not a limit.
func TestCancelled(t *testing.T) {
	f := newFixture(t, nil)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "late", Delay: 30 * time.Second}
	})
	opts := f.options(t, srv, nil)
	opts.Prompt = "go"
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := agent.Run(ctx, opts)
	if k := fault.KindOf(err); k != fault.Cancelled {
		t.Errorf("got error %v (kind %s), want cancelled", err, k)
	}
	opts.Prompt = "  "
	if _, err := agent.Run(context.Background(), opts); fault.KindOf(err) != fault.Validation {
		t.Errorf("empty prompt: got %v, want a validation error", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("got %d requests, want only the cancelled one", n)
	}
}

// TestCostLimitWithoutPrices: a cost limit that can never end a run, as
// no prices are set, is reported when the session is made, naming the keys
// that set prices; with prices, or without a cost limit, nothing is said.
func TestCostLimitWithoutPrices(t *testing.T) {
	f := newFixture(t, nil)
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response { return llmtest.Response{Text: "ok"} })
	for _, tt := range []struct {
		name    string
		maxCost float64
		prices  [2]float64
		want    bool
	}{
		{name: "no prices", maxCost: 0.0001, want: true},
		{name: "completion price", maxCost: 0.0001, prices: [2]float64{0, 2}},
		{name: "prompt price", maxCost: 0.0001, prices: [2]float64{1, 0}},
		{name: "no cost limit", maxCost: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := f.options(t, srv, func(c *llm.Config) { c.PromptPrice, c.CompletionPrice = tt.prices[0], tt.prices[1] })
			opts.Limits.MaxCost = tt.maxCost
			var warnings []string
			opts.OnWarning = func(msg string) { warnings = append(warnings, msg) }
			if _, err := agent.NewSession(opts); err != nil {
				t.Fatal(err)
			}
			if !tt.want {
				if len(warnings) != 0 {
					t.Errorf("got warnings %q, want none", warnings)
				}
				return
			}
			if len(warnings) != 1 {
				t.Fatalf("got warnings %q, want one", warnings)
			}
			for _, w := range []string{"cost limit (0.0001) has no effect", "llm.prompt_price", "llm.completion_price", llm.EnvPromptPrice, llm.EnvCompletionPrice} {
				if !strings.Contains(warnings[0], w) {
					t.Errorf("got warning %q, want it to contain %q", warnings[0], w)
				}
			}
		})
	}
	// Without OnWarning the warning goes to the log.
	var buf bytes.Buffer
	opts := f.options(t, srv, nil)
	opts.Limits.MaxCost = 0.5
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := agent.NewSession(opts); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "cost limit (0.5) has no effect") {
		t.Errorf("got log %q, want a warning about the cost limit", got)
	}
}
