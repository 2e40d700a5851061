// Package agent lets a language model use the tools of the configured MCP
// servers, within limits: `switchboard agent`, and the hooks' agent action.
//
// The model is any OpenAI-compatible chat completions endpoint (through
// internal/llm). It is offered a [ToolContext] — seed 001's AIToolContext:
// the tools of enabled, available servers, narrowed by servers, tool globs,
// a gateway view or a document section's binding — as function definitions
// under the catalog's client-safe names. Each tool call it makes runs
// through the execution engine (source "agent", with the caller's identity)
// and its result goes back as a tool message, until the model answers or a
// limit ends the run: steps, tool calls, tokens, cost, time, or the stop
// switch. Tool calls of one turn run concurrently; the engine's limits
// bound them. A call the model got wrong (unknown tool, arguments that are
// not JSON or fail the schema) goes back to it as a tool error so that it
// can correct itself. Every message, call, result and token count can be
// written to a transcript as JSON lines. Argument values are never logged.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// DefaultSystemPrompt is the system message when neither Options.System
// nor agent.system_prompt gives one.
const DefaultSystemPrompt = "You are an assistant that can use tools provided by MCP servers through Switchboard. " +
	"Call a tool when it helps to answer; answer directly when no tool is needed. " +
	"When a tool call fails, read the error, correct the call if you can, and otherwise explain what went wrong. " +
	"Keep the final answer concise."

// Limits bound one prompt's run. Zero means no limit, except MaxSteps
// (zero means DefaultMaxSteps).
type Limits struct {
	// MaxSteps is how many times the model is asked.
	MaxSteps int
	// MaxToolCalls bounds the tool calls.
	MaxToolCalls int
	// MaxTokens bounds prompt plus completion tokens, summed over steps.
	MaxTokens int
	// MaxCost bounds the cost, in the unit of the endpoint's prices.
	MaxCost float64
	// Timeout bounds the run's time.
	Timeout time.Duration
}

// DefaultMaxSteps is the step limit when Limits.MaxSteps is 0.
const DefaultMaxSteps = config.DefaultAgentMaxSteps

// LimitsFrom returns the limits of an agent: block.
func LimitsFrom(a config.Agent) Limits {
	return Limits{MaxSteps: a.MaxSteps, MaxToolCalls: a.MaxToolCalls, MaxTokens: a.MaxTokens, MaxCost: a.MaxCost, Timeout: a.Timeout}
}

// Options configures a run.
type Options struct {
	// Config is the configuration: its servers say which are enabled, its
	// agent: and llm: blocks give the defaults for what is left zero here.
	Config *config.Config
	// Engine runs the tool calls; Catalog lists the tools.
	Engine  *toolcall.Engine
	Catalog *catalog.Catalog
	// Client is the endpoint; nil builds one from Config.LLM and the
	// environment (see ClientConfig).
	Client *llm.Client
	// LLM holds the endpoint's behaviour (vision, stream, max_retries);
	// the zero value means Config.LLM.
	LLM config.LLM
	// Prompt is the user's request (for Run).
	Prompt string
	// System replaces the system prompt ("" means agent.system_prompt, else
	// DefaultSystemPrompt).
	System string
	// Selection narrows the tools; the zero value means agent.servers and
	// agent.tools.
	Selection Selection
	// Limits bound each prompt; the zero value means the agent: block's.
	Limits Limits
	// URLCompleter, when set, has the person at the terminal complete the
	// URL-mode elicitations a server requires before it answers a tool
	// call (error -32042); the call is then made once more. Nil: no one
	// can, and such a call fails with a message for the model that names
	// the URLs, so that it can tell the person what to open.
	URLCompleter answer.URLCompleter
	// Identity and SessionID are passed to every tool call.
	Identity, SessionID string
	// Origin says what started the run, for a person reading the call
	// history (a hook and its event): each tool call's origin is it,
	// then the step and the model's tool call id. "" for a run a person
	// started.
	Origin string
	// Transcript receives every event as a JSON line; nil writes none.
	Transcript io.Writer
	// OnText receives the answer's text as it arrives (streamed), or whole.
	OnText func(text string)
	// OnEvent receives every event (the transcript's lines) as it happens.
	OnEvent func(Event)
	// OnWarning receives what NewSession finds wrong with settings that
	// still allow a run, such as a cost limit without prices; nil logs
	// each at warning level.
	OnWarning func(msg string)
	// Logger receives one record per step and per tool call (names and
	// sizes, never argument values); nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// RetryBackoff is the first wait before retrying a failed request
	// (default llm.DefaultRetryBackoff); tests shorten it.
	RetryBackoff time.Duration
	// StopPoll is how often the stop switch is checked while the model is
	// thinking (default 100ms).
	StopPoll time.Duration
}

// Stop says why a run ended.
type Stop string

// The reasons a run ends.
const (
	StopAnswered     Stop = "answered"
	StopMaxSteps     Stop = "max_steps"
	StopMaxToolCalls Stop = "max_tool_calls"
	StopMaxTokens    Stop = "max_tokens"
	StopMaxCost      Stop = "max_cost"
	StopTimeout      Stop = "timeout"
	StopStopped      Stop = "stopped"
	// StopError: the endpoint refused or failed after its retries, or the
	// caller cancelled; the run's error says which.
	StopError Stop = "error"
)

// Outcome is how a prompt's run ended and what it used.
type Outcome struct {
	// Answer is the model's final answer, or the last text it gave when a
	// limit ended the run (possibly empty).
	Answer string `json:"answer"`
	Stop   Stop   `json:"stop"`
	// Message says which limit ended the run and how to raise it, or, with
	// StopError, what failed; "" when the model answered.
	Message          string        `json:"message,omitempty"`
	Steps            int           `json:"steps"`
	ToolCalls        int           `json:"tool_calls"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	Cost             float64       `json:"cost"`
	Duration         time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for JSON.
	DurationMS int64 `json:"duration_ms"`
}

// LimitHit reports whether a limit or the stop switch ended the run.
func (o *Outcome) LimitHit() bool { return o.Stop != StopAnswered && o.Stop != StopError }

// Run answers one prompt: the hooks' agent action and `switchboard agent
// PROMPT` call it. A limit that ends the run is not an error: the Outcome
// says which (Stop, Message) with whatever answer exists. Errors are
// *fault.Error: the endpoint refused or failed (after its retries), the
// selection matched nothing, the caller cancelled. The Outcome is returned
// with an error too, holding what was used.
func Run(ctx context.Context, opts Options) (*Outcome, error) {
	s, err := NewSession(opts)
	if err != nil {
		return nil, err
	}
	return s.Ask(ctx, opts.Prompt)
}

// Session is a conversation: each Ask adds a prompt and the model's work
// to the same history (the interactive mode). Limits apply to each Ask.
// A Session is not safe for concurrent use.
type Session struct {
	opts    Options
	client  *llm.Client
	tools   *ToolContext
	lim     Limits
	llm     config.LLM
	logger  *slog.Logger
	now     func() time.Time
	history []llm.ChatMessage

	tmu sync.Mutex // serialises transcript writes
	// transcriptErr is the first error writing the transcript.
	transcriptErr error
}

// NewSession prepares a conversation: it builds the client (unless given)
// and the tool context. It makes no request.
func NewSession(opts Options) (*Session, error) {
	if opts.Config == nil || opts.Engine == nil || opts.Catalog == nil {
		return nil, errors.New("agent: Config, Engine and Catalog are required")
	}
	s := &Session{opts: opts, client: opts.Client, lim: opts.Limits, llm: opts.LLM, logger: opts.Logger, now: opts.Now}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.llm == (config.LLM{}) {
		s.llm = opts.Config.LLM
	}
	if s.lim == (Limits{}) {
		s.lim = LimitsFrom(opts.Config.Agent)
	}
	if s.lim.MaxSteps <= 0 {
		s.lim.MaxSteps = DefaultMaxSteps
	}
	if s.client == nil {
		cc, err := ClientConfig(s.llm, os.Getenv)
		if err != nil {
			return nil, err
		}
		if s.client, err = llm.New(cc); err != nil {
			return nil, err
		}
	}
	if w := costWarning(s.lim, s.client.Config()); w != "" {
		if opts.OnWarning != nil {
			opts.OnWarning(w)
		} else {
			s.logger.Warn(w)
		}
	}
	sel := opts.Selection
	if sel.IsZero() {
		sel = Selection{Servers: opts.Config.Agent.Servers, Tools: opts.Config.Agent.Tools}
	}
	tools, err := NewToolContext(opts.Config, opts.Catalog, sel)
	if err != nil {
		return nil, err
	}
	s.tools = tools
	system := opts.System
	if system == "" {
		system = opts.Config.Agent.SystemPrompt
	}
	if system == "" {
		system = DefaultSystemPrompt
	}
	s.history = []llm.ChatMessage{{Role: llm.RoleSystem, Content: system}}
	s.emit(Event{Type: EventStart, Model: s.client.Model(), Tools: tools.Names()})
	s.emit(Event{Type: EventMessage, Role: llm.RoleSystem, Content: system})
	return s, nil
}

// costWarning says why a cost limit can never end a run: with no prices
// set every request costs 0. It returns "" when the limit works or is off.
func costWarning(lim Limits, cc llm.Config) string {
	if lim.MaxCost <= 0 || cc.PromptPrice > 0 || cc.CompletionPrice > 0 {
		return ""
	}
	return fmt.Sprintf("the cost limit (%g) has no effect: no prices are set, so every request costs 0; "+
		"set llm.prompt_price and llm.completion_price (or %s and %s) to the endpoint's prices per 1M tokens",
		lim.MaxCost, llm.EnvPromptPrice, llm.EnvCompletionPrice)
}

// Tools returns the tool context offered to the model.
func (s *Session) Tools() *ToolContext { return s.tools }

// History returns the conversation so far.
func (s *Session) History() []llm.ChatMessage {
	return append([]llm.ChatMessage(nil), s.history...)
}

// TranscriptErr returns the first error writing the transcript, if any.
func (s *Session) TranscriptErr() error {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	return s.transcriptErr
}

// Causes that end a run's context.
var (
	errTimeLimit = errors.New("agent time limit reached")
	errStopped   = errors.New("calls are stopped")
)

// Ask adds a prompt to the conversation and runs the loop until the model
// answers or a limit ends it. See Run for what it returns.
func (s *Session) Ask(ctx context.Context, prompt string) (*Outcome, error) {
	if strings.TrimSpace(prompt) == "" {
		return nil, fault.New(fault.Validation, "the prompt is empty").WithSuggestions("say what the agent should do")
	}
	start := s.now()
	out := &Outcome{}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if s.lim.Timeout > 0 {
		var cancelT context.CancelFunc
		runCtx, cancelT = context.WithTimeoutCause(runCtx, s.lim.Timeout, errTimeLimit)
		defer cancelT()
	}
	// The stop switch ends a model request in flight too.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.watchStop(runCtx, cancel)
	}()
	defer wg.Wait()
	defer cancel(nil) // runs before wg.Wait

	s.history = append(s.history, llm.ChatMessage{Role: llm.RoleUser, Content: prompt})
	s.emit(Event{Type: EventMessage, Role: llm.RoleUser, Content: prompt})
	out, err := s.loop(ctx, runCtx, out)
	out.Duration = s.now().Sub(start)
	out.DurationMS = out.Duration.Milliseconds()
	end := Event{Type: EventEnd, Stop: out.Stop, Message: out.Message, Steps: out.Steps, ToolCalls: out.ToolCalls,
		PromptTokens: out.PromptTokens, CompletionTokens: out.CompletionTokens, Cost: out.Cost, DurationMS: out.Duration.Milliseconds()}
	if err != nil {
		end.Error = fault.As(err)
	}
	s.emit(end)
	s.logger.Info("agent run ended", logKeyStop, string(out.Stop), logKeySteps, out.Steps, logKeyToolCalls, out.ToolCalls,
		logKeyTokens, out.PromptTokens+out.CompletionTokens, logKeyDuration, out.Duration)
	return out, err
}

// Log attribute keys.
const (
	logKeyStop      = "stop"
	logKeySteps     = "steps"
	logKeyStep      = "step"
	logKeyToolCalls = "tool_calls"
	logKeyTokens    = "tokens"
	logKeyDuration  = "duration"
	logKeyTool      = "tool"
	logKeyServer    = "server"
	logKeyStatus    = "status"
	logKeyArgBytes  = "argument_bytes"
)

// watchStop cancels the run when calls are stopped (switchboard stop).
func (s *Session) watchStop(ctx context.Context, cancel context.CancelCauseFunc) {
	every := s.opts.StopPoll
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s.opts.Engine.Stopped() {
			cancel(errStopped)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// limitMessage words a limit for the person running the agent.
func (s *Session) limitMessage(stop Stop, out *Outcome) string {
	switch stop {
	case StopMaxSteps:
		return fmt.Sprintf("stopped: the step limit (%d requests to the model) was reached before a final answer; raise agent.max_steps or --max-steps", s.lim.MaxSteps)
	case StopMaxToolCalls:
		return fmt.Sprintf("stopped: the tool call limit (%d) was reached; raise agent.max_tool_calls or --max-tool-calls", s.lim.MaxToolCalls)
	case StopMaxTokens:
		return fmt.Sprintf("stopped: the token limit (%d) would be exceeded (%d used); raise agent.max_tokens or --max-tokens", s.lim.MaxTokens, out.PromptTokens+out.CompletionTokens)
	case StopMaxCost:
		return fmt.Sprintf("stopped: the cost limit (%g) would be exceeded (%.6g spent); raise agent.max_cost or --max-cost", s.lim.MaxCost, out.Cost)
	case StopTimeout:
		return fmt.Sprintf("stopped: the time limit (%s) was reached; raise agent.timeout or --timeout", s.lim.Timeout)
	case StopStopped:
		return "stopped: calls were stopped (switchboard stop); run switchboard resume to allow them again"
	}
	return ""
}

// finish ends a run at a limit.
func (s *Session) finish(out *Outcome, stop Stop) (*Outcome, error) {
	out.Stop = stop
	out.Message = s.limitMessage(stop, out)
	s.emit(Event{Type: EventLimit, Stop: stop, Message: out.Message})
	return out, nil
}

// fail ends a run with an error: Stop is StopError and Message says what
// failed, in the error's message that is safe to show.
func (s *Session) fail(out *Outcome, err error) (*Outcome, error) {
	out.Stop = StopError
	out.Message = "failed: " + fault.As(err).Message
	return out, err
}

// interrupted says which limit, if any, ended runCtx; it returns "" when
// the run may go on, and an error when the caller cancelled.
func (s *Session) interrupted(ctx, runCtx context.Context) (Stop, error) {
	if ctx.Err() != nil {
		return StopError, fault.Wrap(fault.Cancelled, ctx.Err(), "the agent was interrupted")
	}
	if s.opts.Engine.Stopped() {
		return StopStopped, nil
	}
	switch context.Cause(runCtx) {
	case errTimeLimit:
		return StopTimeout, nil
	case errStopped:
		return StopStopped, nil
	}
	return "", nil
}

// loop asks the model, runs its tool calls and feeds the results back.
func (s *Session) loop(ctx, runCtx context.Context, out *Outcome) (*Outcome, error) {
	functions := s.tools.Functions()
	for {
		if stop, err := s.interrupted(ctx, runCtx); err != nil {
			return s.fail(out, err)
		} else if stop != "" {
			return s.finish(out, stop)
		}
		if out.Steps >= s.lim.MaxSteps {
			return s.finish(out, StopMaxSteps)
		}
		maxTokens, stop := s.requestBudget(out, functions)
		if stop != "" {
			return s.finish(out, stop)
		}
		out.Steps++
		step := out.Steps
		stepCtx, span := s.opts.Engine.Tracing().StartAgentStep(runCtx, step, s.llm.Model)
		resp, err := s.client.Chat(stepCtx, llm.ChatRequest{
			Messages:     s.history,
			Tools:        functions,
			MaxTokens:    maxTokens,
			Stream:       s.llm.Stream,
			OnDelta:      s.opts.OnText,
			MaxRetries:   s.llm.MaxRetries,
			RetryBackoff: s.opts.RetryBackoff,
			OnRetry: func(attempt int, wait time.Duration, err error) {
				s.emit(Event{Type: EventRetry, Step: step, Attempt: attempt, WaitMS: wait.Milliseconds(), Error: fault.As(err)})
			},
		})
		if err != nil {
			span.End(err)
			if stop, cerr := s.interrupted(ctx, runCtx); cerr != nil {
				return s.fail(out, cerr)
			} else if stop != "" {
				return s.finish(out, stop)
			}
			return s.fail(out, err)
		}
		span.Usage(resp.PromptTokens, resp.CompletionTokens, len(resp.Message.ToolCalls))
		out.PromptTokens += resp.PromptTokens
		out.CompletionTokens += resp.CompletionTokens
		out.Cost += resp.Cost
		s.emit(Event{Type: EventUsage, Step: step, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens,
			Cost: resp.Cost, Estimated: resp.Estimated, Streamed: resp.Streamed, Retries: resp.Retries, FinishReason: resp.FinishReason})
		s.logger.Debug("model answered", logKeyStep, step, logKeyToolCalls, len(resp.Message.ToolCalls), logKeyTokens, resp.PromptTokens+resp.CompletionTokens)
		msg := resp.Message
		s.history = append(s.history, msg)
		s.emit(Event{Type: EventMessage, Role: llm.RoleAssistant, Content: msg.Content, Calls: s.redactCalls(msg.ToolCalls)})
		if msg.Content != "" {
			out.Answer = msg.Content
		}
		if len(msg.ToolCalls) == 0 {
			span.End(nil)
			out.Stop = StopAnswered
			return out, nil
		}
		if s.opts.OnText != nil && msg.Content != "" {
			s.opts.OnText("\n")
		}
		overLimit := s.runTools(stepCtx, step, msg.ToolCalls, out)
		span.End(nil)
		if overLimit {
			return s.finish(out, StopMaxToolCalls)
		}
	}
}

// requestBudget returns the max_tokens for the next request under the
// token and cost limits, or the limit that leaves no room for it.
func (s *Session) requestBudget(out *Outcome, functions []llm.Function) (int, Stop) {
	prompt := llm.EstimateChatTokens(s.history, functions)
	maxTokens := 0
	if s.lim.MaxTokens > 0 {
		left := s.lim.MaxTokens - out.PromptTokens - out.CompletionTokens - prompt
		if left < 1 {
			return 0, StopMaxTokens
		}
		maxTokens = left
	}
	if s.lim.MaxCost > 0 {
		cfg := s.client.Config()
		left := s.lim.MaxCost - out.Cost - s.client.Cost(prompt, 0)
		if left <= 0 {
			return 0, StopMaxCost
		}
		if cfg.CompletionPrice > 0 {
			// The epsilon keeps 0.25-0.2 from buying 49 tokens instead of 50.
			n := int(min(left*1e6/cfg.CompletionPrice+1e-6, float64(1<<31-1)))
			if n < 1 {
				return 0, StopMaxCost
			}
			if maxTokens == 0 || n < maxTokens {
				maxTokens = n
			}
		}
	}
	return maxTokens, ""
}
