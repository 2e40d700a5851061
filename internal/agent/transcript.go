package agent

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// EventType names what an Event records.
type EventType string

// The events of a run, in the order they can happen.
const (
	// EventStart opens a session: the model and the tools offered.
	EventStart EventType = "start"
	// EventMessage is a system, user or assistant message.
	EventMessage EventType = "message"
	// EventUsage is one model request's token counts and cost.
	EventUsage EventType = "usage"
	// EventRetry is a model request about to be sent again.
	EventRetry EventType = "retry"
	// EventToolCall is a call the model asked for (arguments redacted).
	EventToolCall EventType = "tool_call"
	// EventToolResult is what went back to the model for a call.
	EventToolResult EventType = "tool_result"
	// EventLimit is a limit (or the stop switch) ending the run.
	EventLimit EventType = "limit"
	// EventEnd closes a prompt's run with its totals.
	EventEnd EventType = "end"
)

// Event is one line of the transcript (--transcript FILE, JSON lines), and
// what Options.OnEvent receives.
type Event struct {
	Time time.Time `json:"time"`
	Type EventType `json:"type"`

	Model string   `json:"model,omitempty"`
	Tools []string `json:"tools,omitempty"`

	Role    string         `json:"role,omitempty"`
	Content string         `json:"content,omitempty"`
	Calls   []llm.ToolCall `json:"tool_calls,omitempty"`
	// Images counts the images a message or result carried.
	Images int `json:"images,omitempty"`

	Step             int     `json:"step,omitempty"`
	PromptTokens     int     `json:"prompt_tokens,omitempty"`
	CompletionTokens int     `json:"completion_tokens,omitempty"`
	Cost             float64 `json:"cost,omitempty"`
	Estimated        bool    `json:"estimated,omitempty"`
	Streamed         bool    `json:"streamed,omitempty"`
	Retries          int     `json:"retries,omitempty"`
	FinishReason     string  `json:"finish_reason,omitempty"`
	Attempt          int     `json:"attempt,omitempty"`
	WaitMS           int64   `json:"wait_ms,omitempty"`

	ID         string `json:"id,omitempty"`
	Name       string `json:"name,omitempty"`
	Server     string `json:"server,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Arguments  string `json:"arguments,omitempty"`
	Status     string `json:"status,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Partial    bool   `json:"partial,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`

	Stop      Stop         `json:"stop,omitempty"`
	Message   string       `json:"message,omitempty"`
	Steps     int          `json:"steps,omitempty"`
	ToolCalls int          `json:"tool_calls_total,omitempty"`
	Error     *fault.Error `json:"error,omitempty"`
}

// emit stamps an event, writes it to the transcript and hands it to
// OnEvent. A transcript that cannot be written is remembered
// (TranscriptErr) and the run goes on.
func (s *Session) emit(ev Event) {
	ev.Time = s.now().UTC()
	s.tmu.Lock()
	defer s.tmu.Unlock()
	if w := s.opts.Transcript; w != nil && s.transcriptErr == nil {
		b, err := json.Marshal(ev)
		if err == nil {
			b = append(b, '\n')
			_, err = w.Write(b)
		}
		if err != nil {
			s.transcriptErr = fmt.Errorf("writing the transcript: %w", err)
		}
	}
	if s.opts.OnEvent != nil {
		s.opts.OnEvent(ev)
	}
}
