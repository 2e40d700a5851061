package llm

import (
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The environment variables [ConfigFromEnv] reads.
const (
	EnvBaseURL         = "SWITCHBOARD_LLM_BASE_URL"
	EnvModel           = "SWITCHBOARD_LLM_MODEL"
	EnvAPIKey          = "SWITCHBOARD_LLM_API_KEY"
	EnvPromptPrice     = "SWITCHBOARD_LLM_PROMPT_PRICE"
	EnvCompletionPrice = "SWITCHBOARD_LLM_COMPLETION_PRICE"
	EnvTimeout         = "SWITCHBOARD_LLM_TIMEOUT"
	EnvOpenAIBaseURL   = "OPENAI_BASE_URL"
	EnvOpenAIAPIKey    = "OPENAI_API_KEY"
)

// DefaultBaseURL is the endpoint used when a model is named but no base URL
// is set.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultTimeout bounds one request when Config.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// Config says which OpenAI-compatible endpoint and model to use and what
// its tokens cost.
type Config struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1
	Model   string
	APIKey  string // secret; never logged
	// Prices in currency units per 1M tokens, for cost accounting and
	// budgets (0 = free, e.g. local models).
	PromptPrice, CompletionPrice float64
	Timeout                      time.Duration // per request; default 60s
}

// String describes the configuration without the API key.
func (c Config) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("llm.Config{BaseURL: %q, Model: %q, APIKey: %s, PromptPrice: %g, CompletionPrice: %g, Timeout: %s}",
		c.BaseURL, c.Model, key, c.PromptPrice, c.CompletionPrice, c.Timeout)
}

// GoString is String, so that %#v does not print the API key either.
func (c Config) GoString() string { return c.String() }

// LogValue renders the configuration for slog without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Float64("prompt_price", c.PromptPrice),
		slog.Float64("completion_price", c.CompletionPrice),
		slog.Duration("timeout", c.Timeout),
	)
}

// ConfigFromEnv reads SWITCHBOARD_LLM_BASE_URL, SWITCHBOARD_LLM_MODEL,
// SWITCHBOARD_LLM_API_KEY (falling back to OPENAI_BASE_URL and
// OPENAI_API_KEY), SWITCHBOARD_LLM_PROMPT_PRICE,
// SWITCHBOARD_LLM_COMPLETION_PRICE and SWITCHBOARD_LLM_TIMEOUT (a Go
// duration such as 30s). ok is false when no LLM is configured: neither
// SWITCHBOARD_LLM_BASE_URL nor SWITCHBOARD_LLM_MODEL is set (OPENAI_BASE_URL
// alone, which other tools set too, does not configure one). A malformed
// value is a fault.Config error naming the variable.
func ConfigFromEnv(getenv func(string) string) (cfg Config, ok bool, err error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	cfg.BaseURL = get(EnvBaseURL)
	cfg.Model = get(EnvModel)
	if cfg.BaseURL == "" && cfg.Model == "" {
		return Config{}, false, nil
	}
	if cfg.Model == "" {
		return Config{}, false, fault.New(fault.Config, "%s is set but %s is empty: name the model to use", EnvBaseURL, EnvModel).
			WithDetail("variable", EnvModel).
			WithSuggestions(fmt.Sprintf("Set %s, e.g. llama3.2 or gpt-4o-mini", EnvModel))
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = get(EnvOpenAIBaseURL)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.APIKey = get(EnvAPIKey)
	if cfg.APIKey == "" {
		cfg.APIKey = get(EnvOpenAIAPIKey)
	}
	if cfg.PromptPrice, err = priceFromEnv(get, EnvPromptPrice); err != nil {
		return Config{}, false, err
	}
	if cfg.CompletionPrice, err = priceFromEnv(get, EnvCompletionPrice); err != nil {
		return Config{}, false, err
	}
	if s := get(EnvTimeout); s != "" {
		d, perr := time.ParseDuration(s)
		if perr != nil || d <= 0 {
			return Config{}, false, fault.New(fault.Config, "%s must be a positive duration such as 30s or 2m, got %q", EnvTimeout, s).
				WithDetail("variable", EnvTimeout)
		}
		cfg.Timeout = d
	}
	if err := cfg.validate(); err != nil {
		return Config{}, false, err
	}
	return cfg, true, nil
}

// priceFromEnv parses a price variable; empty means 0.
func priceFromEnv(get func(string) string, name string) (float64, error) {
	s := get(name)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !validPrice(v) {
		return 0, fault.New(fault.Config, "%s must be a number >= 0 (currency units per 1M tokens), got %q", name, s).
			WithDetail("variable", name)
	}
	return v, nil
}

// validPrice reports whether v is a usable price.
func validPrice(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// validate checks the configuration as a whole. Messages name the
// environment variable that sets each field.
func (c Config) validate() error {
	if strings.TrimSpace(c.Model) == "" {
		return fault.New(fault.Config, "no model configured (%s)", EnvModel).WithDetail("variable", EnvModel)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fault.New(fault.Config, "%s must be an http or https URL such as http://127.0.0.1:11434/v1, got %q", EnvBaseURL, c.BaseURL).
			WithDetail("variable", EnvBaseURL)
	}
	if u.User != nil {
		return fault.New(fault.Config, "%s must not carry credentials; use %s", EnvBaseURL, EnvAPIKey).
			WithDetail("variable", EnvBaseURL)
	}
	if !validPrice(c.PromptPrice) {
		return fault.New(fault.Config, "%s must be a number >= 0, got %g", EnvPromptPrice, c.PromptPrice).WithDetail("variable", EnvPromptPrice)
	}
	if !validPrice(c.CompletionPrice) {
		return fault.New(fault.Config, "%s must be a number >= 0, got %g", EnvCompletionPrice, c.CompletionPrice).WithDetail("variable", EnvCompletionPrice)
	}
	if c.Timeout < 0 {
		return fault.New(fault.Config, "%s must be positive, got %s", EnvTimeout, c.Timeout).WithDetail("variable", EnvTimeout)
	}
	return nil
}
