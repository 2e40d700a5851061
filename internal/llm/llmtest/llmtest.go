// Package llmtest runs a scripted OpenAI-compatible chat completions
// endpoint for tests: a real HTTP server on 127.0.0.1 that speaks the
// /v1/chat/completions wire format, whole or streamed as server-sent
// events, answers each request as a script says (text, tool calls, token
// usage, HTTP status and headers, delay) and records what it received,
// tool definitions and tool messages included.
package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// Request is what the server received in one chat completion request.
type Request struct {
	Model     string
	Messages  []llm.Message
	MaxTokens int // max_tokens (or max_completion_tokens); 0 when absent
	// APIKey is the bearer token of the Authorization header, "" when none.
	APIKey string
	// Chat is the whole conversation (tool calls, tool messages, images),
	// set only when the request carried tools or any message that plain
	// Messages cannot show; nil for plain text chats.
	Chat []llm.ChatMessage
	// Tools are the function definitions offered, nil when none.
	Tools []llm.Function
	// Stream reports that the client asked for server-sent events.
	Stream bool
}

// Response is the scripted answer to one request.
type Response struct {
	Text string
	// PromptTokens and CompletionTokens are the usage reported; when both
	// are 0 the server reports len/4 estimates of the prompt and the text.
	PromptTokens, CompletionTokens int
	// Status, when not 0 or 200, makes the server answer with an
	// OpenAI-style error body of that status, whose message is Text.
	Status int
	// Delay holds the answer back (until the client gives up or the
	// server closes).
	Delay time.Duration
	// FinishReason defaults to "stop", or "tool_calls" with ToolCalls.
	FinishReason string
	// ToolCalls are function calls to answer with; Arguments is sent as
	// written, so a test can send malformed JSON.
	ToolCalls []llm.ToolCall
	// Header is added to the answer (e.g. Retry-After on a 429).
	Header map[string]string
	// NoStream answers a streaming request with a whole JSON completion,
	// as endpoints that ignore "stream" do.
	NoStream bool
	// NoUsage leaves the usage out of the answer.
	NoUsage bool
}

// Server is a running scripted endpoint. It is closed when the test ends.
type Server struct {
	srv    *httptest.Server
	script func(Request) Response
	done   chan struct{}

	mu       sync.Mutex
	requests []Request
}

// NewServer starts a scripted endpoint; script decides each answer. It is
// called concurrently when requests are.
func NewServer(t testing.TB, script func(req Request) Response) *Server {
	t.Helper()
	s := &Server{script: script, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path), "invalid_request_error")
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.done)
		s.srv.Close()
	})
	return s
}

// URL returns the base URL, including /v1, to use as llm.Config.BaseURL.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Requests returns the requests received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// wireRequest is the part of a chat completion request the server reads.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string       `json:"type"`
		Function llm.Function `json:"function"`
	} `json:"tools"`
	MaxTokens           int  `json:"max_tokens"`
	MaxCompletionTokens int  `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
}

// chatCompletions answers POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var wr wireRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20)).Decode(&wr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error(), "invalid_request_error")
		return
	}
	req := Request{Model: wr.Model, MaxTokens: wr.MaxTokens, Stream: wr.Stream}
	if req.MaxTokens == 0 {
		req.MaxTokens = wr.MaxCompletionTokens
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.APIKey = auth
	}
	rich := len(wr.Tools) > 0
	var chat []llm.ChatMessage
	for _, m := range wr.Messages {
		text, images := contentParts(m.Content)
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: text})
		cm := llm.ChatMessage{Role: m.Role, Content: text, Images: images, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if len(images) > 0 || len(cm.ToolCalls) > 0 || m.ToolCallID != "" || m.Role == llm.RoleTool {
			rich = true
		}
		chat = append(chat, cm)
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function)
	}
	if rich {
		req.Chat = chat
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	resp := s.script(req)
	if resp.Delay > 0 {
		t := time.NewTimer(resp.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			return
		}
	}
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		writeError(w, resp.Status, resp.Text, errorType(resp.Status))
		return
	}
	prompt, completion := resp.PromptTokens, resp.CompletionTokens
	if prompt == 0 && completion == 0 {
		prompt = llm.EstimateTokens(req.Messages)
		completion = (len(resp.Text) + 3) / 4
	}
	finish := resp.FinishReason
	if finish == "" {
		finish = "stop"
		if len(resp.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	usage := map[string]any{
		"prompt_tokens":     prompt,
		"completion_tokens": completion,
		"total_tokens":      prompt + completion,
	}
	id := fmt.Sprintf("chatcmpl-llmtest-%d", len(s.Requests()))
	if req.Stream && !resp.NoStream {
		s.stream(w, id, req.Model, resp, finish, usage)
		return
	}
	msg := map[string]any{"role": "assistant", "content": resp.Text}
	if len(resp.ToolCalls) > 0 {
		msg["tool_calls"] = wireToolCalls(resp.ToolCalls)
		if resp.Text == "" {
			msg["content"] = nil
		}
	}
	body := map[string]any{
		"id":      id,
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       msg,
			"finish_reason": finish,
		}},
	}
	if !resp.NoUsage {
		body["usage"] = usage
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// stream answers as server-sent events: the text in a few pieces, each
// tool call in two (name, then arguments), the finish reason, the usage,
// then [DONE].
func (s *Server) stream(w http.ResponseWriter, id, model string, resp Response, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(choices []map[string]any, usage any) {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": model, "choices": choices, "usage": usage,
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(d map[string]any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": nil}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}), nil)
	for _, piece := range pieces(resp.Text) {
		send(delta(map[string]any{"content": piece}), nil)
	}
	for i, tc := range resp.ToolCalls {
		send(delta(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}), nil)
		send(delta(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "function": map[string]any{"arguments": tc.Arguments},
		}}}), nil)
	}
	send([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	if !resp.NoUsage {
		send([]map[string]any{}, usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// pieces splits text into up to three chunks, as a model streams it.
func pieces(text string) []string {
	if text == "" {
		return nil
	}
	words := strings.SplitAfter(text, " ")
	n := max(1, (len(words)+2)/3)
	var out []string
	for i := 0; i < len(words); i += n {
		out = append(out, strings.Join(words[i:min(i+n, len(words))], ""))
	}
	return out
}

// wireToolCalls renders tool calls as the API sends them.
func wireToolCalls(calls []llm.ToolCall) []map[string]any {
	out := make([]map[string]any, len(calls))
	for i, tc := range calls {
		out[i] = map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
	}
	return out
}

// contentParts returns a message's text, given as a string or as an array
// of parts, and the images among the parts (data: URLs decoded).
func contentParts(raw json.RawMessage) (string, []llm.Image) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw), nil
	}
	var b strings.Builder
	var images []llm.Image
	for _, p := range parts {
		b.WriteString(p.Text)
		if p.Type != "image_url" {
			continue
		}
		img := llm.Image{}
		if rest, ok := strings.CutPrefix(p.ImageURL.URL, "data:"); ok {
			meta, data, _ := strings.Cut(rest, ",")
			img.MIMEType, _ = strings.CutSuffix(meta, ";base64")
			img.Data, _ = base64.StdEncoding.DecodeString(data)
		}
		images = append(images, img)
	}
	return b.String(), images
}

// errorType is the OpenAI error type for a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_api_key"
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, message, typ string) {
	if message == "" {
		message = http.StatusText(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": message, "type": typ, "param": nil, "code": nil},
	})
}
