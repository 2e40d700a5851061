package llm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
)

var weather = llm.Function{
	Name:        "wx__forecast",
	Description: "Forecast for a city.",
	Parameters:  map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
}

// conversation is a chat that used a tool, with an image from it.
var conversation = []llm.ChatMessage{
	{Role: llm.RoleSystem, Content: "use tools"},
	{Role: llm.RoleUser, Content: "weather in Paris?"},
	{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "wx__forecast", Arguments: `{"city":"Paris"}`}}},
	{Role: llm.RoleTool, ToolCallID: "call_1", Content: "rain, 12°C"},
	{Role: llm.RoleUser, Content: "the map:", Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG fake")}}},
}

func TestChatWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
			return llmtest.Response{
				Text:         "Checking two cities.",
				ToolCalls:    []llm.ToolCall{{ID: "a", Name: "wx__forecast", Arguments: `{"city":"Lyon"}`}, {ID: "b", Name: "wx__forecast", Arguments: `{"city":"Nice"}`}},
				PromptTokens: 120, CompletionTokens: 30,
			}
		})
		c := newClient(t, srv, func(cfg *llm.Config) { cfg.PromptPrice, cfg.CompletionPrice = 1, 2 })
		var deltas []string
		resp, err := c.Chat(context.Background(), llm.ChatRequest{
			Messages: conversation, Tools: []llm.Function{weather}, MaxTokens: 77, Stream: stream,
			OnDelta: func(s string) { deltas = append(deltas, s) },
		})
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		want := &llm.ChatResponse{
			Message: llm.ChatMessage{Role: llm.RoleAssistant, Content: "Checking two cities.", ToolCalls: []llm.ToolCall{
				{ID: "a", Name: "wx__forecast", Arguments: `{"city":"Lyon"}`}, {ID: "b", Name: "wx__forecast", Arguments: `{"city":"Nice"}`}}},
			Model: "test-model", PromptTokens: 120, CompletionTokens: 30, Cost: (120*1 + 30*2) / 1e6, FinishReason: "tool_calls", Streamed: stream,
		}
		if diff := cmp.Diff(want, resp); diff != "" {
			t.Errorf("stream=%v: response (-want +got):\n%s", stream, diff)
		}
		if got := strings.Join(deltas, ""); got != "Checking two cities." {
			t.Errorf("stream=%v: got deltas %q, want the text", stream, deltas)
		}
		if stream && len(deltas) < 2 {
			t.Errorf("got %d deltas, want the text in pieces", len(deltas))
		}
		req := srv.Requests()[0]
		if diff := cmp.Diff(conversation, req.Chat); diff != "" {
			t.Errorf("stream=%v: conversation sent (-want +got):\n%s", stream, diff)
		}
		if diff := cmp.Diff([]llm.Function{weather}, req.Tools); diff != "" {
			t.Errorf("stream=%v: tools sent (-want +got):\n%s", stream, diff)
		}
		if req.MaxTokens != 77 || req.Stream != stream {
			t.Errorf("got max_tokens %d stream %v, want 77 and %v", req.MaxTokens, req.Stream, stream)
		}
	}
}

func TestChatStreamFallbacks(t *testing.T) {
	tests := []struct {
		name          string
		resp          llmtest.Response
		wantStreamed  bool
		wantEstimated bool
	}{
		{name: "endpoint ignores stream", resp: llmtest.Response{Text: "whole answer", NoStream: true, PromptTokens: 5, CompletionTokens: 2}},
		{name: "stream without usage", resp: llmtest.Response{Text: "streamed answer", NoUsage: true}, wantStreamed: true, wantEstimated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return tt.resp })
			c := newClient(t, srv, nil)
			var got strings.Builder
			resp, err := c.Chat(context.Background(), llm.ChatRequest{Messages: []llm.ChatMessage{{Role: llm.RoleUser, Content: "hi"}}, Stream: true, OnDelta: func(s string) { got.WriteString(s) }})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != tt.resp.Text || got.String() != tt.resp.Text {
				t.Errorf("got content %q and deltas %q, want %q", resp.Message.Content, got.String(), tt.resp.Text)
			}
			if resp.Streamed != tt.wantStreamed || resp.Estimated != tt.wantEstimated {
				t.Errorf("got streamed %v estimated %v, want %v %v", resp.Streamed, resp.Estimated, tt.wantStreamed, tt.wantEstimated)
			}
			if tt.wantEstimated && (resp.PromptTokens == 0 || resp.CompletionTokens == 0) {
				t.Errorf("got tokens %d/%d, want estimates", resp.PromptTokens, resp.CompletionTokens)
			}
		})
	}
}

func TestChatRetries(t *testing.T) {
	tests := []struct {
		name       string
		answers    []llmtest.Response // the last repeats
		maxRetries int
		deadline   time.Duration
		wantReqs   int
		wantKind   fault.Kind // "" for success
		wantWait   time.Duration
	}{
		{name: "401 is not retried", answers: []llmtest.Response{{Status: 401, Text: "key " + secretKey}}, maxRetries: 3, wantReqs: 1, wantKind: fault.Authentication},
		{name: "400 is not retried", answers: []llmtest.Response{{Status: 400}}, maxRetries: 3, wantReqs: 1, wantKind: fault.Backend},
		{name: "429 waits retry-after-ms", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After-Ms": "250"}}, {Text: "ok"}}, maxRetries: 1, wantReqs: 2, wantWait: 250 * time.Millisecond},
		{name: "429 waits Retry-After", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After": "1"}}, {Text: "ok"}}, maxRetries: 1, wantReqs: 2, wantWait: time.Second},
		{name: "429 bounded", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After-Ms": "1"}}}, maxRetries: 2, wantReqs: 3, wantKind: fault.Backend},
		{name: "429 longer than the deadline", answers: []llmtest.Response{{Status: 429, Header: map[string]string{"Retry-After": "30"}}}, maxRetries: 3, deadline: 2 * time.Second, wantReqs: 1, wantKind: fault.Backend},
		{name: "5xx backs off", answers: []llmtest.Response{{Status: 500}, {Status: 502}, {Text: "ok"}}, maxRetries: 2, wantReqs: 3, wantWait: 20 * time.Millisecond},
		{name: "5xx bounded", answers: []llmtest.Response{{Status: 503}}, maxRetries: 1, wantReqs: 2, wantKind: fault.Backend},
		{name: "no retries", answers: []llmtest.Response{{Status: 503}}, maxRetries: 0, wantReqs: 1, wantKind: fault.Backend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response {
				mu.Lock()
				defer mu.Unlock()
				times = append(times, time.Now())
				return tt.answers[min(len(times)-1, len(tt.answers)-1)]
			})
			c := newClient(t, srv, nil)
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			var retries []int
			resp, err := c.Chat(ctx, llm.ChatRequest{
				Messages: []llm.ChatMessage{{Role: llm.RoleUser, Content: "hi"}}, MaxRetries: tt.maxRetries, RetryBackoff: 20 * time.Millisecond,
				OnRetry: func(attempt int, _ time.Duration, _ error) { retries = append(retries, attempt) },
			})
			if n := len(srv.Requests()); n != tt.wantReqs {
				t.Errorf("got %d requests, want %d", n, tt.wantReqs)
			}
			if len(retries) != tt.wantReqs-1 {
				t.Errorf("got retries %v, want %d", retries, tt.wantReqs-1)
			}
			if tt.wantKind != "" {
				if k := fault.KindOf(err); k != tt.wantKind {
					t.Fatalf("got error %v (kind %s), want kind %s", err, k, tt.wantKind)
				}
				if strings.Contains(err.Error(), secretKey) {
					t.Errorf("the error shows the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "ok" || resp.Retries != tt.wantReqs-1 {
				t.Errorf("got %q after %d retries, want ok after %d", resp.Message.Content, resp.Retries, tt.wantReqs-1)
			}
			if got := times[1].Sub(times[0]); got < tt.wantWait {
				t.Errorf("got a wait of %s, want at least %s", got, tt.wantWait)
			}
		})
	}
}

func TestChatRejectsBadRequests(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "never"} })
	c := newClient(t, srv, nil)
	for _, req := range []llm.ChatRequest{
		{},
		{Messages: []llm.ChatMessage{{Role: "robot", Content: "x"}}},
		{Messages: []llm.ChatMessage{{Role: llm.RoleTool, Content: "x"}}},
		{Messages: []llm.ChatMessage{{Role: llm.RoleAssistant, Images: []llm.Image{{MIMEType: "image/png"}}}}},
		{Messages: []llm.ChatMessage{{Role: llm.RoleUser, Content: "x"}}, MaxTokens: -1},
	} {
		if _, err := c.Chat(context.Background(), req); fault.KindOf(err) != fault.Validation {
			t.Errorf("Chat(%+v): got %v, want a validation error", req, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("got %d requests, want none", n)
	}
}

func TestEstimateChatTokens(t *testing.T) {
	base := llm.EstimateChatTokens([]llm.ChatMessage{{Role: llm.RoleUser, Content: "hi"}}, nil)
	withImage := llm.EstimateChatTokens([]llm.ChatMessage{{Role: llm.RoleUser, Content: "hi", Images: []llm.Image{{}}}}, nil)
	withTools := llm.EstimateChatTokens([]llm.ChatMessage{{Role: llm.RoleUser, Content: "hi"}}, []llm.Function{weather})
	if withImage <= base || withTools <= base {
		t.Errorf("got %d (plain), %d (image), %d (tools); want images and tools to count", base, withImage, withTools)
	}
}
