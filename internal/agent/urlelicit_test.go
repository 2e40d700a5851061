package agent_test

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/agent"
	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// browserPerson completes the URL elicitations a server requires as a
// person would: opens each URL (a real GET, which makes testserver's
// urlelicit server send notifications/elicitation/complete), then waits
// for the server to say it is done.
type browserPerson struct {
	mu   sync.Mutex
	seen []string
}

var _ answer.URLCompleter = (*browserPerson)(nil)

func (p *browserPerson) CompleteURLs(ctx context.Context, _ string, els []*mcp.ElicitParams) (bool, error) {
	for _, el := range els {
		p.mu.Lock()
		p.seen = append(p.seen, el.URL)
		p.mu.Unlock()
		resp, err := http.Get(el.URL)
		if err != nil {
			return false, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	<-ctx.Done()
	return errors.Is(context.Cause(ctx), answer.ErrURLsCompleted), nil
}

// TestURLElicitationRequired: a server answers the agent's tool call with
// -32042 (URL elicitation required). With no one at a terminal the call
// fails with a tool message that names the page's URL and says what to
// do; with a person to complete it (Options.URLCompleter) the call is
// made again once they have, and the model gets the answer.
func TestURLElicitationRequired(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(cfg *config.Config) {
		cfg.Servers = []config.Server{testserver.Server(t, "urlelicit", "urlelicit")}
	})
	var mu sync.Mutex
	var results []string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if step(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{call("c", "urlelicit__connect", `{}`)}}
		}
		mu.Lock()
		results = append(results, toolMessages(req)["c"])
		mu.Unlock()
		return llmtest.Response{Text: "done"}
	})

	opts := f.options(t, srv, nil)
	opts.Selection = agent.Selection{Tools: []string{"urlelicit__connect"}}
	opts.Prompt = "connect"
	if _, err := agent.Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	person := &browserPerson{}
	opts.URLCompleter = person
	if _, err := agent.Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || len(person.seen) != 1 {
		t.Fatalf("got tool results %q and pages opened %q, want two results and one page", results, person.seen)
	}
	url := person.seen[0]
	for _, w := range []string{"elicitation_required", "requires the user to complete a step in a web browser", `"Connect your account": open ` + url, "Tell the user to open each URL"} {
		if !strings.Contains(results[0], w) {
			t.Errorf("with no one to complete it, the tool message %q does not contain %q", results[0], w)
		}
	}
	if !strings.Contains(results[1], "connected after 3 calls") {
		t.Errorf("with a person to complete it, got tool message %q, want the second attempt's answer (connected after 3 calls)", results[1])
	}
}
