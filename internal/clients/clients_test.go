package clients_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/clients"
	"github.com/switchboard-mcp/switchboard/internal/config"
)

// testdata are the real-shaped client files of internal/config's tests.
const testdata = "../config/testdata/clients"

// isolate is a user of its own: an environment whose HOME and config
// folders are in a new temporary folder, so that no real user file is read
// or touched, and nothing else (the process's environment is not
// changed: the tests run in parallel).
func isolate(t *testing.T) func(string) (string, bool) {
	t.Helper()
	home := t.TempDir()
	vars := map[string]string{
		"HOME":            home,
		"USERPROFILE":     home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"APPDATA":         filepath.Join(home, "AppData", "Roaming"),
	}
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// userFiles are each client's real-shaped user file.
var userFiles = map[string]string{
	"claude-desktop": "claude-desktop/claude_desktop_config.json",
	"claude-code":    "claude-code/.claude.json",
	"cursor":         "cursor/.cursor/mcp.json",
	"vscode":         "vscode/.vscode/mcp.json", // JSONC: comments, trailing commas
	"windsurf":       "windsurf/mcp_config.json",
	"gemini":         "gemini/.gemini/settings.json",
	"codex":          "codex/config.toml",
	"zed":            "zed/settings.json", // JSONC
}

const gatewayURL = "http://127.0.0.1:7777/mcp"

// entryFor is the entry a client gets by default: the URL where it speaks
// HTTP, the command otherwise.
func entryFor(c *clients.Client) clients.Entry {
	if c.HTTP {
		return clients.Entry{Name: clients.DefaultName, Shape: clients.ShapeURL, URL: gatewayURL}
	}
	return clients.Entry{Name: clients.DefaultName, Shape: clients.ShapeStdio, Command: "/opt/switchboard/bin/switchboard",
		Args: []string{"serve", "--stdio", "--config", "/home/me/switchboard.yaml"}}
}

// commentLines are the lines of src that hold a comment.
func commentLines(src []byte) []string {
	var out []string
	for _, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "//") || strings.Contains(l, "/*") || strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestConnectEachClient: per client, on its real-shaped user file: the
// entry is added in the client's shape (TestConnectNewFile checks that
// Switchboard's reader of that format knows it); the user's servers,
// settings, comments and file mode stay; a backup of the file as it was is
// kept; a second connect changes nothing; disconnect gives back the file
// byte for byte.
func TestConnectEachClient(t *testing.T) {
	t.Parallel()
	for _, c := range clients.All() {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			env := isolate(t)
			src, err := os.ReadFile(filepath.Join(testdata, userFiles[c.ID]))
			if err != nil {
				t.Fatal(err)
			}
			tg, err := c.Target(clients.ScopeUser, "", env)
			if err != nil {
				t.Fatal(err)
			}
			if client, ok := config.UserClientFile(tg.Path, env); !ok || client != c.Name {
				t.Errorf("%s: config.UserClientFile says %q, %v; want %q (trusted at first use)", tg.Path, client, ok, c.Name)
			}
			if c.Installed(env) {
				t.Error("installed before its folder exists")
			}
			if err := os.MkdirAll(filepath.Dir(tg.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tg.Path, src, 0o640); err != nil {
				t.Fatal(err)
			}
			if !c.Installed(env) {
				t.Error("not installed with its folder")
			}
			e := entryFor(c)
			now := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)

			// Dry run: the diff, nothing written.
			dry, err := clients.Connect(tg, e, clients.Options{DryRun: true, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			if !dry.Changed || dry.Backup != "" || !strings.Contains(dry.Diff(), "+") || !strings.Contains(dry.Diff(), clients.DefaultName) {
				t.Errorf("dry run: changed %v, backup %q, diff:\n%s", dry.Changed, dry.Backup, dry.Diff())
			}
			if got, _ := os.ReadFile(tg.Path); !bytes.Equal(got, src) {
				t.Fatal("a dry run wrote the file")
			}

			ch, err := clients.Connect(tg, e, clients.Options{Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			if !ch.Changed || ch.Created || ch.Replaced {
				t.Errorf("connect: changed %v created %v replaced %v", ch.Changed, ch.Created, ch.Replaced)
			}
			after, err := os.ReadFile(tg.Path)
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(tg.Path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
			}
			if want := tg.Path + ".switchboard-backup-20261126T160000Z"; ch.Backup != want {
				t.Errorf("backup %q, want %q", ch.Backup, want)
			}
			if b, err := os.ReadFile(ch.Backup); err != nil || !bytes.Equal(b, src) {
				t.Errorf("the backup is not the file as it was: %v", err)
			}
			for _, l := range commentLines(src) {
				if !strings.Contains(string(after), l) {
					t.Errorf("comment lost: %q", l)
				}
			}
			// Every other line of the file is still there.
			for _, l := range strings.Split(string(src), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.Contains(string(after), strings.TrimSuffix(l, ",")) {
					t.Errorf("line lost: %q", l)
				}
			}

			st, err := clients.Read(tg, clients.DefaultName)
			if err != nil || !st.Connected() {
				t.Fatalf("read: %v, connected %v", err, st.Connected())
			}
			if shape, where := st.Describe(); shape != e.Shape || (shape == clients.ShapeURL && where != gatewayURL) {
				t.Errorf("describe: %s %s", shape, where)
			}

			// Idempotent: nothing to change, nothing written, no backup.
			again, err := clients.Connect(tg, e, clients.Options{Now: func() time.Time { return now.Add(time.Hour) }})
			if err != nil {
				t.Fatal(err)
			}
			if again.Changed || again.Backup != "" {
				t.Errorf("second connect: changed %v, backup %q", again.Changed, again.Backup)
			}
			if got, _ := os.ReadFile(tg.Path); !bytes.Equal(got, after) {
				t.Error("second connect rewrote the file")
			}

			// Disconnect removes only the entry: the file is as it was.
			dis, err := clients.Disconnect(tg, clients.DefaultName, clients.Options{Now: func() time.Time { return now.Add(2 * time.Hour) }})
			if err != nil {
				t.Fatal(err)
			}
			if !dis.Changed || dis.Backup == "" {
				t.Errorf("disconnect: changed %v, backup %q", dis.Changed, dis.Backup)
			}
			if got, _ := os.ReadFile(tg.Path); !bytes.Equal(got, src) {
				t.Errorf("after disconnect the file differs from the original:\n--- got\n%s\n--- want\n%s", got, src)
			}
			if again, _ := clients.Disconnect(tg, clients.DefaultName, clients.Options{}); again.Changed {
				t.Error("a second disconnect changed the file")
			}
		})
	}
}

// TestConnectNewFile: a client whose file does not exist yet gets one
// holding only the entry, mode 0600, and no backup; project scope writes
// in the project's folder.
func TestConnectNewFile(t *testing.T) {
	t.Parallel()
	env := isolate(t)
	project := t.TempDir()
	for _, c := range clients.All() {
		for _, scope := range c.Scopes {
			tg, err := c.Target(scope, project, env)
			if err != nil {
				t.Fatal(err)
			}
			if scope == clients.ScopeProject && !strings.HasPrefix(tg.Path, project+string(filepath.Separator)) {
				t.Errorf("%s project file %s is not in the project", c.ID, tg.Path)
			}
			e := entryFor(c)
			if c.HTTP {
				e.URL = "https://gw.example.com/mcp" // another gateway: read back as a server
			}
			ch, err := clients.Connect(tg, e, clients.Options{})
			if err != nil {
				t.Fatalf("%s %s: %v", c.ID, scope, err)
			}
			if !ch.Created || !ch.Changed || ch.Backup != "" {
				t.Errorf("%s %s: created %v changed %v backup %q", c.ID, scope, ch.Created, ch.Changed, ch.Backup)
			}
			if fi, err := os.Stat(tg.Path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s %s: %v, mode %v", c.ID, scope, err, fi.Mode().Perm())
			}
			// Switchboard's reader of the client's format reads the entry
			// as the client does; the one for its own gateway (switchboard
			// serve --stdio) it knows, and skips rather than connect to
			// itself.
			cfg, err := config.TrustPreview(tg.Path, config.Options{WorkDir: project, UserEnv: env})
			if err != nil {
				t.Fatalf("%s %s: the new file does not load: %v\n%s", c.ID, scope, err, ch.After)
			}
			srv, ok := cfg.Server(clients.DefaultName)
			switch {
			case c.HTTP && (!ok || srv.Transport != config.TransportHTTP || srv.URL != e.URL):
				t.Errorf("%s %s: read back as %v (%v), want http %s\n%s", c.ID, scope, srv, ok, e.URL, ch.After)
			case !c.HTTP && (ok || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].Message, "Switchboard's own gateway")):
				t.Errorf("%s %s: servers %v, warnings %v\n%s", c.ID, scope, cfg.Servers, cfg.Warnings, ch.After)
			}
		}
	}
}

// TestConnectReplacesAndKeepsSymlink: an entry of the same name with other
// fields is replaced (and said so); a file that is a symbolic link is
// written through, and stays a link.
func TestConnectReplacesAndKeepsSymlink(t *testing.T) {
	t.Parallel()
	env := isolate(t)
	c, err := clients.Lookup("cursor")
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := c.Target(clients.ScopeUser, "", env)
	real := filepath.Join(t.TempDir(), "dotfiles-mcp.json")
	if err := os.WriteFile(real, []byte(`{"mcpServers": {"switchboard": {"url": "http://127.0.0.1:9999/mcp"}, "b": {"command": "npx"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(tg.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, tg.Path); err != nil {
		t.Fatal(err)
	}
	ch, err := clients.Connect(tg, entryFor(c), clients.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ch.Replaced || ch.Previous["url"] != "http://127.0.0.1:9999/mcp" {
		t.Errorf("replaced %v, previous %v", ch.Replaced, ch.Previous)
	}
	if fi, err := os.Lstat(tg.Path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v", err)
	}
	got, _ := os.ReadFile(real)
	if want := `{"mcpServers": {"switchboard": {"url": "http://127.0.0.1:7777/mcp"}, "b": {"command": "npx"}}}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestClientRules: Claude Desktop takes no URL; Windsurf and Claude
// Desktop have no project file; names are checked; unknown clients are
// suggested.
func TestClientRules(t *testing.T) {
	t.Parallel()
	env := isolate(t)
	cd, _ := clients.Lookup("Claude Desktop")
	if cd == nil || cd.ID != "claude-desktop" {
		t.Fatalf("lookup by name: %v", cd)
	}
	tg, _ := cd.Target(clients.ScopeUser, "", env)
	if _, err := clients.Connect(tg, clients.Entry{Name: "switchboard", Shape: clients.ShapeURL, URL: gatewayURL}, clients.Options{}); err == nil || !strings.Contains(err.Error(), "only launches its servers as commands") {
		t.Errorf("Claude Desktop with a URL: %v", err)
	}
	ws, _ := clients.Lookup("windsurf")
	if _, err := ws.Target(clients.ScopeProject, t.TempDir(), env); err == nil || !strings.Contains(err.Error(), "has no project-scope file") {
		t.Errorf("Windsurf project scope: %v", err)
	}
	tg, _ = ws.Target(clients.ScopeUser, "", env)
	if _, err := clients.Connect(tg, clients.Entry{Name: "my gateway", Shape: clients.ShapeURL, URL: gatewayURL}, clients.Options{}); err == nil || !strings.Contains(err.Error(), "invalid entry name") {
		t.Errorf("bad name: %v", err)
	}
	if _, err := clients.Lookup("cursr"); err == nil || !strings.Contains(err.Error(), `did you mean "cursor"`) {
		t.Errorf("unknown client: %v", err)
	}
}

// TestConnectRefusesBrokenFile: a file that is not valid JSON is not
// touched, and the message names it.
func TestConnectRefusesBrokenFile(t *testing.T) {
	t.Parallel()
	env := isolate(t)
	c, _ := clients.Lookup("gemini")
	tg, _ := c.Target(clients.ScopeUser, "", env)
	if err := os.MkdirAll(filepath.Dir(tg.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	broken := []byte(`{"theme": "Dracula",`)
	if err := os.WriteFile(tg.Path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := clients.Connect(tg, entryFor(c), clients.Options{})
	if err == nil || !strings.Contains(err.Error(), tg.Path) || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("got %v", err)
	}
	if got, _ := os.ReadFile(tg.Path); !bytes.Equal(got, broken) {
		t.Error("the broken file was changed")
	}
}

// TestConnectWindowsFile: a client file written on Windows — a byte order
// mark (Notepad's), lines ending in \r\n — is connected and disconnected
// as any other: the mark is kept, the lines written end as the file's
// own, the diff's "before" is the file as it was, and disconnecting gives
// the file back byte for byte. Before, the mark made the file "not valid
// JSON", and the entry's lines ended in \n alone.
func TestConnectWindowsFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ client, src string }{
		{"cursor", "\ufeff{\r\n  // mine\r\n  \"mcpServers\": {\r\n    \"fs\": {\"command\": \"npx\", \"args\": [\"C:\\\\Users\\\\me\"]}\r\n  }\r\n}\r\n"},
		{"vscode", "\ufeff{\r\n\t\"servers\": {\r\n\t\t\"fetch\": {\"type\": \"stdio\", \"command\": \"uvx\"}\r\n\t}\r\n}\r\n"},
		{"codex", "# codex\r\nmodel = \"o3\"\r\n\r\n[mcp_servers.docs]\r\ncommand = \"npx\"\r\n"},
	} {
		t.Run(tc.client, func(t *testing.T) {
			t.Parallel()
			env := isolate(t)
			c, err := clients.Lookup(tc.client)
			if err != nil {
				t.Fatal(err)
			}
			tg, _ := c.Target(clients.ScopeUser, "", env)
			if err := os.MkdirAll(filepath.Dir(tg.Path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tg.Path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			ch, err := clients.Connect(tg, entryFor(c), clients.Options{})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			if string(ch.Before) != tc.src {
				t.Errorf("connect: before\n%q\nwant the file as it was\n%q", ch.Before, tc.src)
			}
			got, _ := os.ReadFile(tg.Path)
			if bom := strings.HasPrefix(tc.src, "\ufeff"); bom != bytes.HasPrefix(got, []byte("\ufeff")) {
				t.Errorf("connect: got %q, want the byte order mark kept (%v)", got, bom)
			}
			if n := bytes.Count(got, []byte("\n")); n != bytes.Count(got, []byte("\r\n")) || !bytes.Contains(got, []byte(gatewayURL)) {
				t.Errorf("connect: got %q, want the entry, every line ending in \\r\\n", got)
			}
			// client list reads it as connected.
			if st, err := clients.Read(tg, clients.DefaultName); err != nil || !st.Connected() {
				t.Errorf("read after connect: got connected %v, %v; want the entry found", st.Connected(), err)
			}
			if _, err := clients.Disconnect(tg, clients.DefaultName, clients.Options{}); err != nil {
				t.Fatalf("disconnect: %v", err)
			}
			if got, _ := os.ReadFile(tg.Path); string(got) != tc.src {
				t.Errorf("disconnect: got\n%q\nwant the file as it was\n%q", got, tc.src)
			}
		})
	}
}
