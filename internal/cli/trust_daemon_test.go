package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTrustReachesTheRunningDaemon trusts a configuration file while a
// daemon serves it: hooks trust makes the daemon reload it and says so,
// and the daemon's next failed call runs the file's tool.failed hook.
// Before, hooks list said ok at once, but the daemon went on treating the
// file as untrusted, running none of its hooks, until switchboard reload.
func TestTrustReachesTheRunningDaemon(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "failures.jsonl")
	cfg := writeConfigWith(t, map[string]string{"alpha": "ok"},
		fmt.Sprintf("hooks:\n  - {name: failures, on: tool.failed, actions: [{type: command, command: [tee, %q]}]}\n", out))
	// serve in-process: the test daemon of startDaemon fakes its reloads.
	serveInProcess(t, cfg)

	r := runCLI(t, "hooks", "trust", "--config", cfg, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks trust with a daemon running", r.stderr, "the running daemon (pid ", ") reloaded "+cfg+": it uses the trust now")

	r = runCLI(t, "call", "--config", cfg, "alpha", "no_such_tool")
	wantCode(t, r, ExitFailure)
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond) // the hook writes a file: nothing to wait on but the file
	defer tick.Stop()
	for {
		if data, _ := os.ReadFile(out); len(data) > 0 {
			wantContains(t, "the tool.failed event", string(data), "no_such_tool")
			return
		}
		if time.Now().After(deadline) {
			r = runCLI(t, "hooks", "log", "--config", cfg)
			t.Fatalf("the daemon never ran the trusted file's tool.failed hook; hooks log:\n%s%s", r.stdout, r.stderr)
		}
		<-tick.C
	}
}
