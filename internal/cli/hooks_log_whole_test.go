package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHooksLogKeepsTheWholeError: piped, hooks log and hooks fire print a
// hook's error whole ("…/fail.sh exited with status 5"); they cut it at
// 80 and 100 bytes whatever the output, so a long command path hid the
// cause. On a terminal the table cuts the last column to fit instead.
func TestHooksLogKeepsTheWholeError(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, envNoDaemon, "1")
	dir := filepath.Join(t.TempDir(), strings.Repeat("a-long-directory-name-", 4))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fail := writeScript(t, dir, "fail.sh", `exit 5`)
	cfg := writeHooksConfig(t, dir, fmt.Sprintf("hooks:\n  - {name: broken, on: ci.done, actions: [{type: command, command: [%q]}]}\n", fail))
	wantCode(t, runCLI(t, "hooks", "trust", "--config", cfg, "--yes"), ExitOK)
	want := fail + " exited with status 5"
	r := runCLI(t, "hooks", "fire", "--config", cfg, "ci.done")
	wantContains(t, "hooks fire", r.stdout+r.stderr, want)
	r = runCLI(t, "hooks", "log", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks log", r.stdout, want)
}
