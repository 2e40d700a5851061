package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
)

const secretKey = "sk-test-0123456789abcdef-SECRET"

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    llm.Config
		wantOK  bool
		wantErr string // substring naming the variable
	}{
		{name: "nothing set", env: nil},
		{name: "only OPENAI_BASE_URL", env: map[string]string{"OPENAI_BASE_URL": "http://x/v1", "OPENAI_API_KEY": "k"}},
		{
			name: "all set",
			env: map[string]string{
				"SWITCHBOARD_LLM_BASE_URL": "http://127.0.0.1:11434/v1", "SWITCHBOARD_LLM_MODEL": "llama3.2",
				"SWITCHBOARD_LLM_API_KEY": "k1", "SWITCHBOARD_LLM_PROMPT_PRICE": "0.15",
				"SWITCHBOARD_LLM_COMPLETION_PRICE": "0.6", "SWITCHBOARD_LLM_TIMEOUT": "90s",
				"OPENAI_API_KEY": "ignored",
			},
			want:   llm.Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2", APIKey: "k1", PromptPrice: 0.15, CompletionPrice: 0.6, Timeout: 90 * time.Second},
			wantOK: true,
		},
		{
			name:   "OpenAI fallbacks",
			env:    map[string]string{"SWITCHBOARD_LLM_MODEL": "gpt-4o-mini", "OPENAI_BASE_URL": "https://proxy.example/v1", "OPENAI_API_KEY": "k2"},
			want:   llm.Config{BaseURL: "https://proxy.example/v1", Model: "gpt-4o-mini", APIKey: "k2"},
			wantOK: true,
		},
		{
			name:   "model only uses the OpenAI endpoint",
			env:    map[string]string{"SWITCHBOARD_LLM_MODEL": "gpt-4o-mini"},
			want:   llm.Config{BaseURL: llm.DefaultBaseURL, Model: "gpt-4o-mini"},
			wantOK: true,
		},
		{name: "base URL without model", env: map[string]string{"SWITCHBOARD_LLM_BASE_URL": "http://x/v1"}, wantErr: "SWITCHBOARD_LLM_MODEL"},
		{name: "bad base URL", env: map[string]string{"SWITCHBOARD_LLM_BASE_URL": "ftp://x", "SWITCHBOARD_LLM_MODEL": "m"}, wantErr: "SWITCHBOARD_LLM_BASE_URL"},
		{name: "base URL with credentials", env: map[string]string{"SWITCHBOARD_LLM_BASE_URL": "http://u:p@x/v1", "SWITCHBOARD_LLM_MODEL": "m"}, wantErr: "SWITCHBOARD_LLM_BASE_URL"},
		{name: "price not a number", env: map[string]string{"SWITCHBOARD_LLM_MODEL": "m", "SWITCHBOARD_LLM_PROMPT_PRICE": "cheap"}, wantErr: "SWITCHBOARD_LLM_PROMPT_PRICE"},
		{name: "negative price", env: map[string]string{"SWITCHBOARD_LLM_MODEL": "m", "SWITCHBOARD_LLM_COMPLETION_PRICE": "-1"}, wantErr: "SWITCHBOARD_LLM_COMPLETION_PRICE"},
		{name: "NaN price", env: map[string]string{"SWITCHBOARD_LLM_MODEL": "m", "SWITCHBOARD_LLM_COMPLETION_PRICE": "NaN"}, wantErr: "SWITCHBOARD_LLM_COMPLETION_PRICE"},
		{name: "bad timeout", env: map[string]string{"SWITCHBOARD_LLM_MODEL": "m", "SWITCHBOARD_LLM_TIMEOUT": "10"}, wantErr: "SWITCHBOARD_LLM_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := llm.ConfigFromEnv(env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one naming %s", err, tt.wantErr)
				}
				if k := fault.KindOf(err); k != fault.Config {
					t.Errorf("got kind %s, want %s", k, fault.Config)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if ok != tt.wantOK {
				t.Fatalf("got ok %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigDoesNotShowTheKey(t *testing.T) {
	cfg := llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKey: secretKey}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("configured", "llm", cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg), logs.String()} {
		if strings.Contains(s, secretKey) {
			t.Errorf("got %q, want no API key in it", s)
		}
		if !strings.Contains(s, "127.0.0.1:1") {
			t.Errorf("got %q, want the base URL in it", s)
		}
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	for _, cfg := range []llm.Config{
		{BaseURL: "http://x/v1"},
		{BaseURL: "not a url", Model: "m"},
		{BaseURL: "http://x/v1", Model: "m", PromptPrice: -1},
		{BaseURL: "http://x/v1", Model: "m", CompletionPrice: math.Inf(1)},
		{BaseURL: "http://x/v1", Model: "m", Timeout: -time.Second},
	} {
		if _, err := llm.New(cfg); fault.KindOf(err) != fault.Config {
			t.Errorf("New(%v): got error %v, want a config error", cfg, err)
		}
	}
}

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{BaseURL: srv.URL(), Model: "test-model", APIKey: secretKey}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestComplete(t *testing.T) {
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "answer to " + req.Messages[len(req.Messages)-1].Content, PromptTokens: 1000, CompletionTokens: 500}
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.PromptPrice, cfg.CompletionPrice = 2, 8 })
	msgs := []llm.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}, {Role: "user", Content: "why?"}}
	got, err := c.Complete(context.Background(), msgs, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Completion{Text: "answer to why?", Model: "test-model", PromptTokens: 1000, CompletionTokens: 500, Cost: (1000*2 + 500*8) / 1e6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("completion mismatch (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	wantReq := llmtest.Request{Model: "test-model", Messages: msgs, APIKey: secretKey}
	if diff := cmp.Diff(wantReq, reqs[0]); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
	if got, want := c.Model(), "test-model"; got != want {
		t.Errorf("got model %q, want %q", got, want)
	}
}

func TestCompleteWithoutUsageEstimates(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "12345678"} })
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.APIKey = "" })
	msgs := []llm.Message{{Role: "user", Content: strings.Repeat("x", 40)}}
	got, err := c.Complete(context.Background(), msgs, 0)
	if err != nil {
		t.Fatal(err)
	}
	// llmtest reports len/4 estimates when the script gives no usage.
	if got.PromptTokens != llm.EstimateTokens(msgs) || got.CompletionTokens != 2 {
		t.Errorf("got tokens %d/%d, want %d/2", got.PromptTokens, got.CompletionTokens, llm.EstimateTokens(msgs))
	}
	if got := srv.Requests()[0].APIKey; got != "" {
		t.Errorf("got API key %q sent, want none", got)
	}
}

func TestCompleteBudget(t *testing.T) {
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if req.MaxTokens > 0 && req.MaxTokens < 50 {
			return llmtest.Response{Text: "cut", PromptTokens: 10, CompletionTokens: req.MaxTokens, FinishReason: "length"}
		}
		return llmtest.Response{Text: "ok", PromptTokens: 10, CompletionTokens: 5}
	})
	// 1 unit per 1M prompt tokens, 10 per 1M completion tokens.
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.PromptPrice, cfg.CompletionPrice = 1, 10 })
	msgs := []llm.Message{{Role: "user", Content: strings.Repeat("word ", 200)}} // 1000 bytes
	prompt := llm.EstimateTokens(msgs)
	if prompt < 250 || prompt > 270 {
		t.Fatalf("got estimate %d tokens for 1000 bytes, want about 250", prompt)
	}

	tests := []struct {
		name          string
		maxCost       float64
		wantMaxTokens int
		wantTruncated bool
		wantKind      fault.Kind
	}{
		{name: "unbounded", maxCost: 0, wantMaxTokens: 0},
		{name: "room for 1000 tokens", maxCost: (float64(prompt)*1 + 1000*10) / 1e6, wantMaxTokens: 1000},
		{name: "room for 20 tokens", maxCost: (float64(prompt)*1 + 20.5*10) / 1e6, wantMaxTokens: 20, wantTruncated: true},
		{name: "prompt alone over budget", maxCost: float64(prompt-1) / 1e6, wantKind: fault.BudgetExceeded},
		{name: "no room for an answer", maxCost: (float64(prompt) + 5) / 1e6, wantKind: fault.BudgetExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			got, err := c.Complete(context.Background(), msgs, tt.maxCost)
			if tt.wantKind != "" {
				if k := fault.KindOf(err); k != tt.wantKind {
					t.Fatalf("got error %v (kind %s), want kind %s", err, k, tt.wantKind)
				}
				if n := len(srv.Requests()); n != before {
					t.Errorf("got %d requests sent, want none", n-before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if n := len(reqs); n != before+1 {
				t.Fatalf("got %d requests sent, want 1", n-before)
			}
			if got := reqs[len(reqs)-1].MaxTokens; got != tt.wantMaxTokens {
				t.Errorf("got max_tokens %d, want %d", got, tt.wantMaxTokens)
			}
			if got.Truncated != tt.wantTruncated {
				t.Errorf("got truncated %v, want %v", got.Truncated, tt.wantTruncated)
			}
			if tt.maxCost > 0 && got.Cost > tt.maxCost {
				t.Errorf("got cost %g, want at most %g", got.Cost, tt.maxCost)
			}
		})
	}
}

func TestCompleteFreeModelIgnoresBudget(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "ok"} })
	c := newClient(t, srv, nil)
	got, err := c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "q"}}, 0.000001)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cost != 0 || srv.Requests()[0].MaxTokens != 0 {
		t.Errorf("got cost %g, max_tokens %d; want 0 and 0 for a free model", got.Cost, srv.Requests()[0].MaxTokens)
	}
}

func TestCompleteErrors(t *testing.T) {
	tests := []struct {
		status   int
		text     string
		wantKind fault.Kind
		wantMsg  string
	}{
		{status: http.StatusUnauthorized, text: "Incorrect API key provided: " + secretKey, wantKind: fault.Authentication, wantMsg: "API key"},
		{status: http.StatusForbidden, wantKind: fault.Authorization, wantMsg: "test-model"},
		{status: http.StatusNotFound, text: `model "test-model" not found, try pulling it first`, wantKind: fault.NotFound, wantMsg: "check the model name"},
		{status: http.StatusTooManyRequests, wantKind: fault.Backend, wantMsg: "rate limiting"},
		{status: http.StatusInternalServerError, wantKind: fault.Backend, wantMsg: "HTTP 500"},
		{status: http.StatusServiceUnavailable, wantKind: fault.Backend, wantMsg: "HTTP 503"},
		{status: http.StatusBadRequest, text: "context length exceeded", wantKind: fault.Backend, wantMsg: "rejected the request"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response {
				return llmtest.Response{Status: tt.status, Text: tt.text}
			})
			c := newClient(t, srv, nil)
			_, err := c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "q"}}, 0)
			var fe *fault.Error
			if !errors.As(err, &fe) {
				t.Fatalf("got error %v, want a *fault.Error", err)
			}
			if fe.Kind != tt.wantKind {
				t.Errorf("got kind %s, want %s", fe.Kind, tt.wantKind)
			}
			if !strings.Contains(fe.Message, tt.wantMsg) {
				t.Errorf("got message %q, want it to contain %q", fe.Message, tt.wantMsg)
			}
			if len(fe.Suggestions) == 0 {
				t.Error("got no suggestions, want advice")
			}
			js, _ := fe.MarshalJSON()
			for _, s := range []string{err.Error(), string(js)} {
				if strings.Contains(s, secretKey) {
					t.Errorf("got %q, want no API key in it", s)
				}
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("got %d requests, want 1 (no silent retries)", n)
			}
		})
	}
}

func TestCompleteTimeout(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "late", Delay: 10 * time.Second}
	})
	c := newClient(t, srv, func(cfg *llm.Config) { cfg.Timeout = 200 * time.Millisecond })
	start := time.Now()
	_, err := c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "q"}}, 0)
	if k := fault.KindOf(err); k != fault.Timeout {
		t.Fatalf("got error %v (kind %s), want kind timeout", err, k)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("got a timeout after %s, want about 200ms", d)
	}

	// The caller's deadline ends it too, as a timeout.
	c = newClient(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, []llm.Message{{Role: "user", Content: "q"}}, 0); fault.KindOf(err) != fault.Timeout {
		t.Errorf("got error %v, want kind timeout", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := c.Complete(ctx, []llm.Message{{Role: "user", Content: "q"}}, 0); fault.KindOf(err) != fault.Cancelled {
		t.Errorf("got error %v, want kind cancelled", err)
	}
}

func TestCompleteConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := llm.New(llm.Config{BaseURL: "http://" + addr + "/v1", Model: "m", APIKey: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "q"}}, 0)
	if k := fault.KindOf(err); k != fault.Connection {
		t.Fatalf("got error %v (kind %s), want kind connection", err, k)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("got %q, want the endpoint named", err.Error())
	}
}

func TestCompleteRejectsBadInput(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "ok"} })
	c := newClient(t, srv, nil)
	for name, tc := range map[string]struct {
		msgs    []llm.Message
		maxCost float64
	}{
		"no messages":   {nil, 0},
		"unknown role":  {[]llm.Message{{Role: "tool", Content: "x"}}, 0},
		"negative cost": {[]llm.Message{{Role: "user", Content: "x"}}, -1},
		"NaN cost":      {[]llm.Message{{Role: "user", Content: "x"}}, math.NaN()},
	} {
		if _, err := c.Complete(context.Background(), tc.msgs, tc.maxCost); fault.KindOf(err) != fault.Validation {
			t.Errorf("%s: got error %v, want a validation error", name, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("got %d requests, want none", n)
	}
}

func TestLLMTestUnknownRoute(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "ok"} })
	c, err := llm.New(llm.Config{BaseURL: strings.TrimSuffix(srv.URL(), "/v1") + "/v2", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), []llm.Message{{Role: "user", Content: "q"}}, 0)
	if k := fault.KindOf(err); k != fault.NotFound {
		t.Errorf("got error %v (kind %s), want not_found for a wrong path", err, k)
	}
}
