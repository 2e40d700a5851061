package cli

import (
	"slices"
	"strings"
	"testing"
	"time"
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

// TestHistoryNextPageKeepsTheFilters: when a page is full, the command
// printed for the next one repeats the filters (and --config) and names
// --since as the time it stood for; run as printed, it lists the next
// calls of the same filtered list, not every call.
func TestHistoryNextPageKeepsTheFilters(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	for range 3 {
		wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "fail"), ExitFailure)
		wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x"), ExitOK)
	}
	r := runCLI(t, "history", "--config", cfg, "--status", "error", "--since", "1h", "--limit", "2")
	wantCode(t, r, ExitOK)
	_, next, ok := strings.Cut(strings.TrimSpace(r.stderr), "more: switchboard ")
	if !ok {
		t.Fatalf("a full page: got stderr %q, want the command for the next page", r.stderr)
	}
	args := strings.Fields(next)
	for _, want := range []string{"--status error", "--limit 2", "--config " + cfg, "--before "} {
		if !strings.Contains(next, want) {
			t.Errorf("next page: got %q, want %q in it", next, want)
		}
	}
	if i := slices.Index(args, "--since"); i < 0 || i+1 == len(args) {
		t.Errorf("next page: got %q, want --since", next)
	} else if _, err := time.Parse(time.RFC3339, args[i+1]); err != nil {
		t.Errorf("next page: --since %q, want the time 1h stood for (RFC 3339): %v", args[i+1], err)
	}
	r = runCLI(t, args...)
	wantCode(t, r, ExitOK)
	if strings.Count(r.stdout, " error ") != 1 || strings.Contains(r.stdout, "success") {
		t.Errorf("the next page, run as printed: got\n%s\nwant the one call left that failed, and none that succeeded", r.stdout)
	}
}

// TestHistoryNoNextPageAtTheEnd: a page that holds the last calls prints
// no command for a next page, also when they fill it exactly.
func TestHistoryNoNextPageAtTheEnd(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	for range 2 {
		wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x"), ExitOK)
	}
	r := runCLI(t, "history", "--config", cfg, "--limit", "2")
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "more:") {
		t.Errorf("two calls, --limit 2: got stderr %q, want no next page", r.stderr)
	}
	r = runCLI(t, "history", "--config", cfg, "--limit", "1")
	wantCode(t, r, ExitOK)
	wantContains(t, "two calls, --limit 1", r.stderr, "more: switchboard history")
}
