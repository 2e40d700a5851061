package agent

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// ClientConfig works out the endpoint from the llm: block and the
// environment. The environment wins, field by field: SWITCHBOARD_LLM_*
// variables override the block's base_url, model, prices and timeout, so
// that a person can try another model or endpoint without editing a shared
// file. The API key is SWITCHBOARD_LLM_API_KEY, else the variable named by
// api_key_env, else OPENAI_API_KEY. The base URL falls back to
// OPENAI_BASE_URL, then llm.DefaultBaseURL. A model is required. Errors are
// fault.Config errors naming the key or variable to fix.
func ClientConfig(l config.LLM, getenv func(string) string) (llm.Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	cfg := llm.Config{BaseURL: l.BaseURL, Model: l.Model, PromptPrice: l.PromptPrice, CompletionPrice: l.CompletionPrice, Timeout: l.Timeout}
	if v := get(llm.EnvBaseURL); v != "" {
		cfg.BaseURL = v
	}
	if v := get(llm.EnvModel); v != "" {
		cfg.Model = v
	}
	for _, v := range []struct {
		name string
		dst  *float64
	}{{llm.EnvPromptPrice, &cfg.PromptPrice}, {llm.EnvCompletionPrice, &cfg.CompletionPrice}} {
		if s := get(v.name); s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return llm.Config{}, fault.New(fault.Config, "%s must be a number >= 0 (per 1M tokens), got %q", v.name, s).WithDetail("variable", v.name)
			}
			*v.dst = f
		}
	}
	if s := get(llm.EnvTimeout); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return llm.Config{}, fault.New(fault.Config, "%s must be a positive duration such as 30s or 2m, got %q", llm.EnvTimeout, s).WithDetail("variable", llm.EnvTimeout)
		}
		cfg.Timeout = d
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = get(llm.EnvOpenAIBaseURL)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = llm.DefaultBaseURL
	}
	switch {
	case get(llm.EnvAPIKey) != "":
		cfg.APIKey = get(llm.EnvAPIKey)
	case l.APIKeyEnv != "":
		cfg.APIKey = get(l.APIKeyEnv)
		if cfg.APIKey == "" {
			return llm.Config{}, fault.New(fault.Config, "llm.api_key_env names %s, which is not set", l.APIKeyEnv).
				WithDetail("variable", l.APIKeyEnv).
				WithSuggestions(fmt.Sprintf("export %s=... in the environment switchboard runs in", l.APIKeyEnv), "remove api_key_env for an endpoint that needs no key")
		}
	default:
		cfg.APIKey = get(llm.EnvOpenAIAPIKey)
	}
	if cfg.Model == "" {
		return llm.Config{}, fault.New(fault.Config, "no language model is configured").
			WithSuggestions("set llm.model (and llm.base_url) in the configuration", fmt.Sprintf("or set %s (and %s)", llm.EnvModel, llm.EnvBaseURL))
	}
	return cfg, nil
}
