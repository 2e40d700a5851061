package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/shared"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// This file is the chat with tools the agent holds: function definitions,
// tool calls and tool messages, image parts, streamed answers, and bounded
// retries of rate-limited and failing requests.

// RoleTool is the role of a message carrying a tool's result.
const RoleTool = "tool"

// ChatMessage is one message of a conversation with tools.
type ChatMessage struct {
	Role    string `json:"role"` // system, user, assistant or tool
	Content string `json:"content,omitempty"`
	// Images are sent after the text as image parts (user messages only).
	Images []Image `json:"images,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Image is an image sent to a model that accepts images.
type Image struct {
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"data"`
}

// ToolCall is a function call the model asks for. Arguments is the JSON
// text exactly as the model wrote it, which may not be valid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Function is a tool offered to the model.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"` // a JSON Schema object
}

// ChatRequest is one turn of a conversation.
type ChatRequest struct {
	Messages []ChatMessage
	Tools    []Function
	// MaxTokens bounds the answer; 0 leaves it to the endpoint.
	MaxTokens int
	// Stream asks for the answer as server-sent events; OnDelta receives
	// the text as it arrives. An endpoint that answers with a whole
	// completion instead is accepted (OnDelta then gets the text at once).
	Stream  bool
	OnDelta func(text string)
	// MaxRetries is how many times a request answered with 429 or 5xx is
	// sent again (0: never). A 429 waits as long as the endpoint's
	// Retry-After (or retry-after-ms) says, at most MaxRetryWait; other
	// failures back off from RetryBackoff, doubling. No retry outlasts the
	// context's deadline.
	MaxRetries int
	// RetryBackoff is the first wait before retrying a 5xx (default 1s).
	RetryBackoff time.Duration
	// OnRetry is told about each retry before its wait.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// ChatResponse is the model's answer to one turn and what it cost.
type ChatResponse struct {
	// Message is the assistant message: text, tool calls or both.
	Message                        ChatMessage
	Model                          string
	PromptTokens, CompletionTokens int
	Cost                           float64
	FinishReason                   string
	// Truncated reports an answer cut at max_tokens.
	Truncated bool
	// Estimated reports that the endpoint gave no usage, so the token
	// counts are estimates.
	Estimated bool
	// Streamed reports that the answer came as server-sent events.
	Streamed bool
	// Retries is how many times the request was sent again.
	Retries int
}

// MaxRetryWait bounds a wait the endpoint asks for with Retry-After.
const MaxRetryWait = time.Minute

// DefaultRetryBackoff is the first wait before retrying a failed request.
const DefaultRetryBackoff = time.Second

// Error details Chat adds to endpoint errors.
const (
	// DetailStatus is the HTTP status (int).
	DetailStatus = "status"
	// DetailRetryAfter is the wait the endpoint asked for (a duration
	// string), on 429 and 503 answers that say.
	DetailRetryAfter = "retry_after"
)

// EstimateChatTokens estimates how many tokens msgs and tools take as a
// prompt (a token per four bytes, plus overheads; an image counts 85).
func EstimateChatTokens(msgs []ChatMessage, tools []Function) int {
	n := 3
	for _, m := range msgs {
		n += 4 + estimateText(m.Content) + 85*len(m.Images)
		for _, tc := range m.ToolCalls {
			n += 4 + estimateText(tc.Name) + estimateText(tc.Arguments)
		}
	}
	for _, f := range tools {
		b, _ := json.Marshal(f)
		n += estimateText(string(b))
	}
	return n
}

// Chat asks for the next assistant message of a conversation with tools.
// Errors are *fault.Error, as for Complete; a request answered with 429 or
// 5xx is retried as req.MaxRetries says.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatResponse, error) {
	params, err := c.chatParams(req)
	if err != nil {
		return nil, err
	}
	backoff := req.RetryBackoff
	if backoff <= 0 {
		backoff = DefaultRetryBackoff
	}
	for attempt := 0; ; attempt++ {
		var resp *ChatResponse
		var err error
		if req.Stream {
			resp, err = c.chatStream(ctx, params, req)
		} else {
			resp, err = c.chatOnce(ctx, params, req)
		}
		if err == nil {
			resp.Retries = attempt
			c.account(resp, req)
			return resp, nil
		}
		wait, retry := retryWait(err, attempt, backoff)
		if !retry || attempt >= req.MaxRetries {
			return nil, err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, err // waiting would outlast the caller's time
		}
		if req.OnRetry != nil {
			req.OnRetry(attempt+1, wait, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, c.classify(ctx, ctx.Err())
		}
	}
}

// retryWait says whether a failed request is worth sending again and how
// long to wait first.
func retryWait(err error, attempt int, backoff time.Duration) (time.Duration, bool) {
	fe := fault.As(err)
	if fe == nil {
		return 0, false
	}
	status, _ := fe.Details[DetailStatus].(int)
	if status != http.StatusTooManyRequests && status < 500 {
		return 0, false
	}
	if s, ok := fe.Details[DetailRetryAfter].(string); ok {
		if d, perr := time.ParseDuration(s); perr == nil {
			return d, true
		}
	}
	return min(backoff<<min(attempt, 10), MaxRetryWait), true
}

// account fills in the usage estimates and the cost.
func (c *Client) account(resp *ChatResponse, req ChatRequest) {
	if resp.PromptTokens == 0 && resp.CompletionTokens == 0 {
		resp.PromptTokens = EstimateChatTokens(req.Messages, req.Tools)
		resp.CompletionTokens = EstimateChatTokens([]ChatMessage{resp.Message}, nil) - 7
		resp.Estimated = true
	}
	resp.Cost = c.Cost(resp.PromptTokens, resp.CompletionTokens)
	if resp.Model == "" {
		resp.Model = c.cfg.Model
	}
	resp.Truncated = resp.FinishReason == "length"
}

// chatParams builds the request body.
func (c *Client) chatParams(req ChatRequest) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: c.cfg.Model}
	if len(req.Messages) == 0 {
		return params, fault.New(fault.Validation, "A chat needs at least one message")
	}
	if req.MaxTokens < 0 || req.MaxRetries < 0 {
		return params, fault.New(fault.Validation, "MaxTokens and MaxRetries must not be negative")
	}
	for i, m := range req.Messages {
		msg, err := messageParam(m)
		if err != nil {
			return params, fault.New(fault.Validation, "message %d: %v", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, f := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: f.Name}
		if f.Description != "" {
			def.Description = openai.String(f.Description)
		}
		if f.Parameters != nil {
			def.Parameters = shared.FunctionParameters(f.Parameters)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionToolParam{Function: def})
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(min(req.MaxTokens, math.MaxInt32)))
	}
	return params, nil
}

// messageParam converts one message to the wire form.
func messageParam(m ChatMessage) (openai.ChatCompletionMessageParamUnion, error) {
	if len(m.Images) > 0 && m.Role != RoleUser {
		return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("only user messages carry images, not %s", m.Role)
	}
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		if len(m.Images) == 0 {
			return openai.UserMessage(m.Content), nil
		}
		parts := []openai.ChatCompletionContentPartUnionParam{}
		if m.Content != "" {
			parts = append(parts, openai.TextContentPart(m.Content))
		}
		for _, img := range m.Images {
			url := "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
		}
		return openai.UserMessage(parts), nil
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallParam{
				ID:       tc.ID,
				Function: openai.ChatCompletionMessageToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("a tool message needs the id of the call it answers")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("role %q; want system, user, assistant or tool", m.Role)
}

// chatOnce sends a non-streaming request.
func (c *Client) chatOnce(ctx context.Context, params openai.ChatCompletionNewParams, req ChatRequest) (*ChatResponse, error) {
	resp, err := c.chat.New(ctx, params)
	if err != nil {
		return nil, c.chatError(ctx, err)
	}
	out, err := c.fromCompletion(resp)
	if err != nil {
		return nil, err
	}
	if req.OnDelta != nil && out.Message.Content != "" {
		req.OnDelta(out.Message.Content)
	}
	return out, nil
}

// fromCompletion reads a whole completion.
func (c *Client) fromCompletion(resp *openai.ChatCompletion) (*ChatResponse, error) {
	if len(resp.Choices) == 0 {
		return nil, fault.New(fault.Protocol, "The language model endpoint returned no choices").WithDetail("model", c.cfg.Model)
	}
	ch := resp.Choices[0]
	out := &ChatResponse{
		Message:          ChatMessage{Role: RoleAssistant, Content: ch.Message.Content},
		Model:            resp.Model,
		PromptTokens:     int(resp.Usage.PromptTokens),
		CompletionTokens: int(resp.Usage.CompletionTokens),
		FinishReason:     ch.FinishReason,
	}
	for _, tc := range ch.Message.ToolCalls {
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out, nil
}

// chatStream sends a streaming request and gathers the chunks. An
// endpoint that ignores "stream" and answers with a JSON completion is read
// as such.
func (c *Client) chatStream(ctx context.Context, params openai.ChatCompletionNewParams, req ChatRequest) (*ChatResponse, error) {
	params.StreamOptions.IncludeUsage = openai.Bool(true)
	var whole []byte // the body of a non-streamed answer
	keepJSON := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		if err != nil || res.StatusCode >= 300 {
			return res, err
		}
		ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
		if ct == "application/json" {
			b, rerr := io.ReadAll(io.LimitReader(res.Body, 64<<20))
			res.Body.Close()
			if rerr != nil {
				return nil, rerr
			}
			whole = b
			res.Body = io.NopCloser(bytes.NewReader(nil))
		}
		return res, nil
	})
	stream := c.chat.NewStreaming(ctx, params, keepJSON)
	defer stream.Close()
	out := &ChatResponse{Message: ChatMessage{Role: RoleAssistant}, Streamed: true}
	var text strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	chunks := 0
	for stream.Next() {
		chunks++
		ch := stream.Current()
		if ch.Model != "" {
			out.Model = ch.Model
		}
		if ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0 {
			out.PromptTokens, out.CompletionTokens = int(ch.Usage.PromptTokens), int(ch.Usage.CompletionTokens)
		}
		if len(ch.Choices) == 0 {
			continue
		}
		choice := ch.Choices[0]
		if choice.FinishReason != "" {
			out.FinishReason = choice.FinishReason
		}
		if d := choice.Delta.Content; d != "" {
			text.WriteString(d)
			if req.OnDelta != nil {
				req.OnDelta(d)
			}
		}
		for _, tc := range choice.Delta.ToolCalls {
			i := int(tc.Index)
			if i < 0 || i > 1000 {
				return nil, fault.New(fault.Protocol, "The language model at %s streamed a tool call with index %d", c.endpointName(), i)
			}
			for len(calls) <= i {
				calls = append(calls, &partial{})
			}
			p := calls[i]
			if tc.ID != "" {
				p.id = tc.ID
			}
			if tc.Function.Name != "" {
				p.name += tc.Function.Name
			}
			p.args.WriteString(tc.Function.Arguments)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, c.chatError(ctx, err)
	}
	if chunks == 0 && whole != nil {
		var cc openai.ChatCompletion
		if err := json.Unmarshal(whole, &cc); err != nil {
			return nil, fault.Wrap(fault.Protocol, err, "The language model at %s gave an unusable answer", c.endpointName())
		}
		resp, err := c.fromCompletion(&cc)
		if err != nil {
			return nil, err
		}
		if req.OnDelta != nil && resp.Message.Content != "" {
			req.OnDelta(resp.Message.Content)
		}
		return resp, nil
	}
	if chunks == 0 {
		return nil, fault.New(fault.Protocol, "The language model at %s closed the stream without an answer", c.endpointName()).
			WithDetail("model", c.cfg.Model)
	}
	out.Message.Content = text.String()
	for i, p := range calls {
		if p.id == "" {
			p.id = "call_" + strconv.Itoa(i)
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, ToolCall{ID: p.id, Name: p.name, Arguments: p.args.String()})
	}
	return out, nil
}

// chatError classifies a failed chat request, noting the status and any
// wait the endpoint asked for, so that Chat can decide about retrying.
func (c *Client) chatError(ctx context.Context, err error) *fault.Error {
	fe := c.classify(ctx, err)
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		if d, ok := retryAfter(apiErr.Response.Header, time.Now()); ok {
			fe.WithDetail(DetailRetryAfter, d.String())
		}
		fe.WithDetail(DetailStatus, apiErr.StatusCode)
	}
	return fe
}

// retryAfter reads the wait an endpoint asks for: retry-after-ms (OpenAI),
// else Retry-After in seconds or as an HTTP date. It is capped at
// MaxRetryWait.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if s := strings.TrimSpace(h.Get("Retry-After-Ms")); s != "" {
		if ms, err := strconv.ParseFloat(s, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return min(time.Duration(ms*float64(time.Millisecond)), MaxRetryWait), true
		}
	}
	s := strings.TrimSpace(h.Get("Retry-After"))
	if s == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil && secs >= 0 && !math.IsInf(secs, 0) {
		return min(time.Duration(secs*float64(time.Second)), MaxRetryWait), true
	}
	if t, err := http.ParseTime(s); err == nil {
		return min(max(t.Sub(now), 0), MaxRetryWait), true
	}
	return 0, false
}
