package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// authLoginInterrupted: a sign-in stopped while it waits for the
// browser (Ctrl-C, SIGTERM: the command's context ends) says that it was
// interrupted and that nothing was saved, exits 130, and stores nothing
// (run by TestAuthWithTheOAuthExample).
func authLoginInterrupted(t *testing.T, ex *testpeer.OAuthExample) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, envNoDaemon, "1")
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "servers:\n  - name: demo\n    transport: http\n    url: %s\n", ex.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- mainIn(t, ctx, &out, &errb, "auth", "login", "demo", "--no-browser", "--config", cfg) }()
	eventuallyCLI(t, 30*time.Second, "auth login to wait for the redirect", func() bool {
		return strings.Contains(out.String(), "Waiting for the authorization server's redirect")
	})
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Errorf("exit code: got %d, want %d (interrupted)\nstderr:\n%s", code, ExitInterrupted, errb.String())
	}
	wantContains(t, "stderr", errb.String(), "the sign-in to demo was interrupted: nothing was saved, and any earlier sign-in is unchanged", "switchboard auth login demo")

	// Nothing stored: demo (no oauth: block) has no sign-in to list.
	r := runCLI(t, "auth", "status", "--config", cfg, "--json")
	var st []oauth.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st) != 0 {
		t.Errorf("auth status after the interrupted sign-in: got %s (%v), want no stored sign-in", r.stdout, err)
	}
}
