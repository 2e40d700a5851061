package cli

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
)

// trustPromptEnv makes a home with the user's own Cursor file (which
// needs trust) and a switchboard.yaml in the user's configuration folder
// whose audit trail it returns, and the environment that uses them.
func trustPromptEnv(t *testing.T) (env []string, file, state, trail string) {
	t.Helper()
	home := t.TempDir()
	xdg := filepath.Join(home, ".config")
	state = t.TempDir()
	trail = filepath.Join(t.TempDir(), "audit.jsonl")
	native := filepath.Join(xdg, "switchboard", config.FileName)
	if err := os.MkdirAll(filepath.Dir(native), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(native, []byte("servers: []\naudit:\n  file: "+trail+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file = cursorFile(t, home)
	env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + xdg, "SWITCHBOARD_STATE_DIR=" + state, "CLAUDE_CONFIG_DIR=", "CODEX_HOME="}
	return env, file, state, trail
}

// trailEvents reads every event of the trail (none when it does not
// exist yet).
func trailEvents(t *testing.T, trail string) []audit.Event {
	t.Helper()
	var got []audit.Event
	if _, err := os.Stat(trail); os.IsNotExist(err) {
		return nil
	}
	if err := audit.Read(trail, audit.Filter{}, func(e audit.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestTrustAtAPromptIsAudited: the real binary on a pseudo-terminal loads
// the user's own Cursor file and asks whether to trust it. "n" writes
// config.trust_refused (the file, its hash, the OS user, via prompt) and
// records no trust, and the command goes on without the server the file
// may not run untrusted; "y" writes config.trust with the same fields and
// records the trust, and the command goes on.
func TestTrustAtAPromptIsAudited(t *testing.T) {
	t.Parallel()
	env, file, state, trail := trustPromptEnv(t)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	check := func(e audit.Event, event string, outcome audit.Outcome) {
		t.Helper()
		if e.Event != event || e.Outcome != outcome || e.Actor.Via != audit.ViaPrompt || e.Actor.User != me.Username ||
			e.Target.File != file || e.Target.Hash != sha256Hex(data) || e.Instance.PID == 0 {
			t.Errorf("got %+v, want %s %s by %s via prompt for %s (sha256 %s)", e, event, outcome, me.Username, file, sha256Hex(data))
		}
	}

	p := startOnPTY(t, env, "--config", file, "config", "show")
	p.expect("Trust it to run the commands it names?")
	p.answer("[y/N]", "n")
	out, err := p.wait()
	if err != nil || !strings.Contains(out, "# server notes cannot start: ") || !strings.Contains(out, "is not allowed") {
		t.Fatalf("declined: got %v, want the command to go on with notes unable to start:\n%s", err, out)
	}
	got := trailEvents(t, trail)
	if len(got) != 1 {
		t.Fatalf("declined: got %d events, want 1: %+v\nterminal:\n%s", len(got), got, out)
	}
	check(got[0], audit.ConfigTrustRefused, audit.Denied)
	if st, _ := config.CheckTrust(state, file); st != config.Untrusted {
		t.Errorf("declined: trust %s, want %s", st, config.Untrusted)
	}

	p = startOnPTY(t, env, "--config", file, "config", "show")
	p.answer("[y/N]", "y")
	p.expect("notes")
	if out, err := p.wait(); err != nil {
		t.Fatalf("trusted, the command failed (%v):\n%s", err, out)
	}
	got = trailEvents(t, trail)
	if len(got) != 2 {
		t.Fatalf("trusted: got %d events, want 2: %+v", len(got), got)
	}
	check(got[1], audit.ConfigTrust, audit.OK)
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Errorf("trusted: trust %s, want %s", st, config.Trusted)
	}
}

// TestConfigTrustRefusedIsAudited: no to config trust's own question
// writes config.trust_refused, by the CLI.
func TestConfigTrustRefusedIsAudited(t *testing.T) {
	t.Parallel()
	env, file, state, trail := trustPromptEnv(t)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p := startOnPTY(t, env, "config", "trust", file)
	p.answer("[y/N]", "n")
	if out, err := p.wait(); err == nil {
		t.Fatalf("declined, config trust succeeded:\n%s", out)
	}
	got := trailEvents(t, trail)
	if len(got) != 1 || got[0].Event != audit.ConfigTrustRefused || got[0].Outcome != audit.Denied || got[0].Actor.Via != audit.ViaCLI ||
		got[0].Target.File != file || got[0].Target.Hash != sha256Hex(data) {
		t.Errorf("got %+v, want one config.trust_refused of %s by the CLI", got, file)
	}
	if st, _ := config.CheckTrust(state, file); st != config.Untrusted {
		t.Errorf("declined: trust %s, want %s", st, config.Untrusted)
	}
}
