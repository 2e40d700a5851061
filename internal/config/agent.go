package config

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// This file holds the llm: block (the OpenAI-compatible endpoint the agent
// talks to) and the agent: block (the agent loop's limits and defaults):
// their resolved form, decoding and validation, and how `config show`
// writes them. docs/agent.md documents every key.

// Agent and LLM defaults other packages use, and bounds; DefaultAgent and
// DefaultLLM are the schema's defaults.
const (
	DefaultAgentMaxSteps = 10
	MaxAgentMaxSteps     = 1000
	DefaultAgentTimeout  = 5 * time.Minute
	MaxAgentTimeout      = 24 * time.Hour
	MaxLLMMaxRetries     = 10
	MaxLLMTimeout        = 30 * time.Minute
)

// LLM is the OpenAI-compatible chat completions endpoint (the llm: block).
// The API key is never in the file: APIKeyEnv names the environment
// variable that holds it, read when the agent starts. Environment
// variables (SWITCHBOARD_LLM_*) override these fields one by one.
type LLM struct {
	// BaseURL is the endpoint including /v1, e.g. http://127.0.0.1:11434/v1.
	BaseURL string
	// Model is the model name, e.g. llama3.2 or gpt-4o-mini.
	Model string
	// APIKeyEnv names the environment variable holding the API key.
	APIKeyEnv string
	// PromptPrice and CompletionPrice are prices per 1M tokens (0: free).
	PromptPrice, CompletionPrice float64
	// Timeout bounds one request (0: the client's default, 60s).
	Timeout time.Duration
	// Vision says that the model accepts images, so image tool results are
	// passed to it as image parts rather than described.
	Vision bool
	// Stream asks for answers as server-sent events (default true).
	Stream bool
	// MaxRetries is how many times a request answered 429 or 5xx is sent
	// again (default 3, at most 10).
	MaxRetries int

	// Pos is where the block was defined, if it was.
	Pos Pos
}

// Agent bounds the agent loop (the agent: block). A limit of 0 means none,
// except MaxSteps, which always applies.
type Agent struct {
	// MaxSteps is how many times the model is asked per prompt (default 10).
	MaxSteps int
	// MaxToolCalls bounds the tool calls per prompt (default 50; 0: none).
	MaxToolCalls int
	// MaxTokens bounds the prompt and completion tokens per prompt.
	MaxTokens int
	// MaxCost bounds the cost per prompt, in the unit of the llm prices.
	MaxCost float64
	// Timeout bounds the time per prompt (default 5m; 0: none).
	Timeout time.Duration
	// SystemPrompt replaces the built-in system prompt.
	SystemPrompt string
	// Servers narrows the tools to these servers (empty: all enabled).
	Servers []string
	// Tools narrows the tools to exposed names matching one of these globs
	// (path.Match syntax, e.g. "github__*"; empty: all).
	Tools []string
	// Elicitation is how the agent answers a server's question during a
	// tool call: AgentElicitDecline or AgentElicitDefaults.
	Elicitation string

	// Pos is where the block was defined, if it was.
	Pos Pos
}

// DefaultLLM returns the llm settings used when the block is absent: the
// schema's defaults.
func DefaultLLM() LLM { return defaultBlock[LLM](&schema.LLM{}) }

// DefaultAgent returns the agent settings used when the block is absent:
// the schema's defaults.
func DefaultAgent() Agent { return defaultBlock[Agent](&schema.Agent{}) }

// The values of agent.elicitation.
const (
	// AgentElicitDecline declines every question (the default).
	AgentElicitDecline = "decline"
	// AgentElicitDefaults accepts a form whose required fields all have
	// defaults, with the defaults; else it declines.
	AgentElicitDefaults = "accept-defaults"
)

// decodeLLM reads the llm: block.
func (r *resolver) decodeLLM(f *schema.LLM) LLM {
	l := DefaultLLM()
	r.readBlock(&l, f, []any{"llm"}, "base_url", "model", "api_key_env")
	if f == nil {
		return l
	}
	if v, ok := r.textAt("llm", "base_url"); ok {
		pos := r.at("llm", "base_url").pos
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			r.ps.add(pos, "llm.base_url", fmt.Sprintf("invalid URL %q", v), "give an http or https URL ending in /v1, e.g. http://127.0.0.1:11434/v1", nil)
		case u.User != nil:
			r.ps.add(pos, "llm.base_url", "must not carry credentials", "put the key in an environment variable and name it in llm.api_key_env", nil)
		default:
			l.BaseURL = v
		}
	}
	if v, ok := r.textAt("llm", "model"); ok {
		if strings.TrimSpace(v) == "" {
			r.ps.add(r.at("llm", "model").pos, "llm.model", "is empty", "name the model, e.g. model: llama3.2, or remove the key", nil)
		} else {
			l.Model = strings.TrimSpace(v)
		}
	}
	if f.APIKeyEnv != nil {
		if name := *f.APIKeyEnv; !varName().MatchString(name) {
			fix := "name the variable that holds the key (letters, digits and _), e.g. api_key_env: OPENAI_API_KEY"
			if strings.HasPrefix(name, "sk-") || len(name) > 40 {
				fix = "this looks like a key: never write the key in the file; put it in a variable and name the variable here"
			}
			r.ps.add(r.at("llm", "api_key_env").pos, "llm.api_key_env", "invalid environment variable name", fix, nil)
		} else {
			l.APIKeyEnv = name
		}
	}
	return l
}

// decodeAgent reads the agent: block. servers are the valid server
// names, which agent.servers refers to.
func (r *resolver) decodeAgent(f *schema.Agent, servers []string) Agent {
	a := DefaultAgent()
	r.readBlock(&a, f, []any{"agent"}, "servers", "tools")
	a.Servers = r.serverList(servers, "agent", "servers")
	a.Tools = r.globs("agent", "tools")
	return a
}

// MatchTools reports whether an exposed tool name matches one of globs
// (path.Match syntax); no globs match everything.
func MatchTools(globs []string, name string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// isDefault reports whether l holds only the defaults (or is the zero
// value, as in a configuration built by Default).
func (l LLM) isDefault() bool {
	l.Pos = Pos{}
	return l == DefaultLLM() || l == LLM{}
}

// isDefault reports whether a holds only the defaults (or is the zero
// value, as in a configuration built by Default).
func (a Agent) isDefault() bool {
	return sameBlock(a, DefaultAgent()) || sameBlock(a, Agent{}) || sameBlock(a, Agent{Elicitation: AgentElicitDecline})
}
