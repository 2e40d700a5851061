package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientConnectSaysWhatRunsTwiceAndMoves: a Claude Desktop file whose
// servers switchboard serves too (config import kept their names) gets a
// note that they would run twice, with the command that runs them once;
// --move takes them out of the file (and keeps them), and disconnect puts
// them back as they were, so that the file is as it began.
func TestClientConnectSaysWhatRunsTwiceAndMoves(t *testing.T) {
	t.Parallel()
	home := clientHome(t)
	cfg := writeConfig(t, map[string]string{"alpha": "ok", "beta": "ok"})
	desktop := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(desktop), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{
  "mcpServers": {
    "alpha": {"command": "npx", "args": ["-y", "alpha-server"], "env": {"TOKEN": "t0k"}},
    "mine": {"command": "npx", "args": ["-y", "only-in-claude"]},
    "beta": {
      "command": "uvx",
      "args": ["beta-server"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}
`
	if err := os.WriteFile(desktop, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "client", "connect", "claude-desktop", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "connect stderr", r.stderr,
		"note: Claude Desktop also runs alpha, beta itself, and switchboard serves them too: each runs twice, once by Claude Desktop and once through switchboard. To run them only through switchboard: switchboard client connect claude-desktop --move (client disconnect puts them back)\n")
	got, _ := os.ReadFile(desktop)
	wantContains(t, "file after a plain connect", string(got), `"alpha": {`, `"beta": {`, `"mine": {`, `"switchboard": {`)

	r = runCLI(t, "client", "connect", "claude-desktop", "--config", cfg, "--move", "--json")
	wantCode(t, r, ExitOK)
	var ch connectJSON
	if err := json.Unmarshal([]byte(r.stdout), &ch); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if strings.Join(ch.Moved, ",") != "alpha,beta" || !ch.Changed {
		t.Errorf("connect --move: moved %v, changed %v; want alpha,beta moved", ch.Moved, ch.Changed)
	}
	got, _ = os.ReadFile(desktop)
	for _, gone := range []string{`"alpha"`, `"beta"`, "t0k"} {
		if strings.Contains(string(got), gone) {
			t.Errorf("after --move the file still has %s:\n%s", gone, got)
		}
	}
	wantContains(t, "file after --move", string(got), `"mine": {`, `"switchboard": {`, `"globalShortcut": "Ctrl+Space"`)
	state, _ := envOf(t)("SWITCHBOARD_STATE_DIR")
	if fi, err := os.Stat(filepath.Join(state, movedFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the moved entries' record: %v (%v), want a file only its owner reads", fi, err)
	}

	r = runCLI(t, "client", "disconnect", "claude-desktop")
	wantCode(t, r, ExitOK)
	wantContains(t, "disconnect", r.stdout, `removed the entry "switchboard"`, "put back the entries connect --move took out: alpha, beta")
	got, _ = os.ReadFile(desktop)
	for _, want := range []string{`"mine": {"command": "npx", "args": ["-y", "only-in-claude"]}`, `"command": "npx",`, `"TOKEN": "t0k"`, `"args": [`, `"beta-server"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("after disconnect the file lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "switchboard") {
		t.Errorf("after disconnect the file still has switchboard's entry:\n%s", got)
	}
	var back struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(got, &back); err != nil || len(back.MCPServers) != 3 {
		t.Errorf("after disconnect: %v entries (%v), want alpha, mine and beta:\n%s", len(back.MCPServers), err, got)
	}
	if _, err := os.Stat(filepath.Join(state, movedFileName)); !os.IsNotExist(err) {
		t.Errorf("the record of moved entries is still there after they were put back (%v)", err)
	}

	// switchboard serving the client's file itself: --move would take the
	// servers from switchboard too.
	r = runCLI(t, "client", "connect", "claude-desktop", "--config", desktop, "--move")
	wantCode(t, r, ExitFailure)
	wantContains(t, "--move on switchboard's own file", r.stderr, "switchboard serves "+desktop+" itself (--config)", "switchboard config import")
	// Without --move: said plainly, with the way to run them once.
	r = runCLI(t, "client", "connect", "claude-desktop", "--config", desktop)
	wantCode(t, r, ExitOK)
	wantContains(t, "connect with switchboard serving the client's file", r.stderr,
		"note: switchboard serves "+desktop+" itself (--config), so Claude Desktop runs its servers (mine, alpha, beta) and, through switchboard, runs them again. To run them once: switchboard config import "+desktop)
}

// TestClientConnectCodexSaysToRemoveByHand: Codex's TOML file cannot have
// entries moved out (its editor writes only strings and lists): the note
// says to remove them by hand rather than offer --move, and --move is
// refused, saying so, with the file untouched.
func TestClientConnectCodexSaysToRemoveByHand(t *testing.T) {
	t.Parallel()
	home := clientHome(t)
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	codex := filepath.Join(home, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(codex), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "model = \"o3\"\n\n[mcp_servers.alpha]\ncommand = \"npx\"\nargs = [\"-y\", \"alpha-server\"]\n"
	if err := os.WriteFile(codex, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "client", "connect", "codex", "--config", cfg, "--move")
	wantCode(t, r, ExitFailure)
	wantContains(t, "connect codex --move", r.stderr, "moving entries out of Codex's TOML file is not supported; remove alpha from it by hand")
	if got, _ := os.ReadFile(codex); string(got) != orig {
		t.Errorf("a refused --move changed the file:\n%s", got)
	}
	r = runCLI(t, "client", "connect", "codex", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "connect codex", r.stderr, "note: Codex also runs alpha itself, and switchboard serves it too: it runs twice",
		"To run it only through switchboard, remove alpha from "+codex+" by hand")
	if strings.Contains(r.stderr, "--move") && !strings.Contains(r.stderr, "connect --move cannot edit") {
		t.Errorf("the note offers --move for a TOML file:\n%s", r.stderr)
	}
}
