package cli

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestHooksTrustAsks: hooks trust shows the hooks the file would run and
// asks on a terminal, as config trust does; without a terminal and
// without --yes it refuses, says how to trust, and records nothing.
func TestHooksTrustAsks(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	cfg := writeHooksConfig(t, t.TempDir(), "hooks:\n  - {name: note, on: spec.after-plan, actions: [{type: command, command: [\"true\"]}]}\n")

	r := runCLI(t, "hooks", "trust", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "hooks trust without a terminal", r.stdout, cfg, "hooks: 1, on spec.after-plan")
	wantContains(t, "hooks trust without a terminal", r.stderr, "was not trusted: there is no terminal to confirm on", "--yes")
	if st, _ := config.CheckTrust(state, cfg); st != config.Untrusted {
		t.Fatalf("hooks trust without a terminal or --yes: the file is %s, want untrusted", st)
	}

	// hooks list says how to trust the file, in a command that works
	// here (no terminal): the file by name, and --yes.
	r = runCLI(t, "hooks", "list", "--config", cfg)
	wantContains(t, "hooks list", r.stdout, "these hooks do not run until you trust "+cfg+": switchboard hooks trust "+cfg+" --yes\n")

	// On a terminal: the question, then yes records the trust.
	p := startOnPTY(t, []string{"SWITCHBOARD_STATE_DIR=" + state}, "hooks", "trust", cfg)
	p.expect("hooks: 1, on spec.after-plan")
	p.answer("[y/N]", "y")
	out := p.succeeds("hooks trust answered yes")
	if st, _ := config.CheckTrust(state, cfg); st != config.Trusted {
		t.Fatalf("hooks trust answered yes: the file is %s, want trusted\n%s", st, out)
	}

	// Changed: asked again; --yes skips the question.
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "hooks", "trust", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "hooks trust of a changed file", r.stdout, "changed since you trusted it")
	r = runCLI(t, "hooks", "trust", cfg, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks trust --yes", r.stdout, "trusted "+cfg, "its hooks run until it changes")
}
