package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
)

// TestAgentActionCallsNameTheirHook: the tool calls an agent action's run
// makes are recorded with the hook and event that started the agent
// before its step (origin), and with the hook's identity, as an mcp
// action's calls are. They said only "agent step 1, tool call c1", with
// no identity: a person reading the history could not tell which hook,
// event or run had made them.
func TestAgentActionCallsNameTheirHook(t *testing.T) {
	t.Parallel()
	setenv(t, envNoDaemon, "1")
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		if assistantTurns(req) == 0 {
			return llmtest.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "alpha__echo", Arguments: `{"message": "triage"}`}}}
		}
		return llmtest.Response{Text: "triaged"}
	})
	cfg := agentConfig(t, srv, "")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hooks:\n  - {name: triage, on: ci.failed, actions: [{type: agent, prompt: \"Triage {job}\", tools: [\"*__echo\"]}]}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wantCode(t, runCLI(t, "hooks", "trust", "--config", cfg, "--yes"), ExitOK)

	r := runCLI(t, "hooks", "fire", "--config", cfg, "--json", "ci.failed", "job=build")
	wantCode(t, r, ExitOK)
	var rep struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.EventID == "" {
		t.Fatalf("hooks fire --json: got %s (%v)", r.stdout, err)
	}

	r = runCLI(t, "history", "--config", cfg, "--source", "agent", "--json")
	wantCode(t, r, ExitOK)
	var calls []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 1 {
		t.Fatalf("history --source agent --json: got %s (%v), want one call", r.stdout, err)
	}
	wantOrigin := "hook triage on ci.failed (event " + rep.EventID + "), agent step 1, tool call c1"
	if calls[0]["origin"] != wantOrigin || calls[0]["identity"] != "hook:triage" || calls[0]["tool"] != "echo" {
		t.Errorf("the agent's call: got origin %q, identity %q, tool %v; want origin %q, identity hook:triage, tool echo",
			calls[0]["origin"], calls[0]["identity"], calls[0]["tool"], wantOrigin)
	}
	// The hook's calls, whichever action made them, are one filter away.
	r = runCLI(t, "history", "--config", cfg, "--identity", "hook:triage")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.stdout, "echo") {
		t.Errorf("history --identity hook:triage: got %q, want the agent's echo call", r.stdout)
	}
}
