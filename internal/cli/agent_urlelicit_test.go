package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestAgentURLElicitationOnATerminal: the model calls a tool whose server
// answers -32042 (URL elicitation required); switchboard agent, run on a
// terminal, shows the URL as switchboard call does, waits for the
// server's completion notice, and calls again; the model gets the answer.
func TestAgentURLElicitationOnATerminal(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var result string
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if assistantTurns(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "ue__connect", Arguments: `{}`}}}
		}
		for _, m := range req.Chat {
			if m.Role == llm.RoleTool {
				mu.Lock()
				result = m.Content
				mu.Unlock()
			}
		}
		return llmtest.Response{Text: "all connected"}
	})
	cfg := agentConfig(t, srv, "")
	exe := testserver.Command(t)
	// Only the urlelicit server, named ue.
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "servers:\n")
	body := head + fmt.Sprintf("servers:\n  - name: ue\n    command: %q\n    env: %s\n", exe, testserver.EnvYAML("urlelicit"))
	cfg = filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	p := startOnPTY(t, noBrowser, "agent", "--config", cfg, "connect my account")
	p.expect("ue requires you to complete 1 step before it answers the call:")
	p.expect("Connect your account")
	p.expect("host: 127.0.0.1:")
	p.expect("Press Enter when you have finished there, or type d to decline: ")
	visit(t, p.out.String())
	p.expect("ue says it is done; calling it again")
	out := p.succeeds("agent")
	wantContains(t, "the answer", out, "all connected")
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(result, "connected after 2 calls") {
		t.Errorf("the model got tool result %q, want the second attempt's answer (connected after 2 calls)", result)
	}
}
