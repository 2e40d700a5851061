package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// agentServers is the start of every file below: two servers.
const agentServers = "servers:\n  - name: alpha\n    command: npx\n  - name: beta\n    command: npx\n"

func TestLLMAndAgentBlocks(t *testing.T) {
	src := agentServers + `llm:
  base_url: http://127.0.0.1:11434/v1
  model: llama3.2
  api_key_env: API_KEY
  prompt_price: 0.15
  completion_price: 2
  timeout: 90s
  vision: true
  stream: false
  max_retries: 5
agent:
  max_steps: 20
  max_tool_calls: 0
  max_tokens: 100000
  max_cost: 0.5
  timeout: 10m
  system_prompt: Be brief.
  servers: [beta]
  tools: ["beta__*"]
  elicitation: accept-defaults
`
	cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	wantLLM := config.LLM{BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2", APIKeyEnv: "API_KEY", PromptPrice: 0.15, CompletionPrice: 2,
		Timeout: 90 * time.Second, Vision: true, Stream: false, MaxRetries: 5, Pos: config.Pos{File: "sb.yaml", Line: 6, Col: 1}}
	if diff := cmp.Diff(wantLLM, cfg.LLM); diff != "" {
		t.Errorf("llm (-want +got):\n%s", diff)
	}
	wantAgent := config.Agent{MaxSteps: 20, MaxToolCalls: 0, MaxTokens: 100000, MaxCost: 0.5, Timeout: 10 * time.Minute, SystemPrompt: "Be brief.",
		Servers: []string{"beta"}, Tools: []string{"beta__*"}, Elicitation: config.AgentElicitDefaults, Pos: config.Pos{File: "sb.yaml", Line: 16, Col: 1}}
	if diff := cmp.Diff(wantAgent, cfg.Agent); diff != "" {
		t.Errorf("agent (-want +got):\n%s", diff)
	}

	// config show writes both blocks, never a key, and reads back the same.
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "key_secret") {
		t.Errorf("the output holds the API key:\n%s", out)
	}
	again, err := config.Parse("sb.yaml", out, config.TestOpts)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	noPos := cmp.Transformer("nopos", func(p config.Pos) config.Pos { return config.Pos{} })
	if diff := cmp.Diff(cfg.LLM, again.LLM, noPos); diff != "" {
		t.Errorf("llm read back (-want +got):\n%s\n%s", diff, out)
	}
	if diff := cmp.Diff(cfg.Agent, again.Agent, noPos); diff != "" {
		t.Errorf("agent read back (-want +got):\n%s\n%s", diff, out)
	}
}

func TestLLMAndAgentDefaults(t *testing.T) {
	for _, src := range []string{agentServers, agentServers + "llm:\nagent:\n"} {
		cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
		if err != nil {
			t.Fatal(err)
		}
		l, a := cfg.LLM, cfg.Agent
		l.Pos, a.Pos = config.Pos{}, config.Pos{}
		if diff := cmp.Diff(config.DefaultLLM(), l); diff != "" {
			t.Errorf("llm (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(config.DefaultAgent(), a); diff != "" {
			t.Errorf("agent (-want +got):\n%s", diff)
		}
		if a.MaxSteps != 10 || !l.Stream || l.MaxRetries != 3 || a.Timeout != 5*time.Minute {
			t.Errorf("got defaults %+v %+v, want 10 steps, streaming, 3 retries, 5m", a, l)
		}
		out, err := config.MarshalResolved(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "llm:") || strings.Contains(string(out), "agent:") {
			t.Errorf("defaults are written out:\n%s", out)
		}
	}
}

func TestLLMAndAgentProblems(t *testing.T) {
	tests := []problemCase{
		{
			name: "not mappings",
			src:  "llm: [a]\nagent: 3\n",
			want: []string{"sb.yaml:6:6: llm: must be a mapping, not a list", "sb.yaml:7:8: agent: must be a mapping, not a number"},
		},
		{
			name: "unknown keys",
			src:  "llm:\n  modle: x\nagent:\n  max_step: 3\n",
			want: []string{
				`sb.yaml:7:3: llm.modle: unknown field "modle"; did you mean "model"?`,
				`sb.yaml:9:3: agent.max_step: unknown field "max_step"; did you mean "max_steps"?`,
			},
		},
		{
			name: "base url",
			src:  "llm:\n  base_url: ftp://x\n",
			want: []string{`sb.yaml:7:13: llm.base_url: invalid URL "ftp://x"; give an http or https URL ending in /v1, e.g. http://127.0.0.1:11434/v1`},
		},
		{
			name: "base url with credentials",
			src:  "llm:\n  base_url: http://u:p@x/v1\n",
			want: []string{"sb.yaml:7:13: llm.base_url: must not carry credentials; put the key in an environment variable and name it in llm.api_key_env"},
		},
		{
			name: "a key instead of a variable name",
			src:  "llm:\n  api_key_env: sk-abc123\n",
			want: []string{"sb.yaml:7:16: llm.api_key_env: invalid environment variable name; this looks like a key: never write the key in the file; put it in a variable and name the variable here"},
		},
		{
			name: "prices and numbers",
			src:  "llm:\n  prompt_price: -1\n  completion_price: cheap\n  max_retries: 11\n  timeout: 1h\n  vision: yes please\n",
			want: []string{
				"sb.yaml:7:17: llm.prompt_price: must not be negative, not -1; write a number such as 0.15 (0 means free or no limit)",
				"sb.yaml:8:21: llm.completion_price: must be a number, not a string; write a number such as 0.15 (0 means free or no limit)",
				"sb.yaml:9:16: llm.max_retries: 11 is out of range; use 0 to 10 (the default is 3)",
				"sb.yaml:10:12: llm.timeout: 1h is out of range; use a value from 1s to 30m, or 0 for the default (60s)",
				"sb.yaml:11:11: llm.vision: must be true or false, not a string; write vision: true or vision: false (true and false are written bare: yes, on and quoted words are strings)",
			},
		},
		{
			name: "agent limits",
			src:  "agent:\n  max_steps: 0\n  max_tokens: -5\n  max_cost: .nan\n  timeout: 48h\n",
			want: []string{
				"sb.yaml:7:14: agent.max_steps: 0 is out of range; use 1 to 1000 (the default is 10)",
				"sb.yaml:8:15: agent.max_tokens: -5 is out of range; use 0 to 2147483647 (the default is 0)",
				"sb.yaml:9:13: agent.max_cost: .nan is not a usable number; write a number such as 0.15 (0 means free or no limit)",
				"sb.yaml:10:12: agent.timeout: 48h is out of range; use a value up to 24h, or 0 for no time limit (the default is 5m)",
			},
		},
		{
			name: "agent servers and tools",
			src:  "agent:\n  servers: [alpah, beta, beta]\n  tools: [\"[\"]\n",
			want: []string{
				`sb.yaml:7:13: agent.servers[0]: unknown server "alpah"; did you mean "alpha"?`,
				`sb.yaml:7:26: agent.servers[2]: server "beta" is listed twice; remove one`,
				`sb.yaml:8:11: agent.tools[0]: invalid pattern "["; use * for any run of characters, ? for one and [a-z] for a class, e.g. "github__*"`,
			},
		},
	}
	checkProblems(t, agentServers, config.TestOpts, tests)
}

func TestMatchTools(t *testing.T) {
	for _, tt := range []struct {
		globs []string
		name  string
		want  bool
	}{
		{nil, "a__b", true},
		{[]string{"a__*"}, "a__b", true},
		{[]string{"a__*"}, "b__a", false},
		{[]string{"x", "*__echo"}, "beta__echo", true},
		{[]string{"["}, "a", false},
	} {
		if got := config.MatchTools(tt.globs, tt.name); got != tt.want {
			t.Errorf("MatchTools(%q, %q): got %v, want %v", tt.globs, tt.name, got, tt.want)
		}
	}
}
