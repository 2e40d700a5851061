package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sout, serr syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &sout, &serr, "serve", "--config", cfg, "--listen", "127.0.0.1:0") }()
	defer func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("serve exit code: got %d, want 0\n%s", code, serr.String())
		}
	}()
	sock := control.SocketPath(getenvOf(t, "SWITCHBOARD_STATE_DIR"))
	eventuallyCLI(t, 20*time.Second, "serve to answer on its control socket", func() bool {
		c := control.Dial(sock)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Status(ctx)
		return err == nil
	})

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
