package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// toolOutcome is what one tool call gives back to the model.
type toolOutcome struct {
	content string
	images  []llm.Image
	event   Event
}

// runTools runs one turn's tool calls concurrently and appends their
// results to the history in the order the model asked for them. Calls past
// the tool call limit are not run; it reports whether there were any.
func (s *Session) runTools(ctx context.Context, step int, calls []llm.ToolCall, out *Outcome) (overLimit bool) {
	allowed := len(calls)
	if s.lim.MaxToolCalls > 0 {
		allowed = max(0, min(allowed, s.lim.MaxToolCalls-out.ToolCalls))
	}
	results := make([]toolOutcome, len(calls))
	var wg sync.WaitGroup
	for i, tc := range calls {
		s.emit(Event{Type: EventToolCall, Step: step, ID: tc.ID, Name: tc.Name, Arguments: s.redactArgs(tc.Arguments)})
		if i >= allowed {
			results[i] = toolOutcome{
				content: fmt.Sprintf("Not run: the agent's tool call limit (%d) was reached.", s.lim.MaxToolCalls),
				event:   Event{Status: "not_run"},
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.callTool(ctx, step, tc)
		}()
	}
	wg.Wait()
	out.ToolCalls += allowed

	var images []llm.Image
	for i, tc := range calls {
		r := results[i]
		s.history = append(s.history, llm.ChatMessage{Role: llm.RoleTool, ToolCallID: tc.ID, Content: r.content})
		ev := r.event
		ev.Type, ev.Step, ev.ID, ev.Name, ev.Content = EventToolResult, step, tc.ID, tc.Name, r.content
		ev.Images = len(r.images)
		s.emit(ev)
		images = append(images, r.images...)
	}
	if len(images) > 0 {
		note := fmt.Sprintf("The tool calls above returned %d image(s), attached here in order.", len(images))
		s.history = append(s.history, llm.ChatMessage{Role: llm.RoleUser, Content: note, Images: images})
		s.emit(Event{Type: EventMessage, Role: llm.RoleUser, Content: note, Images: len(images)})
	}
	return allowed < len(calls)
}

// callTool runs one call through the engine. Every failure becomes a tool
// message the model can read: the tool does not exist, the arguments are
// not a JSON object, the engine refused or the call failed.
func (s *Session) callTool(ctx context.Context, step int, tc llm.ToolCall) toolOutcome {
	tool, ok := s.tools.Lookup(tc.Name)
	if !ok {
		msg := fmt.Sprintf("There is no tool named %q.", tc.Name)
		if sug := suggest.Closest(tc.Name, s.tools.Names(), 1); len(sug) > 0 {
			msg += fmt.Sprintf(" Did you mean %q?", sug[0])
		}
		msg += " Call only the functions you were given."
		s.logger.Info("model called an unknown tool", logKeyTool, tc.Name)
		return toolError(fault.New(fault.NotFound, "%s", msg), "unknown_tool")
	}
	raw, why := decodeArguments(tc.Arguments)
	if why != "" {
		s.logger.Info("model sent malformed arguments", logKeyTool, tc.Name, logKeyArgBytes, len(tc.Arguments))
		fe := fault.New(fault.Validation, "The arguments for %s are %s.", tc.Name, why).
			WithSuggestions("Send the arguments as one JSON object matching the tool's parameters schema.")
		return toolError(fe, "bad_arguments")
	}
	ctx = answer.With(ctx, &policyAnswerer{elicitation: s.opts.Config.Agent.Elicitation, urls: s.opts.URLCompleter, logger: s.logger})
	res, err := s.opts.Engine.Call(ctx, toolcall.Request{
		Server:       tool.Server,
		Tool:         tool.Tool,
		RawArguments: raw,
		Source:       toolcall.SourceAgent,
		Identity:     s.opts.Identity,
		SessionID:    s.opts.SessionID,
		Origin:       s.callOrigin(step, tc.ID),
	})
	if err != nil {
		s.logger.Info("tool call failed", logKeyServer, tool.Server, logKeyTool, tool.Tool, logKeyStatus, string(fault.KindOf(err)))
		if need := urlsRequired(err); need != nil {
			err = urlsNotCompleted(err, need, tc.Name)
		}
		o := toolError(err, "error")
		o.event.Server, o.event.Tool = tool.Server, tool.Tool
		return o
	}
	s.logger.Debug("tool call finished", logKeyServer, tool.Server, logKeyTool, tool.Tool, logKeyStatus, string(res.Status))
	content, images := s.render(res)
	return toolOutcome{content: content, images: images, event: Event{
		Server: tool.Server, Tool: tool.Tool, Status: string(res.Status), IsError: res.IsError,
		DurationMS: res.Duration.Milliseconds(), Truncated: res.Truncated, Partial: res.Partial,
	}}
}

// callOrigin is the origin recorded with a tool call the model asked
// for: the step and the model's id for the call, after what started the
// run (Options.Origin), if anything did.
func (s *Session) callOrigin(step int, id string) string {
	o := fmt.Sprintf("agent step %d, tool call %s", step, id)
	if s.opts.Origin != "" {
		o = s.opts.Origin + ", " + o
	}
	return o
}

// toolError renders an error for the model: the message, then the
// structured error (seed 002's form) so that it can correct the call.
func toolError(err error, status string) toolOutcome {
	fe := fault.As(err)
	if fe == nil {
		fe = fault.Wrap(fault.Internal, err, "%s", err.Error())
	}
	b, _ := json.Marshal(fe)
	content := "Error: " + fe.Message + "\n" + string(b)
	return toolOutcome{content: content, event: Event{Status: status, IsError: true, Error: fe}}
}

// render turns a result into a tool message's text, and the images to pass
// on when the model accepts images.
func (s *Session) render(res *toolcall.Result) (string, []llm.Image) {
	var b strings.Builder
	var images []llm.Image
	if res.IsError {
		b.WriteString("The tool reported an error:\n")
	}
	for _, c := range res.Content {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			if s.llm.Vision {
				images = append(images, llm.Image{MIMEType: c.MIMEType, Data: c.Data})
				fmt.Fprintf(&b, "[image %d: %s, %d bytes; attached in the next message]", len(images), c.MIMEType, len(c.Data))
			} else {
				fmt.Fprintf(&b, "[image: %s, %d bytes; not shown, because this model does not accept images]", c.MIMEType, len(c.Data))
			}
		case *mcp.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %d bytes; not shown]", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(&b, "[resource link: %s", c.URI)
			if c.Name != "" {
				fmt.Fprintf(&b, " (%s)", c.Name)
			}
			if c.Description != "" {
				fmt.Fprintf(&b, ": %s", c.Description)
			}
			b.WriteByte(']')
		case *mcp.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
				b.WriteString("[empty embedded resource]")
			case r.Text != "":
				fmt.Fprintf(&b, "[resource %s]\n%s", r.URI, r.Text)
			default:
				fmt.Fprintf(&b, "[resource %s: %s, %d bytes of binary data; not shown]", r.URI, r.MIMEType, len(r.Blob))
			}
		default:
			fmt.Fprintf(&b, "[content of type %T; not shown]", c)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			b.Write(j)
		}
	}
	if res.Partial {
		fmt.Fprintf(&b, "\n[partial result: the call's budget ended it early; missing: %s]", res.Missing)
	}
	if b.Len() == 0 {
		b.WriteString("(the tool returned no content)")
	}
	return b.String(), images
}

// redactArgs returns the arguments for the transcript with configured
// secrets and token shapes redacted.
func (s *Session) redactArgs(args string) string {
	return s.opts.Engine.Redactor().String(args)
}

// redactCalls returns tool calls with their arguments redacted, for the
// transcript.
func (s *Session) redactCalls(calls []llm.ToolCall) []llm.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		c.Arguments = s.redactArgs(c.Arguments)
		out[i] = c
	}
	return out
}

// decodeArguments checks that a model's arguments are one JSON object
// (empty means {}) and returns them; otherwise it says what is wrong.
func decodeArguments(args string) (json.RawMessage, string) {
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) == 0 {
		return json.RawMessage("{}"), ""
	}
	var v json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		return nil, "not valid JSON: " + err.Error()
	}
	if dec.More() {
		return nil, "more than one JSON value; they must be one JSON object"
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "not valid JSON after the first value; they must be one JSON object"
	}
	if kind := jsonKind(v[0]); kind != "object" {
		return nil, "a JSON " + kind + "; they must be a JSON object"
	}
	return json.RawMessage(raw), ""
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// urlsRequired returns the URL elicitations a call's server required
// (error -32042) when that is why the call failed, or nil.
func urlsRequired(err error) *upstream.URLElicitationRequired {
	var need *upstream.URLElicitationRequired
	if fault.KindOf(err) == fault.ElicitationRequired && errors.As(err, &need) && len(need.Elicitations) > 0 {
		return need
	}
	return nil
}

// urlsNotCompleted is what the model is told of a call whose server
// requires the person to complete pages in a browser first, which no one
// did during the run: each page's message, host and whole URL (the model
// is to pass them on: the person reads the answer or the transcript), and
// what to do.
func urlsNotCompleted(err error, need *upstream.URLElicitationRequired, tool string) error {
	var b strings.Builder
	for i, el := range need.Elicitations {
		fmt.Fprintf(&b, " %d. %q: open %s (on %s).", i+1, el.Message, el.URL, upstream.URLHost(el.URL))
	}
	steps := "a step"
	if len(need.Elicitations) > 1 {
		steps = fmt.Sprintf("%d steps", len(need.Elicitations))
	}
	return fault.Wrap(fault.ElicitationRequired, err, "%s requires the user to complete %s in a web browser before it answers %s, and it was not completed during this run:%s",
		need.Server, steps, tool, b.String()).
		WithDetail("server", need.Server).
		WithSuggestions("Tell the user to open each URL in a browser and finish there, then to ask again; do not call this tool again before they have.",
			"A person at a terminal running switchboard agent is asked to complete them, and the call is then made again.")
}
