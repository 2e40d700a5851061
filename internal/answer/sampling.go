package answer

//lint:file-ignore SA1019 sampling is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// This file is what every answerer that lends the configured llm: model
// to a server's sampling request shares — the terminal's and the
// console's: the request as the model's messages, the model's answer as
// the request's result, and the refusal a declined request gets.

// Sampler sends a server's sampling requests to the configured model.
type Sampler struct {
	client     *llm.Client
	model      string
	maxRetries int
}

// NewSampler returns a Sampler of the endpoint cc (see agent.ClientConfig
// for how the llm: block becomes one); maxRetries is the llm: block's
// max_retries.
func NewSampler(cc llm.Config, maxRetries int) (*Sampler, error) {
	client, err := llm.New(cc)
	if err != nil {
		return nil, fmt.Errorf("the llm: settings: %w", err)
	}
	return &Sampler{client: client, model: cc.Model, maxRetries: maxRetries}, nil
}

// Model is the name of the model requests are sent to.
func (s *Sampler) Model() string { return s.model }

// Sample sends p to the model and returns its answer as the request's
// result, with the model's response (for the tokens it used). server
// names the asking server in errors.
func (s *Sampler) Sample(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, *llm.ChatResponse, error) {
	msgs, err := ChatMessages(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s asked for a completion switchboard cannot send: %w", server, err)
	}
	resp, err := s.client.Chat(ctx, llm.ChatRequest{Messages: msgs, MaxTokens: int(p.MaxTokens), MaxRetries: s.maxRetries})
	if err != nil {
		return nil, nil, fmt.Errorf("%s asked for a completion; the model failed: %w", server, err)
	}
	stop := "endTurn"
	if resp.Truncated {
		stop = "maxTokens"
	}
	return &mcp.CreateMessageResult{
		Content:    &mcp.TextContent{Text: resp.Message.Content},
		Model:      resp.Model,
		Role:       "assistant",
		StopReason: stop,
	}, resp, nil
}

// Declined is the error a declined sampling request returns to the
// server (sampling has no "decline" result; the specification has the
// client answer with an error). why says who declined it and why.
func Declined(server, why string) error {
	return fault.New(fault.Authorization, "switchboard declined %s's request for a completion: %s", server, why)
}

// ChatMessages turns a sampling request into the model's messages: the
// system prompt, then each message's text (images and audio are named,
// not sent).
func ChatMessages(p *mcp.CreateMessageParams) ([]llm.ChatMessage, error) {
	var msgs []llm.ChatMessage
	if p.SystemPrompt != "" {
		msgs = append(msgs, llm.ChatMessage{Role: llm.RoleSystem, Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		if m == nil {
			return nil, fmt.Errorf("message %d is empty", i+1)
		}
		role := string(m.Role)
		if role != "user" && role != "assistant" {
			return nil, fmt.Errorf("message %d has role %q; want user or assistant", i+1, role)
		}
		msgs = append(msgs, llm.ChatMessage{Role: role, Content: ContentText(m.Content)})
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("the request has no messages")
	}
	return msgs, nil
}

// ContentText is a content block as text for the model and the person.
func ContentText(c mcp.Content) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image, %s, %d bytes]", v.MIMEType, len(v.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio, %s, %d bytes]", v.MIMEType, len(v.Data))
	case nil:
		return ""
	}
	return fmt.Sprintf("[%T]", c)
}
