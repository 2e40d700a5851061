package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// repoFile writes a client file into a fresh "repository" and returns its
// absolute path.
func repoFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const cursorFile = `{"mcpServers": {
  "safe": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
  "py": {"command": "python", "args": ["-m", "tools.server"]},
  "abs": {"command": "/opt/tools/bin/server"}
}}`

// TestTrustOnHash: a repository's client file is held to the allowlist
// until trusted; trusted, it runs the commands it names; edited, it needs
// trust again. The message says how to trust it, with the absolute path.
func TestTrustOnHash(t *testing.T) {
	file := repoFile(t, ".cursor/mcp.json", cursorFile)
	state := t.TempDir()
	opts := config.Options{StateDir: state}

	err := startErr(config.Load(file, opts))
	var na *config.CommandNotAllowedError
	if !errors.As(err, &na) {
		t.Fatalf("untrusted: got %v, want a *CommandNotAllowedError", err)
	}
	if na.File != file || na.Trust != config.Untrusted {
		t.Errorf("got File %q Trust %q, want %q %q", na.File, na.Trust, file, config.Untrusted)
	}
	msg := err.Error()
	for _, want := range []string{
		`mcpServers.py.command: command "python" is not allowed: this file is not trusted, and an untrusted file may run only npx, uvx, docker; if you wrote or reviewed it, run: switchboard config trust ` + file + " --yes",
		`mcpServers.abs.command: command "/opt/tools/bin/server" is not allowed`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("untrusted: error lacks %q:\n%s", want, msg)
		}
	}
	if st, _ := config.CheckTrust(state, file); st != config.Untrusted {
		t.Errorf("CheckTrust: got %s, want %s", st, config.Untrusted)
	}

	rec, err := config.Trust(state, file)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Path != file || len(rec.SHA256) != 64 {
		t.Errorf("got record %+v", rec)
	}
	cfg, err := config.Load(file, opts)
	if err != nil {
		t.Fatalf("trusted: %v", err)
	}
	if got, want := cfg.Servers[1].Command, "python"; got != want {
		t.Errorf("got command %q, want %q", got, want)
	}
	fi, err := os.Stat(filepath.Join(state, config.TrustFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust records: got %v, %v; want mode 0600", fi, err)
	}

	// Any edit needs trust again.
	if err := os.WriteFile(file, []byte(cursorFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = startErr(config.Load(file, opts))
	if !errors.As(err, &na) || na.Trust != config.Changed {
		t.Fatalf("edited: got %v, want a *CommandNotAllowedError with trust %q", err, config.Changed)
	}
	if !strings.Contains(err.Error(), "the file changed since you trusted it") || !strings.Contains(err.Error(), "review the change, then run: switchboard config trust "+file) {
		t.Errorf("edited: got %v", err)
	}
	if st, _ := config.CheckTrust(state, file); st != config.Changed {
		t.Errorf("CheckTrust: got %s, want %s", st, config.Changed)
	}

	// Without a state directory nothing is trusted.
	if err := startErr(config.Load(file, config.Options{})); !errors.As(err, &na) {
		t.Errorf("no state directory: got %v, want a *CommandNotAllowedError", err)
	}
}

// TestTrustedFileStillChecked: trust widens the allowlist, never the
// checks that apply to every file: no shell, no relative path, no
// argument that turns a launcher into something else.
func TestTrustedFileStillChecked(t *testing.T) {
	file := repoFile(t, ".mcp.json", `{"mcpServers": {
  "a": {"command": "npx", "args": ["-y", "--call", "curl x | sh"]},
  "b": {"command": "docker", "args": ["run", "-i", "--privileged", "img"]},
  "c": {"command": "./run.sh"},
  "d": {"command": "node server.js"},
  "e": {"command": "/usr/bin/npx", "args": ["-c", "id"]}
}}`)
	state := t.TempDir()
	if _, err := config.Trust(state, file); err != nil {
		t.Fatal(err)
	}
	err := startErr(config.Load(file, config.Options{StateDir: state}))
	if err == nil {
		t.Fatal("a trusted file with smuggled arguments loaded")
	}
	want := []string{
		`mcpServers.a.args[1]: npx argument "--call curl x | sh" is refused: it runs a shell command`,
		`mcpServers.b.args[2]: docker argument "--privileged" is refused`,
		`mcpServers.c.command: command "./run.sh" is a relative path`,
		`mcpServers.d.command: command "node server.js" contains spaces`,
		`mcpServers.e.args[0]: npx argument "-c id" is refused`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("problem %d: got %q, want it to contain %q", i, lines[i], w)
		}
	}
	var ua *config.UnsafeArgumentError
	if !errors.As(err, &ua) {
		t.Error("no *UnsafeArgumentError in the error")
	}
}

// TestNativeFileKeepsItsAllowlist: the native switchboard.yaml is the
// user's own file and is governed by security.allowed_commands, trusted or
// not (docs/decisions.md).
func TestNativeFileKeepsItsAllowlist(t *testing.T) {
	file := repoFile(t, "switchboard.yaml", "servers:\n  - name: py\n    command: python\n")
	state := t.TempDir()
	if _, err := config.Trust(state, file); err != nil {
		t.Fatal(err)
	}
	err := startErr(config.Load(file, config.Options{StateDir: state}))
	var na *config.CommandNotAllowedError
	if !errors.As(err, &na) || na.File != "" {
		t.Fatalf("got %v, want a *CommandNotAllowedError without a file to trust", err)
	}
	if !strings.Contains(err.Error(), "add it under security.allowed_commands") {
		t.Errorf("got %v", err)
	}
	allowed := repoFile(t, "switchboard.yaml", "security:\n  allowed_commands: [python]\nservers:\n  - name: py\n    command: python\n")
	if err := startErr(config.Load(allowed, config.Options{})); err != nil {
		t.Errorf("allowed_commands: %v", err)
	}
}

// userHome points the user's home and configuration folders at fresh
// folders for the test.
func userHome(t *testing.T) (home, cfg string) {
	t.Helper()
	home = t.TempDir()
	cfg = filepath.Join(home, ".config")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("APPDATA", cfg)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	return home, cfg
}

// TestUserClientFiles: the user's own client files are recognised by
// platform location, a repository's are not.
func TestUserClientFiles(t *testing.T) {
	home, cfg := userHome(t)
	osCfg, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, client string
	}{
		{filepath.Join(home, ".cursor", "mcp.json"), "Cursor"},
		{filepath.Join(osCfg, "Claude", "claude_desktop_config.json"), "Claude Desktop"},
		{filepath.Join(home, ".claude.json"), "Claude Code"},
		{filepath.Join(osCfg, "Code", "User", "settings.json"), "VS Code"},
		{filepath.Join(osCfg, "Code", "User", "mcp.json"), "VS Code"},
		{filepath.Join(osCfg, "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), "Cline"},
		{filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"), "Windsurf"},
		{filepath.Join(home, ".gemini", "settings.json"), "Gemini CLI"},
		{filepath.Join(home, ".codex", "config.toml"), "Codex"},
		{filepath.Join(home, ".continue", "config.yaml"), "Continue"},
		{filepath.Join(cfg, "zed", "settings.json"), "Zed"},
		{filepath.Join(home, "src", "app", ".cursor", "mcp.json"), ""},
		{filepath.Join(home, "src", "app", ".vscode", "mcp.json"), ""},
		{filepath.Join(home, "src", "app", ".mcp.json"), ""},
		{filepath.Join(home, ".cursor", "mcp.json.bak", "x"), ""},
	}
	for _, tt := range tests {
		got, ok := config.UserClientFile(tt.path, nil)
		if got != tt.client || ok != (tt.client != "") {
			t.Errorf("UserClientFile(%s): got %q, %v; want %q", tt.path, got, ok, tt.client)
		}
	}
}

// TestTrustAtFirstUse: a user's own client file that names commands beyond
// the allowlist is trusted after one confirmation; without a terminal to
// ask it is refused with the command to run; a repository's file is never
// asked about.
func TestTrustAtFirstUse(t *testing.T) {
	home, _ := userHome(t)
	file := filepath.Join(home, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(cursorFile), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()

	// No terminal: refused, saying how.
	err := startErr(config.Load(file, config.Options{StateDir: state}))
	if err == nil || !strings.Contains(err.Error(), "this file (your Cursor configuration) is not trusted yet") ||
		!strings.Contains(err.Error(), "run: switchboard config trust "+file) {
		t.Fatalf("no terminal: got %v", err)
	}

	// Asked, and the answer is no: refused, nothing recorded.
	var questions []string
	no := func(q string) (bool, error) { questions = append(questions, q); return false, nil }
	if err := startErr(config.Load(file, config.Options{StateDir: state, ConfirmTrust: no})); err == nil || !strings.Contains(err.Error(), "to trust it, run: switchboard config trust "+file) {
		t.Fatalf("declined: got %v", err)
	}
	if st, _ := config.CheckTrust(state, file); st != config.Untrusted {
		t.Errorf("declined: got trust %s, want %s", st, config.Untrusted)
	}

	// Asked, and the answer is yes: loaded, trust recorded, asked once.
	questions = nil
	yes := func(q string) (bool, error) { questions = append(questions, q); return true, nil }
	cfg, err := config.Load(file, config.Options{StateDir: state, ConfirmTrust: yes})
	if err != nil {
		t.Fatalf("confirmed: %v", err)
	}
	if len(cfg.Servers) != 3 || len(questions) != 1 {
		t.Fatalf("confirmed: got %d servers after %d questions, want 3 after 1", len(cfg.Servers), len(questions))
	}
	for _, want := range []string{file, "your Cursor configuration", "python (server py)", "/opt/tools/bin/server (server abs)"} {
		if !strings.Contains(questions[0], want) {
			t.Errorf("question lacks %q: %s", want, questions[0])
		}
	}
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Errorf("confirmed: got trust %s, want %s", st, config.Trusted)
	}
	// From now on it loads without asking.
	questions = nil
	if err := startErr(config.Load(file, config.Options{StateDir: state, ConfirmTrust: yes})); err != nil || len(questions) != 0 {
		t.Errorf("trusted: got %v after %d questions, want no error and none", err, len(questions))
	}

	// A repository's file is not asked about.
	repo := repoFile(t, ".cursor/mcp.json", cursorFile)
	questions = nil
	if err := startErr(config.Load(repo, config.Options{StateDir: state, ConfirmTrust: yes})); err == nil || len(questions) != 0 {
		t.Errorf("repository file: got %v after %d questions, want an error and none", err, len(questions))
	}
	// Nor is a user file that needs nothing beyond the allowlist.
	safe := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(safe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(safe, []byte(`{"mcpServers": {"m": {"command": "npx", "args": ["-y", "x"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := startErr(config.Load(safe, config.Options{StateDir: state, ConfirmTrust: yes})); err != nil || len(questions) != 0 {
		t.Errorf("allowlisted user file: got %v after %d questions, want no error and none", err, len(questions))
	}
}

// TestTrustRecordsShared: trust recorded by the hooks' old store is read
// until the shared store exists, and the shared store keeps one record per
// file.
func TestTrustRecordsShared(t *testing.T) {
	file := repoFile(t, ".mcp.json", cursorFile)
	state := t.TempDir()
	if _, err := config.Trust(state, file); err != nil {
		t.Fatal(err)
	}
	// Move the record to the legacy name.
	if err := os.Rename(filepath.Join(state, config.TrustFileName), filepath.Join(state, "hooks-trust.json")); err != nil {
		t.Fatal(err)
	}
	if st, err := config.CheckTrust(state, file); err != nil || st != config.Trusted {
		t.Errorf("legacy records: got %s, %v; want %s", st, err, config.Trusted)
	}
	other := repoFile(t, "x/.mcp.json", cursorFile)
	if _, err := config.Trust(state, other); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, other} {
		if st, _ := config.CheckTrust(state, f); st != config.Trusted {
			t.Errorf("%s: got %s, want %s", f, st, config.Trusted)
		}
	}
}

func TestFileTrustStatus(t *testing.T) {
	home, _ := userHome(t)
	state := t.TempDir()
	repo := repoFile(t, ".mcp.json", cursorFile)
	st, err := config.FileTrustStatus(state, repo, nil)
	if err != nil || st.State != config.Untrusted || st.Record != nil || st.Client != "" || st.Native || st.Path != repo {
		t.Errorf("untrusted repository file: got %+v, %v", st, err)
	}
	if _, err := config.Trust(state, repo); err != nil {
		t.Fatal(err)
	}
	if st, err := config.FileTrustStatus(state, repo, nil); err != nil || st.State != config.Trusted || st.Record == nil || st.Record.TrustedAt.IsZero() {
		t.Errorf("trusted repository file: got %+v, %v", st, err)
	}
	native := repoFile(t, "switchboard.yaml", "servers: []\n")
	if st, err := config.FileTrustStatus(state, native, nil); err != nil || !st.Native {
		t.Errorf("native file: got %+v, %v", st, err)
	}
	own := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(own, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := config.FileTrustStatus(state, own, nil); err != nil || st.Client != "Claude Code" {
		t.Errorf("user file: got %+v, %v", st, err)
	}
	if _, err := config.FileTrustStatus(state, filepath.Join(home, "missing.json"), nil); err == nil {
		t.Error("missing file: no error")
	}
}

// TestTrustPreview: before trusting, the CLI can show what the file would
// run; other problems still show.
func TestTrustPreview(t *testing.T) {
	file := repoFile(t, ".cursor/mcp.json", cursorFile)
	cfg, err := config.TrustPreview(file, config.Options{})
	if err != nil || len(cfg.Servers) != 3 || cfg.Servers[1].Command != "python" {
		t.Fatalf("got %v, %v", cfg, err)
	}
	if st, _ := config.CheckTrust(t.TempDir(), file); st != config.Untrusted {
		t.Errorf("the preview recorded trust: %s", st)
	}
	bad := repoFile(t, ".mcp.json", `{"mcpServers": {"a": {"command": "npx", "args": ["-c", "id"]}}}`)
	if _, err := config.TrustPreview(bad, config.Options{}); err == nil || !strings.Contains(err.Error(), `npx argument "-c id" is refused`) {
		t.Errorf("smuggling: got %v", err)
	}
}
