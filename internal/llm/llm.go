// Package llm is Switchboard's minimal client for OpenAI-compatible chat
// completion endpoints (OpenAI, Ollama, vLLM, LM Studio, ...), shared by the
// built-in project server and the agent.
//
// A [Client] asks for one non-streaming completion at a time and accounts
// for its cost from the reported token usage and the configured prices.
// A cost budget bounds a request before it is sent: the answer's max_tokens
// is derived from what the budget leaves after the prompt, and a prompt that
// alone would exceed the budget is refused without calling the endpoint.
// Every failure is a [*fault.Error] whose message is safe to show; the API
// key never appears in messages, logs or formatted configuration.
package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system" | "user" | "assistant"
	Content string `json:"content"`
}

// Completion is one answer and what it cost.
type Completion struct {
	Text                           string
	Model                          string // as reported by the endpoint
	PromptTokens, CompletionTokens int
	Cost                           float64 // from the prices
	// Truncated reports that the answer was cut short at max_tokens
	// (finish_reason "length"), usually because of the budget.
	Truncated bool
	// Estimated reports that the endpoint returned no usage, so the token
	// counts (and Cost) are estimates from the text lengths.
	Estimated bool
}

// Client asks an OpenAI-compatible endpoint for chat completions. It is
// safe for concurrent use.
type Client struct {
	cfg  Config
	chat openai.ChatCompletionService
}

// New returns a client for cfg. It fails with a fault.Config error when
// cfg is invalid. It makes no request.
func New(cfg Config) (*Client, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = cfg.Timeout
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		// The caller's budgets and timeouts decide about trying again; a
		// silent retry would spend them behind its back.
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithHTTPClient(&http.Client{Transport: transport, Timeout: cfg.Timeout}),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	// NewChatCompletionService, unlike openai.NewClient, reads nothing from
	// the environment: the configuration is the whole truth.
	return &Client{cfg: cfg, chat: openai.NewChatCompletionService(opts...)}, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

// Config returns the client's configuration (with the default timeout
// applied).
func (c *Client) Config() Config { return c.cfg }

// EstimateTokens estimates how many tokens msgs take as a prompt: a token
// per four bytes of content plus a small per-message overhead.
func EstimateTokens(msgs []Message) int {
	n := 3 // every reply is primed with a few tokens
	for _, m := range msgs {
		n += 4 + estimateText(m.Content)
	}
	return n
}

// estimateText estimates the tokens of s.
func estimateText(s string) int { return (len(s) + 3) / 4 }

// Cost returns what promptTokens and completionTokens cost at the
// configured prices.
func (c *Client) Cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*c.cfg.PromptPrice + float64(completionTokens)*c.cfg.CompletionPrice) / 1e6
}

// MaxTokensFor returns the largest answer, in tokens, that keeps a request
// with msgs within maxCost; 0 means unbounded (maxCost is 0 or answers are
// free). It fails with a fault.BudgetExceeded error when the prompt alone
// would exceed maxCost or not even one answer token fits.
func (c *Client) MaxTokensFor(msgs []Message, maxCost float64) (int, error) {
	if maxCost <= 0 {
		return 0, nil
	}
	prompt := EstimateTokens(msgs)
	promptCost := c.Cost(prompt, 0)
	if promptCost > maxCost {
		return 0, fault.New(fault.BudgetExceeded, "The prompt alone (about %d tokens, cost %.6g) exceeds the budget of %.6g", prompt, promptCost, maxCost).
			WithDetail("estimated_prompt_tokens", prompt).
			WithDetail("estimated_prompt_cost", promptCost).
			WithDetail("max_cost", maxCost).
			WithSuggestions("Raise maxCost", "Narrow the request so that the prompt is smaller")
	}
	if c.cfg.CompletionPrice == 0 {
		return 0, nil
	}
	tokens := math.Floor((maxCost - promptCost) * 1e6 / c.cfg.CompletionPrice)
	if tokens < 1 {
		return 0, fault.New(fault.BudgetExceeded, "The budget of %.6g leaves no room for an answer after the prompt (cost %.6g)", maxCost, promptCost).
			WithDetail("estimated_prompt_tokens", prompt).
			WithDetail("max_cost", maxCost).
			WithSuggestions("Raise maxCost")
	}
	return int(min(tokens, math.MaxInt32)), nil
}

// Complete asks for one chat completion. maxCost > 0 bounds it: the
// request's max_tokens is derived so that the worst case stays within
// maxCost given the prompt's estimated tokens (len/4), and a prompt that
// alone would exceed maxCost fails at once with a fault.BudgetExceeded error
// without calling the endpoint. Errors are *fault.Error (connection,
// timeout, authentication for 401, backend for 5xx, ...).
func (c *Client) Complete(ctx context.Context, msgs []Message, maxCost float64) (Completion, error) {
	if len(msgs) == 0 {
		return Completion{}, fault.New(fault.Validation, "A completion needs at least one message")
	}
	if math.IsNaN(maxCost) || math.IsInf(maxCost, 0) || maxCost < 0 {
		return Completion{}, fault.New(fault.Validation, "maxCost must be a finite number >= 0, got %g", maxCost)
	}
	params := openai.ChatCompletionNewParams{Model: c.cfg.Model}
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			return Completion{}, fault.New(fault.Validation, "message %d has role %q; want system, user or assistant", i, m.Role)
		}
	}
	maxTokens, err := c.MaxTokensFor(msgs, maxCost)
	if err != nil {
		return Completion{}, err
	}
	if maxTokens > 0 {
		params.MaxTokens = openai.Int(int64(maxTokens))
	}
	resp, err := c.chat.New(ctx, params)
	if err != nil {
		return Completion{}, c.classify(ctx, err)
	}
	if len(resp.Choices) == 0 {
		return Completion{}, fault.New(fault.Protocol, "The language model endpoint returned no choices").
			WithDetail("model", c.cfg.Model)
	}
	choice := resp.Choices[0]
	out := Completion{
		Text:             choice.Message.Content,
		Model:            resp.Model,
		PromptTokens:     int(resp.Usage.PromptTokens),
		CompletionTokens: int(resp.Usage.CompletionTokens),
		Truncated:        choice.FinishReason == "length",
	}
	if out.Model == "" {
		out.Model = c.cfg.Model
	}
	if out.PromptTokens == 0 && out.CompletionTokens == 0 {
		out.PromptTokens = EstimateTokens(msgs)
		out.CompletionTokens = estimateText(out.Text)
		out.Estimated = true
	}
	out.Cost = c.Cost(out.PromptTokens, out.CompletionTokens)
	return out, nil
}

// maxEndpointMessage bounds how much of an endpoint's error message is
// shown.
const maxEndpointMessage = 300

// classify turns a failed request into a *fault.Error.
func (c *Client) classify(ctx context.Context, err error) *fault.Error {
	where := c.endpointName()
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fault.Wrap(fault.Timeout, ctxErr, "The language model at %s did not answer in the time allowed", where).
				WithDetail("model", c.cfg.Model).
				WithSuggestions("Allow more time", "Use a smaller or faster model")
		}
		return fault.Wrap(fault.Cancelled, ctxErr, "The request to the language model was cancelled")
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return c.statusError(apiErr)
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fault.Wrap(fault.Timeout, c.scrub(err), "The language model at %s did not answer within %s", where, c.cfg.Timeout).
			WithDetail("model", c.cfg.Model).
			WithSuggestions(fmt.Sprintf("Raise %s", EnvTimeout), "Use a smaller or faster model", "Try again in a moment")
	}
	var opErr *net.OpError
	var dnsErr *net.DNSError
	if errors.As(err, &opErr) || errors.As(err, &dnsErr) {
		return fault.Wrap(fault.Connection, c.scrub(err), "Unable to connect to the language model at %s", where).
			WithSuggestions(fmt.Sprintf("Check %s and that the endpoint is running", EnvBaseURL), "Try again in a moment")
	}
	return fault.Wrap(fault.Protocol, c.scrub(err), "The language model at %s gave an unusable answer", where).
		WithDetail("model", c.cfg.Model).
		WithSuggestions(fmt.Sprintf("Check that %s points at an OpenAI-compatible /v1 endpoint", EnvBaseURL))
}

// statusError maps an HTTP error status from the endpoint.
func (c *Client) statusError(e *openai.Error) *fault.Error {
	where := c.endpointName()
	status := e.StatusCode
	msg := c.endpointMessage(e)
	var fe *fault.Error
	switch {
	case status == http.StatusUnauthorized:
		// The endpoint's message may echo part of the key: leave it out.
		return fault.New(fault.Authentication, "The language model at %s rejected the API key (HTTP 401)", where).
			WithDetail("status", status).
			WithSuggestions(fmt.Sprintf("Check %s (or %s)", EnvAPIKey, EnvOpenAIAPIKey))
	case status == http.StatusForbidden:
		return fault.New(fault.Authorization, "The API key may not use model %q at %s (HTTP 403)", c.cfg.Model, where).
			WithDetail("status", status).
			WithSuggestions("Check the key's permissions and the account's access to the model")
	case status == http.StatusNotFound:
		fe = fault.New(fault.NotFound, "The language model at %s answered 404 for model %q: check the model name", where, c.cfg.Model).
			WithSuggestions(fmt.Sprintf("Check %s (for Ollama, pull the model first)", EnvModel),
				fmt.Sprintf("Check that %s ends in /v1", EnvBaseURL))
	case status == http.StatusTooManyRequests:
		fe = fault.New(fault.Backend, "The language model at %s is rate limiting requests (HTTP 429)", where).
			WithSuggestions("Retry after a short wait", "Check the account's quota")
	case status >= 500:
		fe = fault.New(fault.Backend, "The language model at %s failed (HTTP %d)", where, status).
			WithSuggestions("Retry in a moment", "If it keeps failing, the endpoint is unavailable")
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		fe = fault.New(fault.Backend, "The language model at %s rejected the request (HTTP %d)", where, status).
			WithSuggestions("The prompt may be too long for the model's context window")
	default:
		fe = fault.New(fault.Backend, "The language model at %s answered HTTP %d", where, status)
	}
	fe.WithDetail("status", status).WithDetail("model", c.cfg.Model)
	if msg != "" {
		fe.WithDetail("endpoint_message", msg)
	}
	return fe
}

// endpointMessage returns the endpoint's own error message, bounded and
// without the API key.
func (c *Client) endpointMessage(e *openai.Error) string {
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		return ""
	}
	if c.cfg.APIKey != "" {
		msg = strings.ReplaceAll(msg, c.cfg.APIKey, "[redacted]")
	}
	if len(msg) > maxEndpointMessage {
		msg = strings.ToValidUTF8(msg[:maxEndpointMessage], "") + "…"
	}
	return msg
}

// endpointName names the endpoint in messages: scheme and host only.
func (c *Client) endpointName() string {
	s := c.cfg.BaseURL
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		return s[:i+3] + rest
	}
	return s
}

// scrub removes the API key from an error's text, should a transport error
// ever carry it.
func (c *Client) scrub(err error) error {
	if c.cfg.APIKey == "" || !strings.Contains(err.Error(), c.cfg.APIKey) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), c.cfg.APIKey, "[redacted]"))
}
