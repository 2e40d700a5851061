package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestClientFileServesBesideAServerThatCannotStart: a Claude Desktop file
// in which one server names an env file and a cwd that do not exist is
// served, not refused: the other server connects and its tool is called;
// the broken one is shown as cannot_start with both causes (the file, the
// line, the key, the missing path) and what to run, by `servers` and the
// console's API, /readyz names its state, and a call to its tool fails at
// once with the cause. Once the paths exist, `switchboard reload` starts
// it, without a restart of the daemon.
func TestClientFileServesBesideAServerThatCannotStart(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	setenv(t, "HOME", t.TempDir())
	dir := t.TempDir()
	exe := testserver.Command(t)
	envFile, work := filepath.Join(dir, "bad.env"), filepath.Join(dir, "work")
	env := map[string]string{testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv}
	data, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{
		"good": map[string]any{"command": exe, "env": env},
		"bad":  map[string]any{"command": exe, "env": env, "envFile": envFile, "cwd": work},
	}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The test server is no npx: the file runs it once trusted.
	wantCode(t, runCLI(t, "config", "trust", file, "--yes"), ExitOK)

	r := runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "validate", r.stdout+r.stderr, "cannot start", "bad", "env file "+envFile+" does not exist")

	serveInProcess(t, file)
	var servers []struct {
		Server      string   `json:"server"`
		State       string   `json:"state"`
		LastError   string   `json:"last_error"`
		Suggestions []string `json:"suggestions"`
	}
	state2 := func() map[string]int {
		r := runCLI(t, "servers", "--config", file, "--json")
		servers = nil
		if err := json.Unmarshal([]byte(r.stdout), &servers); err != nil {
			t.Fatalf("servers --json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		m := map[string]int{}
		for i, s := range servers {
			if s.State == "connected" || s.State == "cannot_start" {
				m[s.Server+" "+s.State] = i + 1
			}
		}
		return m
	}
	eventuallyCLI(t, 30*time.Second, "good connected and bad cannot_start", func() bool {
		m := state2()
		return m["good connected"] > 0 && m["bad cannot_start"] > 0
	})
	bad := servers[state2()["bad cannot_start"]-1]
	wantContains(t, "bad's last_error", bad.LastError,
		file+":", "mcpServers.bad.envFile: env file "+envFile+" does not exist",
		"mcpServers.bad.cwd: directory "+work+" does not exist")
	wantContains(t, "bad's suggestions", strings.Join(bad.Suggestions, "\n"), "create it, or fix the path", "switchboard reload")

	r = runCLI(t, "servers", "--config", file)
	wantCode(t, r, ExitFailure) // an enabled server is not connected
	wantContains(t, "servers table", r.stdout, "cannot_start", "env file "+envFile+" does not exist", "switchboard reload")

	// The good server serves.
	r = runCLI(t, "call", "--config", file, "good", "echo", "message=hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "good's echo", r.stdout, "hi")

	// The bad one's tool fails at once, saying why.
	start := time.Now()
	r = runCLI(t, "call", "--config", file, "bad", "echo", "message=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "bad's echo", r.stderr, "server bad cannot start", "env file "+envFile+" does not exist")
	if strings.Contains(r.stderr, "no tool named") || time.Since(start) > 5*time.Second {
		t.Errorf("bad's echo took %s and said %q: want the cause at once", time.Since(start), r.stderr)
	}

	// Over HTTP: the console's API and /readyz, and a gateway client.
	c := control.Dial(control.SocketPath(state))
	st, err := c.Status(context.Background())
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := clientAddr(st.Address)
	base := "http://" + addr
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/ui/api/servers")
	if code != http.StatusOK {
		t.Fatalf("/ui/api/servers: %d %s", code, body)
	}
	var api struct {
		Servers []struct {
			Server    string `json:"server"`
			State     string `json:"state"`
			LastError string `json:"last_error"`
			Hint      string `json:"hint"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(body), &api); err != nil {
		t.Fatalf("/ui/api/servers: %v\n%s", err, body)
	}
	found := false
	for _, s := range api.Servers {
		if s.Server == "bad" {
			found = s.State == "cannot_start" && strings.Contains(s.LastError, "env file "+envFile+" does not exist") && strings.Contains(s.Hint, "switchboard reload")
		}
	}
	if !found {
		t.Errorf("/ui/api/servers: want bad in cannot_start with its cause and what to run, got %s", body)
	}
	code, body = get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"bad":"cannot_start"`) || !strings.Contains(body, `"good":"connected"`) {
		t.Errorf("/readyz: got %d %s, want 503 naming bad as cannot_start and good connected", code, body)
	}
	ctx := context.Background()
	cs := gatewaySession(t, ctx, addr)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bad__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || !res.IsError || !strings.Contains(textOfResult(res), "env file "+envFile+" does not exist") {
		t.Fatalf("gateway call of bad__echo: got %+v, %v; want an error result naming the missing env file", res, err)
	}

	// Half fixed and reloaded: the reload says what is still missing.
	if err := os.WriteFile(envFile, []byte("GREETING=hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "reload", "--config", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "reload with the cwd still missing", r.stderr, "warning: server bad cannot start: ", "directory "+work+" does not exist")
	if strings.Contains(r.stderr, "env file") {
		t.Errorf("reload: got %q, want only the cwd still missing", r.stderr)
	}

	// Fixed and reloaded: it starts, and its tool answers.
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "reload", "--config", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "reload", r.stdout, "1 changed", "changed: bad")
	eventuallyCLI(t, 30*time.Second, "bad connected after the reload", func() bool { return state2()["bad connected"] > 0 })
	r = runCLI(t, "call", "--config", file, "bad", "echo", "message=again")
	wantCode(t, r, ExitOK)
	wantContains(t, "bad's echo after the reload", r.stdout, "again")
}

// TestUntrustedCommandCannotStartUntilTrusted: a project's Cursor file,
// not trusted, whose one server runs a program beyond npx, uvx and docker
// is served: its URL server connects and answers, the other is shown as
// cannot_start with the refusal and the command that trusts the file.
// config trust makes the daemon reload, and the server starts.
func TestUntrustedCommandCannotStartUntilTrusted(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	exe := testserver.Command(t)
	data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"web":   map[string]any{"url": testserver.OKHTTP(t) + "/mcp"},
		"notes": map[string]any{"command": exe, "env": map[string]string{testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, file)
	states := func() string {
		r := runCLI(t, "servers", "--config", file)
		return r.stdout
	}
	eventuallyCLI(t, 30*time.Second, "web connected, notes cannot_start", func() bool {
		out := states()
		return strings.Contains(out, "web ") && strings.Contains(out, "connected") && strings.Contains(out, "cannot_start")
	})
	wantContains(t, "servers", states(), `command "`+exe+`" is not allowed: this file is not trusted`,
		"run: switchboard config trust "+file+" --yes", "config trust reloads a running serve")
	r := runCLI(t, "call", "--config", file, "web", "echo", "message=hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "web's echo", r.stdout, "hi")
	r = runCLI(t, "call", "--config", file, "notes", "echo", "message=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "notes' echo", r.stderr, "server notes cannot start", "is not allowed")

	r = runCLI(t, "config", "trust", file, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "config trust", r.stderr, "reloaded "+file)
	eventuallyCLI(t, 30*time.Second, "notes connected once trusted", func() bool {
		out := states()
		return !strings.Contains(out, "cannot_start") && strings.Count(out, "connected") == 2
	})
	r = runCLI(t, "call", "--config", file, "notes", "echo", "message=trusted")
	wantCode(t, r, ExitOK)
	wantContains(t, "notes' echo once trusted", r.stdout, "trusted")
}
