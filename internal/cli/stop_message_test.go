package cli

import (
	"strings"
	"testing"
	"time"
)

// TestStopCancelledAndRefusedSayWhich: a call in flight when `switchboard
// stop` runs is told it was cancelled, and a call made after it that it
// was not started; both say how to allow calls again.
func TestStopCancelledAndRefusedSayWhich(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	done := slowCallInFlight(t, cfg)
	wantCode(t, runCLI(t, "stop", "--config", cfg), ExitOK)
	var cancelled result
	select {
	case cancelled = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("stop did not cancel the call in flight")
	}
	refused := runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x")
	wantCode(t, cancelled, ExitFailure)
	wantCode(t, refused, ExitFailure)
	for _, c := range []struct {
		what, stderr, want, not string
	}{
		{"the call in flight", cancelled.stderr, "the call was cancelled: calls are stopped (switchboard stop)", "not started"},
		{"the call after stop", refused.stderr, "the call was not started: calls are stopped (switchboard stop)", "cancelled"},
	} {
		if !strings.Contains(c.stderr, c.want) || !strings.Contains(c.stderr, "switchboard resume") || strings.Contains(c.stderr, c.not) {
			t.Errorf("%s: got %q, want it to say %q and how to resume, and not %q", c.what, c.stderr, c.want, c.not)
		}
	}
	wantCode(t, runCLI(t, "resume", "--config", cfg), ExitOK)
}
