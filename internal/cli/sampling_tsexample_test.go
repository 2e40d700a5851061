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
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestSamplingWithTheTSExample: the TypeScript SDK's own sampling example
// (toolWithSampleServer.js, a stdio server whose summarize tool asks its
// client for a completion and returns its text) through switchboard call:
// with --sampling approve the request goes to the configured llm: model
// with the server's message and max tokens, and the server returns the
// model's answer; piped without the flag it is declined, and the server's
// tool fails saying so.
func TestSamplingWithTheTSExample(t *testing.T) {
	t.Parallel()
	for _, k := range []string{llm.EnvBaseURL, llm.EnvModel, llm.EnvAPIKey, llm.EnvOpenAIAPIKey, llm.EnvOpenAIBaseURL} {
		setenv(t, k, "")
	}
	var mu sync.Mutex
	var got []llmtest.Request
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return llmtest.Response{Text: "Switchboards connect calls."}
	})
	node, args := testpeer.SampleToolCommand(t)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  connect_timeout: 30s\n  request_timeout: 60s\n")
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\n", node)
	fmt.Fprintf(&b, "llm:\n  base_url: %s\n  model: test-model\n  stream: false\n  max_retries: 0\n", srv.URL())
	fmt.Fprintf(&b, "servers:\n  - name: sample\n    command: %q\n    args: [%q]\n", node, args[0])
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()

	r := runCLI(t, "call", "--config", cfg, "--state-dir", state, "sample", "summarize", "text=A switchboard routes telephone calls.", "--sampling", "approve")
	wantCode(t, r, ExitOK)
	wantContains(t, "approved", r.stdout, "Switchboards connect calls.")
	wantContains(t, "approved", r.stderr, "sent to test-model (--sampling approve)")
	mu.Lock()
	if len(got) != 1 || got[0].MaxTokens != 500 || len(got[0].Messages) != 1 ||
		!strings.Contains(got[0].Messages[0].Content, "Please summarize the following text concisely:\n\nA switchboard routes telephone calls.") {
		t.Errorf("the model got %+v; want one request with the server's message and max tokens 500", got)
	}
	mu.Unlock()

	r = runCLI(t, "call", "--config", cfg, "--state-dir", state, "sample", "summarize", "text=x")
	wantCode(t, r, ExitFailure)
	wantContains(t, "piped", r.stderr, "no terminal to approve it on; pass --sampling approve")
	mu.Lock()
	if len(got) != 1 {
		t.Errorf("a declined request reached the model (%d requests)", len(got))
	}
	mu.Unlock()

	// No model configured: the server gets the error, and its tool
	// reports it as it likes (this one without the fix), so the note
	// says what to set — none of agent's flags, which call does not have.
	bare := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(bare, []byte(strings.Replace(b.String(), fmt.Sprintf("llm:\n  base_url: %s\n  model: test-model\n  stream: false\n  max_retries: 0\n", srv.URL()), "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "call", "--config", bare, "--state-dir", state, "sample", "summarize", "text=x", "--sampling", "approve")
	wantCode(t, r, ExitFailure)
	wantContains(t, "no model", r.stderr, "note: sample asked for a completion by the model; declined: no language model is configured; "+
		"set llm.model (and llm.base_url) in the configuration, or set SWITCHBOARD_LLM_MODEL (and SWITCHBOARD_LLM_BASE_URL)\n")
	if strings.Contains(r.stderr, "--model") {
		t.Errorf("no model: stderr names agent's --model, which call does not take:\n%s", r.stderr)
	}
}
