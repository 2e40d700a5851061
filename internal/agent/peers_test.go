package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestServerEverything runs the agent against server-everything (the
// TypeScript SDK's reference server; `make peers` installs it): a sum and
// an image, in parallel, passed to a vision model.
func TestServerEverything(t *testing.T) {
	f := newFixture(t, func(cfg *config.Config) {
		srv := config.Server{
			Name: "everything", Transport: config.TransportStdio, Enabled: true,
			LoadTools: true, TerminateOnClose: true,
			ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second,
		}
		srv.Command, srv.Args = testpeer.EverythingCommand(t)
		cfg.Servers = append(cfg.Servers, srv)
	})
	var mu sync.Mutex
	var last llmtest.Request
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if step(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{
				call("sum", "everything__get-sum", `{"a": 2, "b": 40}`),
				call("img", "everything__get-tiny-image", `{}`),
			}}
		}
		mu.Lock()
		last = req
		mu.Unlock()
		return llmtest.Response{Text: "42 and a tiny image"}
	})
	opts := f.options(t, srv, nil)
	opts.Selection = agent.Selection{Servers: []string{"everything"}, Tools: []string{"everything__get-sum", "everything__get-tiny-image"}}
	opts.LLM.Vision = true
	opts.Prompt = "sum and picture"
	out, err := agent.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Stop != agent.StopAnswered || out.ToolCalls != 2 {
		t.Errorf("got %+v, want an answer after two calls", out)
	}
	results := toolMessages(last)
	if !strings.Contains(results["sum"], "42") {
		t.Errorf("got sum result %q, want 42 in it", results["sum"])
	}
	if !strings.Contains(results["img"], "image/png") {
		t.Errorf("got image result %q, want it to point at the PNG", results["img"])
	}
	final := last.Chat[len(last.Chat)-1]
	if final.Role != llm.RoleUser || len(final.Images) != 1 || final.Images[0].MIMEType != "image/png" || len(final.Images[0].Data) == 0 {
		t.Errorf("got last message %+v, want a user message with the PNG", final)
	}
}
