package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// runIn runs the command line in the environment vars alone: nothing of
// the process's environment reaches it.
func runIn(vars map[string]string, args ...string) result {
	var out, errb bytes.Buffer
	env := func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
	code := run(context.Background(), invocation{args: args, stdin: strings.NewReader(""), stdout: &out, stderr: &errb, env: env})
	return result{out.String(), errb.String(), code}
}

// TestEachRunReadsItsOwnEnvironment checks that a command reads its
// environment from its invocation: the state directory
// ($SWITCHBOARD_STATE_DIR, else $XDG_STATE_HOME/switchboard, else
// $HOME/.local/state/switchboard) and the variables its configuration
// refers to, so that runs with different environments can share a
// process.
func TestEachRunReadsItsOwnEnvironment(t *testing.T) {
	t.Parallel()
	home, xdg, state := t.TempDir(), t.TempDir(), t.TempDir()
	for _, tt := range []struct {
		name string
		vars map[string]string
		dir  string
	}{
		{"SWITCHBOARD_STATE_DIR", map[string]string{"SWITCHBOARD_STATE_DIR": state, "XDG_STATE_HOME": xdg, "HOME": home}, state},
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": xdg, "HOME": home}, filepath.Join(xdg, "switchboard")},
		{"HOME", map[string]string{"HOME": home}, filepath.Join(home, ".local", "state", "switchboard")},
	} {
		r := runIn(tt.vars, "stop")
		wantCode(t, r, ExitOK)
		if _, err := os.Stat(control.StopFlagPath(tt.dir)); err != nil {
			t.Errorf("%s: stop did not set the switch in %s: %v", tt.name, tt.dir, err)
		}
		r = runIn(tt.vars, "resume")
		wantCode(t, r, ExitOK)
		if _, err := os.Stat(control.StopFlagPath(tt.dir)); !os.IsNotExist(err) {
			t.Errorf("%s: resume left the switch in %s: %v", tt.name, tt.dir, err)
		}
	}
	r := runIn(map[string]string{}, "stop")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "state directory", "$HOME is not defined", "SWITCHBOARD_STATE_DIR")

	// ${VAR} in the configuration is read from the command's environment.
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  - name: web\n    transport: http\n    url: ${CLI_ENV_TEST_URL}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runIn(map[string]string{"SWITCHBOARD_STATE_DIR": state}, "config", "validate", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "CLI_ENV_TEST_URL")
	r = runIn(map[string]string{"SWITCHBOARD_STATE_DIR": state, "CLI_ENV_TEST_URL": "http://127.0.0.1:1/mcp"}, "config", "validate", cfg)
	wantCode(t, r, ExitOK)
}
