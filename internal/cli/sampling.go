package cli

//lint:file-ignore SA1019 sampling is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
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
	cc, err := agent.ClientConfig(cfgLLM, c.getenv)
	if err != nil {
		why := oneLine(err)
		if fe := fault.As(err); fe != nil && len(fe.Suggestions) > 0 {
			// The server gets the error, and may not show it: the fix
			// is said here.
			why += "; " + strings.Join(fe.Suggestions, ", ")
		}
		c.note("%s asked for a completion by the model; declined: %s", server, why)
		return nil, fmt.Errorf("%s asked for a completion, which switchboard declined: %w", server, err)
	}
	sampler, err := answer.NewSampler(cc, cfgLLM.MaxRetries)
	if err != nil {
		return nil, fmt.Errorf("%s asked for a completion; %w", server, err)
	}
	if _, err := answer.ChatMessages(p); err != nil {
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
	res, resp, err := sampler.Sample(ctx, server, p)
	if err != nil {
		return nil, err
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
	return res, nil
}

// declined is the error a declined sampling request returns to the
// server.
func declined(server, why string) error { return answer.Declined(server, why) }

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
		lines := strings.Split(answer.ContentText(m.Content), "\n")
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
