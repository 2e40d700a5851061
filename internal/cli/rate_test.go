package cli

import (
	"os"
	"strings"
	"testing"
)

// TestCallRateLimitedJSON: a call over limits.rate through the daemon
// fails with a rate_limited_error carrying retry_after, with --json and
// without.
func TestCallRateLimitedJSON(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// One call, then one every 100 s: the second call is refused.
	limits := "limits:\n  rate:\n    per_user: {calls_per_second: 0.01, burst: 1}\n"
	if err := os.WriteFile(cfg, append([]byte(limits), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	wantCode(t, runCLI(t, "call", "alpha", "echo", "message=hi", "--config", cfg), ExitOK)
	if d.requests.Load() == before {
		t.Fatal("the daemon got no request, want the call to go through it")
	}

	r := runCLI(t, "call", "alpha", "echo", "message=hi", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	e := jsonErr(t, "call over the rate", r)
	details, _ := e["details"].(map[string]any)
	retry, _ := details["retry_after"].(float64)
	if e["error_type"] != "rate_limited_error" || retry <= 0 || retry > 100 || details["limit"] != "limits.rate.per_user" {
		t.Errorf("call over the rate --json: got %s, want a rate_limited_error with details.retry_after in (0, 100] naming limits.rate.per_user", r.stderr)
	}

	r = runCLI(t, "call", "alpha", "echo", "message=hi", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "call over the rate", r.stderr, "made more calls than limits.rate.per_user allows", "retry in ")
	if !strings.Contains(r.stderr, "hint: wait ") {
		t.Errorf("call over the rate: stderr %q has no hint saying how long to wait", r.stderr)
	}
}
