package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// clientHome isolates HOME and the config folders (no real client file is
// read or written), the state directory and the working directory in t's
// own environment (setenv, chdir); it returns HOME.
func clientHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	setenv(t, "HOME", home)
	setenv(t, "XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	setenv(t, "APPDATA", filepath.Join(home, "AppData", "Roaming"))
	setenv(t, "CODEX_HOME", "")
	setenv(t, "CLAUDE_CONFIG_DIR", "")
	setenv(t, "XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	chdir(t, t.TempDir())
	return home
}

// TestClientConnectCursorAndClaudeDesktop: through the CLI, Cursor gets
// the gateway's URL in its user file (keeping its comments), Claude
// Desktop the command serving this configuration with this binary; a
// second connect changes nothing and says so; list shows both; disconnect
// takes the entry out again.
func TestClientConnectCursorAndClaudeDesktop(t *testing.T) {
	t.Parallel()
	home := clientHome(t)
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	setenv(t, "SWITCHBOARD_STATE_DIR", "") // the default state directory: no --state-dir in the entry
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cursor), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "{\n  // my servers\n  \"mcpServers\": {\n    \"mine\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}\n  }\n}\n"
	if err := os.WriteFile(cursor, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "client", "connect", "cursor", "--config", cfg, "--dry-run")
	wantCode(t, r, ExitOK)
	wantContains(t, "dry run", r.stdout, `+    "switchboard": {`, `+      "url": "http://127.0.0.1:7777/mcp"`)
	if got, _ := os.ReadFile(cursor); string(got) != orig {
		t.Fatal("a dry run wrote the file")
	}

	r = runCLI(t, "client", "connect", "cursor", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "connect", r.stdout, "connected Cursor (user: "+cursor+`) as "switchboard" to http://127.0.0.1:7777/mcp`, "backup of the file as it was: "+cursor+".switchboard-backup-")
	wantContains(t, "connect", r.stderr, "the gateway is not running")
	got, _ := os.ReadFile(cursor)
	wantContains(t, "cursor file", string(got), "// my servers", `"mine": {"command": "npx", "args": ["-y", "x"]},`, `"url": "http://127.0.0.1:7777/mcp"`)

	r = runCLI(t, "client", "connect", "cursor", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "second connect", r.stdout, "is already connected", "nothing changed")
	if backups, _ := filepath.Glob(cursor + ".switchboard-backup-*"); len(backups) != 1 {
		t.Errorf("backups after two connects: %v, want 1", backups)
	}

	r = runCLI(t, "client", "connect", "claude-desktop", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var ch connectJSON
	if err := json.Unmarshal([]byte(r.stdout), &ch); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if ch.Shape != "stdio" || ch.Entry["command"] != exe || !ch.Created || !ch.Changed {
		t.Errorf("claude desktop: %+v", ch)
	}
	if args, _ := json.Marshal(ch.Entry["args"]); string(args) != `["serve","--stdio","--config","`+cfg+`"]` {
		t.Errorf("args: %s", args)
	}
	desktop := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	if ch.Path != desktop {
		t.Errorf("path %s, want %s", ch.Path, desktop)
	}
	// Switchboard reads the file it wrote back as its own command, and
	// trusts it at first use (it is the user's Claude Desktop file).
	if client, ok := config.UserClientFile(desktop, envOf(t)); !ok || client != "Claude Desktop" {
		t.Errorf("UserClientFile: %q %v", client, ok)
	}

	r = runCLI(t, "client", "list", "--json")
	wantCode(t, r, ExitOK)
	var rows []clientListJSON
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	connected := map[string]string{}
	for _, row := range rows {
		if row.Connected {
			connected[row.Client+"/"+row.Scope] = row.Shape + " " + row.To
		}
	}
	if len(connected) != 2 || connected["cursor/user"] != "url http://127.0.0.1:7777/mcp" ||
		!strings.HasPrefix(connected["claude-desktop/user"], "stdio "+exe+" serve --stdio --config "+cfg) {
		t.Errorf("connected: %v", connected)
	}
	r = runCLI(t, "client", "list")
	wantCode(t, r, ExitOK)
	wantContains(t, "list", r.stdout, "CLIENT", "cursor", "http://127.0.0.1:7777/mcp", "(none yet)")

	r = runCLI(t, "client", "disconnect", "cursor")
	wantCode(t, r, ExitOK)
	wantContains(t, "disconnect", r.stdout, `removed the entry "switchboard"`)
	if got, _ := os.ReadFile(cursor); string(got) != orig {
		t.Errorf("after disconnect:\n%s\nwant\n%s", got, orig)
	}
	r = runCLI(t, "client", "disconnect", "cursor")
	wantCode(t, r, ExitOK)
	wantContains(t, "second disconnect", r.stdout, "has no entry", "nothing changed")
}

// TestClientConnectChoices: --scope project writes the project's file;
// --stdio forces the command; --url=URL another gateway; the gateway's
// tokens make stdio the default and refuse a bare --url; mistakes are
// usage errors.
func TestClientConnectChoices(t *testing.T) {
	t.Parallel()
	clientHome(t)
	wd := dirOf(t)

	r := runCLI(t, "client", "connect", "vscode", "--scope", "project")
	wantCode(t, r, ExitOK)
	data, err := os.ReadFile(filepath.Join(wd, ".vscode", "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, ".vscode/mcp.json", string(data), `"servers"`, `"type": "http"`, `"url": "http://127.0.0.1:7777/mcp"`)

	r = runCLI(t, "client", "connect", "zed", "--stdio", "--name", "gw")
	wantCode(t, r, ExitOK)
	wantContains(t, "zed", r.stderr, "Zed does not seem to be installed")
	data, _ = os.ReadFile(filepath.Join(getenvOf(t, "XDG_CONFIG_HOME"), "zed", "settings.json"))
	wantContains(t, "zed settings", string(data), `"context_servers"`, `"gw": {`, `"command": "`, `"serve",`, `"--stdio"`)

	r = runCLI(t, "client", "connect", "codex", "--url=https://gw.example.com/mcp")
	wantCode(t, r, ExitOK)
	data, _ = os.ReadFile(filepath.Join(getenvOf(t, "HOME"), ".codex", "config.toml"))
	if string(data) != "[mcp_servers.switchboard]\nurl = \"https://gw.example.com/mcp\"\n" {
		t.Errorf("codex: %q", data)
	}

	tokens := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(tokens, []byte("gateway:\n  tokens:\n    - token_env: GW_TOKEN\n      user: me\nservers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "client", "connect", "cursor", "--config", tokens, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "cursor with tokens", r.stdout, `"shape": "stdio"`)
	r = runCLI(t, "client", "connect", "gemini", "--config", tokens, "--url")
	wantCode(t, r, ExitFailure)
	wantContains(t, "gemini --url with tokens", r.stderr, "needs a bearer token", "--stdio")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"client", "connect"}, "usage: switchboard client connect CLIENT"},
		{[]string{"client", "connect", "cursr"}, `did you mean "cursor"`},
		{[]string{"client", "connect", "windsurf", "--scope", "project"}, "has no project-scope file"},
		{[]string{"client", "connect", "cursor", "--scope", "team"}, `invalid --scope "team"`},
		{[]string{"client", "connect", "cursor", "--url", "--stdio"}, "give --url or --stdio, not both"},
		{[]string{"client", "connect", "claude-desktop", "--url"}, "only launches its servers as commands"},
	} {
		r := runCLI(t, tc.args...)
		if r.code == ExitOK || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestClientConnectKeepsTrust: connecting the Cursor file Switchboard
// itself reads keeps the file's trust (the change is only the gateway's
// entry), and reading the file afterwards skips that entry instead of
// connecting Switchboard to itself.
func TestClientConnectKeepsTrust(t *testing.T) {
	t.Parallel()
	home := clientHome(t)
	state := getenvOf(t, "SWITCHBOARD_STATE_DIR")
	file := cursorFile(t, home)
	wantCode(t, runCLI(t, "config", "trust", file, "--yes"), ExitOK)

	r := runCLI(t, "client", "connect", "cursor", "--config", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "connect", r.stderr, "the file was trusted; its trust now covers the change")
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Fatalf("trust after connect: %s", st)
	}
	// (linear, a hosted server, is not reachable from a test: the exit
	// code is not the point.)
	r = runCLI(t, "servers", "--config", file, "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	for _, row := range rows {
		if row["server"] == "switchboard" {
			t.Errorf("the gateway's own entry was read as a server: %v", row)
		}
	}
	if len(rows) != 2 {
		t.Errorf("servers: %d, want notes and linear", len(rows))
	}

	r = runCLI(t, "client", "disconnect", "cursor")
	wantCode(t, r, ExitOK)
	wantContains(t, "disconnect", r.stderr, "its trust now covers the change")
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Fatalf("trust after disconnect: %s", st)
	}
}

// TestClientConnectFollowsTheDaemon: without --config, connect writes the
// entry for the configuration the running daemon serves, as every
// command without --config follows the daemon.
func TestClientConnectFollowsTheDaemon(t *testing.T) {
	t.Parallel()
	clientHome(t)
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	startDaemon(t, cfg)
	r := runCLI(t, "client", "connect", "claude-desktop", "--json")
	wantCode(t, r, ExitOK)
	var ch connectJSON
	if err := json.Unmarshal([]byte(r.stdout), &ch); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	args, _ := json.Marshal(ch.Entry["args"])
	if !strings.Contains(string(args), `"--config","`+cfg+`"`) {
		t.Errorf("args %s do not serve the daemon's %s", args, cfg)
	}
	wantContains(t, "connect", r.stderr, "note: using the running daemon")
}

// TestClientConnectNotInstalledNote: the note about a client that does not
// seem installed names what was looked for. Claude Code keeps its user
// file in the home folder itself, which exists: the note names its file
// and ~/.claude, not "HOME did not exist".
func TestClientConnectNotInstalledNote(t *testing.T) {
	t.Parallel()
	home := clientHome(t)

	r := runCLI(t, "client", "connect", "claude-code", "--dry-run")
	wantCode(t, r, ExitOK)
	wantContains(t, "claude-code", r.stderr, "Claude Code does not seem to be installed (neither "+
		filepath.Join(home, ".claude.json")+" nor "+filepath.Join(home, ".claude")+" existed)")
	if strings.Contains(r.stderr, home+" did not exist") {
		t.Errorf("claude-code: got %q, want no claim that the home folder did not exist", r.stderr)
	}

	r = runCLI(t, "client", "connect", "windsurf", "--dry-run")
	wantCode(t, r, ExitOK)
	wantContains(t, "windsurf", r.stderr, "Windsurf does not seem to be installed ("+filepath.Join(home, ".codeium", "windsurf")+" did not exist)")
}
