package cli

//lint:file-ignore SA1019 sampling is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/llm"
)

// sample answers a sampling/createMessage request by the --sampling
// policy: shown on the terminal and sent to the llm: model once the person
// approves (or unattended with --sampling approve), the model's answer
// shown before it is returned; else declined with the reason.
func (c *cliAnswerer) sample(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	switch {
	case c.flags.sampling == samplingDecline:
		c.note("%s asked for a completion by the model; declined (--sampling decline)", server)
		return nil, declined(server, "--sampling decline")
	case c.flags.sampling == samplingAsk && c.q == nil:
		c.note("%s asked for a completion by the model; declined: no terminal to approve it on; pass --sampling approve to allow it unattended", server)
		return nil, declined(server, "no terminal to approve it on; pass --sampling approve to allow it unattended")
	}
	var cfgLLM = c.cfg.LLM
	cc, err := agent.ClientConfig(cfgLLM, os.Getenv)
	if err != nil {
		c.note("%s asked for a completion by the model; declined: %s", server, oneLine(err))
		return nil, fmt.Errorf("%s asked for a completion, which switchboard declined: %w", server, err)
	}
	client, err := llm.New(cc)
	if err != nil {
		return nil, fmt.Errorf("%s asked for a completion; the llm: settings: %w", server, err)
	}
	msgs, err := chatMessages(p)
	if err != nil {
		return nil, fmt.Errorf("%s asked for a completion switchboard cannot send: %w", server, err)
	}
	if c.flags.sampling == samplingAsk {
		out := c.q.out
		fmt.Fprintf(out, "\n%s asks for a completion by %s:\n", server, cc.Model)
		showSampling(out, p)
		ok, err := c.confirmCtx(ctx, fmt.Sprintf("Send this to %s?", cc.Model), false)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, declined(server, "the person declined it")
		}
	}
	resp, err := client.Chat(ctx, llm.ChatRequest{Messages: msgs, MaxTokens: int(p.MaxTokens), MaxRetries: cfgLLM.MaxRetries})
	if err != nil {
		return nil, fmt.Errorf("%s asked for a completion; the model failed: %w", server, err)
	}
	if c.flags.sampling == samplingAsk {
		out := c.q.out
		fmt.Fprintf(out, "\n%s answered:\n", resp.Model)
		for _, l := range strings.Split(resp.Message.Content, "\n") {
			fmt.Fprintf(out, "  | %s\n", l)
		}
		ok, err := c.confirmCtx(ctx, fmt.Sprintf("Return this answer to %s?", server), true)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, declined(server, "the person declined the model's answer")
		}
	} else {
		c.note("%s asked for a completion; sent to %s (--sampling approve), %d tokens answered", server, resp.Model, resp.CompletionTokens)
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
	}, nil
}

// declined is the error a declined sampling request returns to the
// server (sampling has no "decline" result; the specification has the
// client answer with an error).
func declined(server, why string) error {
	return fault.New(fault.Authorization, "switchboard declined %s's request for a completion: %s", server, why)
}

// chatMessages turns a sampling request into the model's messages: the
// system prompt, then each message's text (images and audio are named,
// not sent).
func chatMessages(p *mcp.CreateMessageParams) ([]llm.ChatMessage, error) {
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
		msgs = append(msgs, llm.ChatMessage{Role: role, Content: contentText(m.Content)})
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("the request has no messages")
	}
	return msgs, nil
}

// contentText is a content block as text for the model and the person.
func contentText(c mcp.Content) string {
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

// showSampling shows what a sampling request would send.
func showSampling(out interface{ Write([]byte) (int, error) }, p *mcp.CreateMessageParams) {
	if p.SystemPrompt != "" {
		fmt.Fprintf(out, "  system prompt: %s\n", p.SystemPrompt)
	}
	fmt.Fprintf(out, "  max tokens: %d\n", p.MaxTokens)
	if mp := p.ModelPreferences; mp != nil {
		var hints []string
		for _, h := range mp.Hints {
			if h != nil {
				hints = append(hints, h.Name)
			}
		}
		fmt.Fprintf(out, "  model preferences: hints %s; cost %.2g, speed %.2g, intelligence %.2g\n",
			orNone(strings.Join(hints, ", ")), mp.CostPriority, mp.SpeedPriority, mp.IntelligencePriority)
	}
	if p.Temperature != 0 {
		fmt.Fprintf(out, "  temperature: %g\n", p.Temperature)
	}
	if p.IncludeContext != "" && p.IncludeContext != "none" {
		fmt.Fprintf(out, "  include context: %s (switchboard sends none)\n", p.IncludeContext)
	}
	fmt.Fprintln(out, "  messages:")
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		lines := strings.Split(contentText(m.Content), "\n")
		fmt.Fprintf(out, "    %s: %s\n", m.Role, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(out, "      %s\n", l)
		}
	}
}

// orNone is s, or "none" when empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// confirmCtx asks a yes/no question on the terminal, giving up when ctx
// ends.
func (c *cliAnswerer) confirmCtx(ctx context.Context, question string, def bool) (bool, error) {
	choices := "[y/N]"
	if def {
		choices = "[Y/n]"
	}
	for {
		fmt.Fprintf(c.q.out, "%s %s ", question, choices)
		ans, err := c.q.lineCtx(ctx)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "":
			return def, nil
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
		fmt.Fprintln(c.q.out, "Please answer y or n.")
	}
}
