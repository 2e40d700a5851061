package cli

import (
	"strings"
	"testing"
)

// TestHistoryUnknownServerSaysSo: history --server with a name no server
// has, and no calls recorded under it, says that no such server is
// configured (with the closest name), beside the empty listing; a
// configured server without calls, or a removed one with calls, gets no
// such note.
func TestHistoryUnknownServerSaysSo(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x"), ExitOK)

	r := runCLI(t, "history", "--config", cfg, "--server", "alpah")
	wantCode(t, r, ExitOK)
	wantContains(t, "history stdout", r.stdout, "No calls recorded (that match).")
	wantContains(t, "history stderr", r.stderr, `note: no server named "alpah" is configured; did you mean "alpha"?`+"\n")

	r = runCLI(t, "history", "--config", cfg, "--server", "nope", "--json")
	wantCode(t, r, ExitOK)
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("history --json stdout: got %q, want []", r.stdout)
	}
	wantContains(t, "history --json stderr", r.stderr, `note: no server named "nope" is configured`, "hint: configured servers: alpha")

	r = runCLI(t, "history", "--config", cfg, "--server", "alpha", "--status", "error")
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "note:") {
		t.Errorf("history of a configured server: got a note:\n%s", r.stderr)
	}

	// alpha removed from the file: its calls are still listed, without a note.
	state, _ := envOf(t)("SWITCHBOARD_STATE_DIR")
	removed := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "beta"))
	setenv(t, "SWITCHBOARD_STATE_DIR", state) // the same history
	r = runCLI(t, "history", "--config", removed, "--server", "alpha")
	wantCode(t, r, ExitOK)
	wantContains(t, "history of a removed server", r.stdout, "alpha", "echo")
	if strings.Contains(r.stderr, "note:") {
		t.Errorf("history of a removed server with calls: got a note:\n%s", r.stderr)
	}
}
