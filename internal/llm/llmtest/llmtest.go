// Package llmtest runs a scripted OpenAI-compatible chat completions
// endpoint for tests: a real HTTP server on 127.0.0.1 that speaks the
// non-streaming /v1/chat/completions wire format, answers each request as
// a script says (text, token usage, HTTP status, delay) and records what it
// received.
package llmtest

import (
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
	// FinishReason defaults to "stop".
	FinishReason string
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
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
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
	if wr.Stream {
		writeError(w, http.StatusBadRequest, "llmtest does not stream", "invalid_request_error")
		return
	}
	req := Request{Model: wr.Model, MaxTokens: wr.MaxTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = wr.MaxCompletionTokens
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.APIKey = auth
	}
	for _, m := range wr.Messages {
		req.Messages = append(req.Messages, llm.Message{Role: m.Role, Content: contentText(m.Content)})
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
	}
	model := req.Model
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", len(s.Requests())),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": resp.Text},
			"finish_reason": finish,
		}},
		"usage": map[string]any{
			"prompt_tokens":     prompt,
			"completion_tokens": completion,
			"total_tokens":      prompt + completion,
		},
	})
}

// contentText returns a message's content, given as a string or as an
// array of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
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
