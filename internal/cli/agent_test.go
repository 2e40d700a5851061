package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

const agentKey = "sk-cli-agent-SECRET-42"

// agentConfig writes a configuration with servers alpha and beta (the ok
// test server, over HTTP in this process), an llm: block pointing at srv and the given agent: block,
// and clears the LLM environment variables.
func agentConfig(t *testing.T, srv *llmtest.Server, agentBlock string) string {
	t.Helper()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	for _, k := range []string{llm.EnvBaseURL, llm.EnvModel, llm.EnvAPIKey, llm.EnvPromptPrice, llm.EnvCompletionPrice, llm.EnvTimeout, llm.EnvOpenAIAPIKey, llm.EnvOpenAIBaseURL} {
		setenv(t, k, "")
	}
	setenv(t, "CLI_AGENT_KEY", agentKey)
	exe := testserver.Command(t)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  connect_timeout: 10s\n  request_timeout: 10s\n")
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\n", exe)
	fmt.Fprintf(&b, "llm:\n  base_url: %s\n  model: test-model\n  api_key_env: CLI_AGENT_KEY\n  stream: true\n  max_retries: 0\n", srv.URL())
	b.WriteString(agentBlock)
	// alpha and beta are served in this process: the agent tests are about
	// the agent's loop, and each agent run connects its servers again
	// (two race-built stdio children per run cost the tests ~0.3 s CPU a
	// run). The security block stays for tests that swap in a stdio server.
	b.WriteString("servers:\n")
	b.WriteString(httpServersYAML(t, "alpha", "beta"))
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assistantTurns counts the assistant messages of a request.
func assistantTurns(req llmtest.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

func TestAgentCommand(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var echoed string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if assistantTurns(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "alpha__echo", Arguments: `{"message": "hello from the tool"}`}}}
		}
		for _, m := range req.Chat {
			if m.Role == llm.RoleTool && m.ToolCallID == "c1" {
				mu.Lock()
				echoed = m.Content
				mu.Unlock()
			}
		}
		return llmtest.Response{Text: "The tool said: hello from the tool"}
	})
	cfg := agentConfig(t, srv, "")
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	r := runCLI(t, "agent", "--config", cfg, "--transcript", transcript, "--tools", "*__echo", "please", "echo")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "The tool said: hello from the tool\n")
	if echoed != "hello from the tool" {
		t.Errorf("got tool result %q sent to the model, want the echo", echoed)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2", len(reqs))
	}
	if !reqs[0].Stream || reqs[0].APIKey != agentKey {
		t.Errorf("got stream %v key %q, want a streaming request with the configured key", reqs[0].Stream, reqs[0].APIKey)
	}
	if got := reqs[0].Messages[1].Content; got != "please echo" {
		t.Errorf("got prompt %q, want %q", got, "please echo")
	}
	var names []string
	for _, f := range reqs[0].Tools {
		names = append(names, f.Name)
	}
	if want := []string{"alpha__echo", "beta__echo"}; !slices.Equal(names, want) {
		t.Errorf("got tools %v, want %v", names, want)
	}
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data)+r.stdout+r.stderr, agentKey) {
		t.Error("the API key was written out")
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("transcript line %q: %v", line, err)
		}
		types = append(types, ev.Type)
	}
	want := []string{"start", "message", "message", "usage", "message", "tool_call", "tool_result", "usage", "message", "end"}
	if !slices.Equal(types, want) {
		t.Errorf("got transcript %v, want %v", types, want)
	}

	// --json prints the outcome for scripts.
	r = runCLI(t, "agent", "--config", cfg, "--json", "--servers", "beta", "again")
	wantCode(t, r, ExitOK)
	var out struct {
		Answer    string `json:"answer"`
		Stop      string `json:"stop"`
		ToolCalls int    `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	// alpha__echo is not offered with --servers beta: the model is told.
	if out.Stop != "answered" || out.ToolCalls != 1 {
		t.Errorf("got %+v, want answered after one call", out)
	}
}

func TestAgentLimitExitsOne(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "still working", ToolCalls: []llm.ToolCall{{ID: "c", Name: "beta__echo", Arguments: `{"message": "x"}`}}}
	})
	cfg := agentConfig(t, srv, "agent:\n  max_steps: 2\n")
	r := runCLI(t, "agent", "--config", cfg, "loop")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stdout", r.stdout, "still working")
	wantContains(t, "stderr", r.stderr, "step limit (2 requests", "agent.max_steps")
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("got %d requests, want 2", n)
	}
	// A flag overrides the block.
	r = runCLI(t, "agent", "--config", cfg, "--max-steps", "1", "loop")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "step limit (1 requests")
}

func TestAgentSectionBinding(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var offered []string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		mu.Lock()
		defer mu.Unlock()
		offered = nil
		for _, f := range req.Tools {
			offered = append(offered, f.Name)
		}
		return llmtest.Response{Text: "sunny"}
	})
	cfg := agentConfig(t, srv, "")
	doc := filepath.Join(t.TempDir(), "notes.md")
	md := "---\nswitchboard:\n  bindings:\n    - heading: \"## Weather\"\n      server: beta\n---\n# Notes\n\n## Weather\n\nIt rains.\n\n## Other\n"
	if err := os.WriteFile(doc, []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "agent", "--config", cfg, "--doc", doc, "--section", "## Weather", "--tools", "*__echo,*__add", "weather?")
	wantCode(t, r, ExitOK)
	wantContains(t, "stderr", r.stderr, "uses server beta")
	if want := []string{"beta__add", "beta__echo"}; !slices.Equal(offered, want) {
		t.Errorf("got tools %v, want only beta's %v", offered, want)
	}
	r = runCLI(t, "agent", "--config", cfg, "--doc", doc, "--section", "## Wether", "weather?")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "no section")
}

func TestAgentEndpointRejectsKey(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Status: 401, Text: "Incorrect API key provided: " + agentKey}
	})
	cfg := agentConfig(t, srv, "")
	r := runCLI(t, "agent", "--config", cfg, "hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "rejected the API key (HTTP 401)")
	if strings.Contains(r.stderr, agentKey) {
		t.Errorf("stderr shows the key:\n%s", r.stderr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("got %d requests, want 1 (no retry on 401)", n)
	}

	// --json: the outcome says the run failed and what failed.
	r = runCLI(t, "agent", "--config", cfg, "--json", "hi")
	wantCode(t, r, ExitFailure)
	var out struct {
		Stop    string  `json:"stop"`
		Message *string `json:"message"`
		Steps   int     `json:"steps"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if out.Stop != "error" || out.Message == nil || !strings.Contains(*out.Message, "rejected the API key (HTTP 401)") || out.Steps != 1 {
		t.Errorf("got %s, want stop error, one step and a message saying the key was rejected", r.stdout)
	}
	if strings.Contains(r.stdout, agentKey) {
		t.Errorf("stdout shows the key:\n%s", r.stdout)
	}
}

// TestAgentLimitFlagsMatchConfig: a limit flag out of range gets the
// message of the agent: key it overrides, and in range it overrides it.
func TestAgentLimitFlagsMatchConfig(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "still working", ToolCalls: []llm.ToolCall{{ID: "c", Name: "beta__echo", Arguments: `{"message": "x"}`}}}
	})
	for _, tt := range []struct {
		key, flag, value string
	}{
		{"timeout", "--timeout", "25h"},
		{"timeout", "--timeout", "-5s"},
		{"max_steps", "--max-steps", "0"},
		{"max_steps", "--max-steps", "1001"},
		{"max_tool_calls", "--max-tool-calls", "-1"},
	} {
		cfg := agentConfig(t, srv, fmt.Sprintf("agent:\n  %s: %s\n", tt.key, tt.value))
		r := runCLI(t, "agent", "--config", cfg, "hi")
		wantCode(t, r, ExitFailure)
		_, fromConfig, ok := strings.Cut(r.stderr, "agent."+tt.key+": ")
		if !ok {
			t.Fatalf("agent.%s: %s: got %q, want an error naming the key", tt.key, tt.value, r.stderr)
		}
		fromConfig = strings.TrimSpace(strings.SplitN(fromConfig, "\n", 2)[0])
		good := agentConfig(t, srv, "")
		r = runCLI(t, "agent", "--config", good, tt.flag, tt.value, "hi")
		wantCode(t, r, ExitUsage)
		if want := tt.flag + ": " + fromConfig; !strings.Contains(r.stderr, want) {
			t.Errorf("%s %s: got %q, want %q as the configuration says", tt.flag, tt.value, r.stderr, want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("got %d requests, want none", n)
	}
	// In range, --max-steps 1 and --timeout 0 (no time limit) override the
	// block's values.
	cfg := agentConfig(t, srv, "agent:\n  max_steps: 5\n  timeout: 1ms\n")
	r := runCLI(t, "agent", "--config", cfg, "--max-steps", "1", "--timeout", "0", "loop")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "step limit (1 requests")
}

// TestAgentCostLimitWithoutPrices: a cost limit without prices is accepted
// with a warning naming the keys that set prices.
func TestAgentCostLimitWithoutPrices(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response { return llmtest.Response{Text: "done"} })
	cfg := agentConfig(t, srv, "")
	r := runCLI(t, "agent", "--config", cfg, "--max-cost", "0.0001", "hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "stderr", r.stderr, "switchboard agent: warning: the cost limit (0.0001) has no effect",
		"llm.prompt_price", "llm.completion_price", llm.EnvPromptPrice, llm.EnvCompletionPrice)
	// From the agent: block too.
	cfg = agentConfig(t, srv, "agent:\n  max_cost: 0.5\n")
	r = runCLI(t, "agent", "--config", cfg, "hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "stderr", r.stderr, "the cost limit (0.5) has no effect")
	// With a price the limit works: no warning.
	setenv(t, llm.EnvCompletionPrice, "2")
	r = runCLI(t, "agent", "--config", cfg, "hi")
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "no effect") {
		t.Errorf("got a warning with a completion price set:\n%s", r.stderr)
	}
}

func TestAgentInteractive(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: fmt.Sprintf("answer %d to %s", len(req.Messages), req.Messages[len(req.Messages)-1].Content)}
	})
	cfg := agentConfig(t, srv, "")
	r := runCLIInput(t, context.Background(), strings.NewReader("first\n\nsecond\nexit\nnever\n"), "agent", "--config", cfg, "-i")
	wantCode(t, r, ExitOK)
	// The second prompt carries the first exchange: system, user,
	// assistant, user.
	wantContains(t, "stdout", r.stdout, "answer 2 to first\n", "answer 4 to second\n")
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("got %d requests, want 2", n)
	}
}

func TestAgentUsage(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response { return llmtest.Response{Text: "x"} })
	cfg := agentConfig(t, srv, "")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{args: []string{}, code: ExitUsage, want: "missing PROMPT"},
		{args: []string{"--doc", "x.md", "hi"}, code: ExitUsage, want: "--doc and --section go together"},
		{args: []string{"-i", "hi"}, code: ExitUsage, want: "not both"},
		{args: []string{"--servers", "alpah", "hi"}, code: ExitUsage, want: `unknown server "alpah"`},
		{args: []string{"--tools", "[", "hi"}, code: ExitUsage, want: "invalid pattern"},
		{args: []string{"--view", "nope", "hi"}, code: ExitUsage, want: `no gateway view named "nope"`},
		{args: []string{"--base-url", "ftp://x", "hi"}, code: ExitUsage, want: "--base-url must be an http or https URL"},
		// The limit flags get the ranges of the agent: keys.
		{args: []string{"--timeout", "25h", "hi"}, code: ExitUsage, want: "--timeout: 25h is out of range; use a value up to 24h, or 0 for no time limit (the default is 5m)"},
		{args: []string{"--timeout", "-5s", "hi"}, code: ExitUsage, want: "--timeout: -5s is out of range; use a value up to 24h"},
		{args: []string{"--max-steps", "0", "hi"}, code: ExitUsage, want: "--max-steps: 0 is out of range; use 1 to 1000 (the default is 10)"},
		{args: []string{"--max-steps", "1001", "hi"}, code: ExitUsage, want: "--max-steps: 1001 is out of range; use 1 to 1000 (the default is 10)"},
		{args: []string{"--max-tool-calls", "-1", "hi"}, code: ExitUsage, want: "--max-tool-calls: -1 is out of range; use 0 to 2147483647 (the default is 50)"},
		{args: []string{"--max-tokens", "3000000000", "hi"}, code: ExitUsage, want: "--max-tokens: 3000000000 is out of range; use 0 to 2147483647 (the default is 0)"},
		{args: []string{"--max-cost", "-1", "hi"}, code: ExitUsage, want: "--max-cost: must not be negative, not -1; write a number such as 0.15"},
		{args: []string{"--max-cost", "NaN", "hi"}, code: ExitUsage, want: "--max-cost: NaN is not a usable number; write a number such as 0.15"},
	} {
		r := runCLIInput(t, context.Background(), strings.NewReader(""), append([]string{"agent", "--config", cfg}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("agent %v: got exit %d and %q, want %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("got %d requests, want none", n)
	}
	// No model anywhere: a configuration error naming the fixes.
	setenv(t, "CLI_AGENT_KEY", "")
	r := runCLI(t, "agent", "--config", cfg, "hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "CLI_AGENT_KEY")
}

// TestAgentWithoutAModel: with no model anywhere, agent says where to set
// one, its own --model and --base-url flags among them (call, whose
// sampling reads the same settings, has no such flags and does not say
// them: TestSamplingWithTheTSExample).
func TestAgentWithoutAModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response { return llmtest.Response{Text: "x"} })
	cfg := agentConfig(t, srv, "")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), "  model: test-model\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "agent", "--config", cfg, "hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "no model", r.stderr, "no language model is configured", "hint: set llm.model (and llm.base_url) in the configuration",
		"hint: or set SWITCHBOARD_LLM_MODEL (and SWITCHBOARD_LLM_BASE_URL)", "hint: or pass --model and --base-url")
}
