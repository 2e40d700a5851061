package modes

//lint:file-ignore SA1019 the server asks for roots, sampling and elicitation and logs, deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveRequestAsks runs the "requestasks" mode (NewRequestAsks) on stdio.
func serveRequestAsks() {
	if err := NewRequestAsks().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("requestasks: %v", err)
	}
}

// NewRequestAsks builds the "requestasks" mode's server: its prompt
// "ask" (argument key), resource ask://res and completion of the prompt's
// argument each, while they work, log "log WHAT", report progress "progress WHAT" when the
// request has a token, and ask their client for its roots, a sampling
// completion naming WHAT and a form naming WHAT; their answer says what
// they got ("WHAT: roots … sampled … elicited …"). WHAT names the request
// and its key. Its prompt "pair" does the same once a second request of
// it is in (so that two are in flight while they ask). Its resource
// ask://cancelled says how many notifications/cancelled it has received.
func NewRequestAsks() *mcp.Server {
	var cancelled atomic.Int64
	ask := func(ctx context.Context, ss *mcp.ServerSession, token any, what string) (string, error) {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "asks", Data: "log " + what}); err != nil {
			return "", fmt.Errorf("log: %w", err)
		}
		if token != nil {
			if err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 2, Message: "progress " + what}); err != nil {
				return "", fmt.Errorf("progress: %w", err)
			}
		}
		roots, err := ss.ListRoots(ctx, nil)
		if err != nil {
			return "", fmt.Errorf("roots/list: %w", err)
		}
		sampled, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "sample " + what}}}})
		if err != nil {
			return "", fmt.Errorf("sampling/createMessage: %w", err)
		}
		elicited, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "form " + what,
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
		if err != nil {
			return "", fmt.Errorf("elicitation/create: %w", err)
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		text := ""
		if tc, ok := sampled.Content.(*mcp.TextContent); ok {
			text = tc.Text
		}
		return fmt.Sprintf("%s: roots %v sampled %q elicited %v", what, uris, text, elicited.Content["who"]), nil
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "requestasks", Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			got, err := ask(ctx, req.Session, req.Params.Meta["progressToken"], "completion "+req.Params.Argument.Value)
			if err != nil {
				return nil, err
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{got}}}, nil
		},
	})
	s.AddPrompt(&mcp.Prompt{Name: "ask", Arguments: []*mcp.PromptArgument{{Name: "key"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		got, err := ask(ctx, req.Session, req.Params.GetProgressToken(), "prompt "+req.Params.Arguments["key"])
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: got}}}}, nil
	})
	var pairs pairing
	s.AddPrompt(&mcp.Prompt{Name: "pair", Arguments: []*mcp.PromptArgument{{Name: "key"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if err := pairs.wait(ctx); err != nil {
			return nil, err
		}
		got, err := ask(ctx, req.Session, req.Params.GetProgressToken(), "pair "+req.Params.Arguments["key"])
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: got}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "ask://res", Name: "res"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		got, err := ask(ctx, req.Session, req.Params.GetProgressToken(), "resource")
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://res", Text: got}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "ask://cancelled", Name: "cancelled"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://cancelled", Text: strconv.FormatInt(cancelled.Load(), 10)}}}, nil
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/cancelled" {
				cancelled.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	SpeaksAtMost(s, statefulProtocol)
	return s
}

// pairing lets requests on in twos: wait returns once a second request
// waits with the first.
type pairing struct {
	mu      sync.Mutex
	waiting chan struct{}
}

func (p *pairing) wait(ctx context.Context) error {
	p.mu.Lock()
	if ch := p.waiting; ch != nil {
		p.waiting = nil
		p.mu.Unlock()
		close(ch)
		return nil
	}
	ch := make(chan struct{})
	p.waiting = ch
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if p.waiting == ch {
			p.waiting = nil
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}
