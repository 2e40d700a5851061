package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestCallStructuredOutput: call prints structuredContent after the
// content (pretty) or in --json's result; a result that fails the tool's
// outputSchema is printed as it came, with a warning naming the path, and
// exits 1; the history has it as output_invalid.
func TestCallStructuredOutput(t *testing.T) {
	t.Parallel()
	url := testserver.Weather(t)
	state := t.TempDir()

	r := runCLI(t, "call", "--url", url, "--state-dir", state, "weather", "mode=valid")
	wantCode(t, r, ExitOK)
	wantContains(t, "call weather (valid)", r.stdout, "mode valid\n", "structuredContent:\n", `"temp": 21.5`, `"city": "Oslo"`)
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("a matching result warned: %s", r.stderr)
	}

	r = runCLI(t, "call", "--url", url, "--state-dir", state, "weather", "mode=wrong_type")
	wantCode(t, r, ExitFailure)
	wantContains(t, "call weather (wrong_type) stdout", r.stdout, "mode wrong_type\n", `"temp": "warm"`)
	wantContains(t, "call weather (wrong_type) stderr", r.stderr,
		"warning: the result of adhoc/weather does not match the tool's output schema (the result is shown as the server sent it)",
		"  temp: got string, want number")

	r = runCLI(t, "call", "--url", url, "--state-dir", state, "weather", "mode=wrong_type", "--json")
	wantCode(t, r, ExitFailure)
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []map[string]any
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.StructuredContent["temp"] != "warm" || len(res.Content) != 1 {
		t.Errorf("call --json: got %s (%v), want the result unchanged", r.stdout, err)
	}
	wantContains(t, "call --json stderr", r.stderr, "temp: got string, want number")

	r = runCLI(t, "history", "--state-dir", state, "--status", "output_invalid", "--json")
	wantCode(t, r, ExitOK)
	var recs []historyRecord
	if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("history --status output_invalid: got %s (%v), want the 2 mismatching calls", r.stdout, err)
	}
	if recs[0].ErrorKind != "output_invalid" || !strings.Contains(recs[0].ErrorMessage, "temp: got string, want number") {
		t.Errorf("history: got kind %q message %q, want output_invalid with the path", recs[0].ErrorKind, recs[0].ErrorMessage)
	}

	// server-everything's tool with an output schema keeps to it.
	everything := everythingURL(t)
	r = runCLI(t, "call", "--url", everything, "--state-dir", state,
		"get-structured-content", "location=Chicago", "--json")
	wantCode(t, r, ExitOK)
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.StructuredContent["conditions"] != "Light rain / drizzle" {
		t.Errorf("get-structured-content --json: got %s (%v), want Chicago's structured weather", r.stdout, err)
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("server-everything's matching result warned: %s", r.stderr)
	}
	// Its text content is the structured content serialized: printed once.
	r = runCLI(t, "call", "--url", everything, "--state-dir", state,
		"get-structured-content", "location=Chicago")
	wantCode(t, r, ExitOK)
	if strings.Count(r.stdout, "Light rain / drizzle") != 1 || strings.Contains(r.stdout, "structuredContent:") {
		t.Errorf("get-structured-content: got\n%s\nwant the weather once, not repeated as structuredContent", r.stdout)
	}
}

// TestCallResumesAClosedStream: an ad hoc call over streamable HTTP to the
// TypeScript SDK's SSE polling example, which closes the call's event
// stream mid-call, completes (the client resumes the stream with
// Last-Event-ID, no sooner than the server's retry:).
func TestCallResumesAClosedStream(t *testing.T) {
	t.Parallel()
	url := testpeer.StartSSEPolling(t)
	start := time.Now()
	r := runCLI(t, "call", "--url", url, "--state-dir", t.TempDir(), "long-task", "--timeout", "60s")
	wantCode(t, r, ExitOK)
	wantContains(t, "call long-task", r.stdout, "Long task completed successfully!")
	if took, min := time.Since(start), 2*time.Second+testpeer.SSEPollingRetry; took < min {
		t.Errorf("the call took %v, want at least %v (the reconnect came before retry:)", took, min)
	}
}
