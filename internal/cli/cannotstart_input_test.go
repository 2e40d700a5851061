package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestVSCodeFileServesBesideAServerWhoseInputHasNoValue: a project's
// VS Code file whose one server needs inputs that have no value (no
// SWITCHBOARD_INPUT_*, nothing stored, no terminal) and another a
// variable that is not set is served, not refused: its good server's tool
// is called; the others are cannot_start, saying which input or variable
// and what to run. The inputs' values are stored with config input
// --stdin (never printed), and switchboard reload starts the server with
// them — its mode is one of them, so it serves only if the value reached
// it — while the one with the unset variable still cannot start and says
// that serve must be restarted with it set.
func TestVSCodeFileServesBesideAServerWhoseInputHasNoValue(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	setenv(t, "HOME", t.TempDir())
	const unsetVar = "SWITCHBOARD_TEST_INPUTS32_UNSET"
	const secret = "sk-test-inputs32-0123456789"
	exe := testserver.Command(t)
	file := writeClientFile(t, ".vscode/mcp.json", map[string]any{
		"inputs": []map[string]any{
			{"type": "promptString", "id": "mode", "description": "How the server runs", "password": true},
			{"type": "promptString", "id": "api-key", "description": "API key", "password": true},
		},
		"servers": map[string]any{
			"good": map[string]any{"type": "stdio", "command": exe, "env": map[string]string{testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv}},
			"keyed": map[string]any{"type": "stdio", "command": exe, "env": map[string]string{
				testserver.EnvMode: "${input:mode}", "GIZMO_LOGIN": "${input:api-key}", "GORACE": testserver.RaceEnv}},
			"varred": map[string]any{"type": "stdio", "command": exe, "env": map[string]string{
				testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv, "REGION": "${" + unsetVar + "}"}},
		},
	})
	// The test server is no npx: the file runs it once trusted. An input
	// without a value does not stop the trust.
	wantCode(t, runCLI(t, "config", "trust", file, "--yes"), ExitOK)

	store := config.StoreInputCommand(file, "mode")
	r := runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "validate", r.stdout+r.stderr, "cannot start", "keyed", "varred",
		`input "mode" has no value; store it: `+store, "or set SWITCHBOARD_INPUT_MODE", "variable "+unsetVar+" is not set")

	serveInProcess(t, file)
	type row struct {
		Server      string   `json:"server"`
		State       string   `json:"state"`
		LastError   string   `json:"last_error"`
		Suggestions []string `json:"suggestions"`
	}
	servers := func() map[string]row {
		r := runCLI(t, "servers", "--config", file, "--json")
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("servers printed the input's value:\n%s%s", r.stdout, r.stderr)
		}
		var rows []row
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("servers --json: %v\n%s%s", err, r.stdout, r.stderr)
		}
		m := map[string]row{}
		for _, s := range rows {
			m[s.Server] = s
		}
		return m
	}
	var m map[string]row
	eventuallyCLI(t, 30*time.Second, "good connected, keyed and varred cannot_start", func() bool {
		m = servers()
		return m["good"].State == "connected" && m["keyed"].State == "cannot_start" && m["varred"].State == "cannot_start"
	})
	wantContains(t, "keyed's last_error", m["keyed"].LastError, file+":", "servers.keyed.env."+testserver.EnvMode+`: input "mode" has no value`,
		`servers.keyed.env.GIZMO_LOGIN: input "api-key" has no value`)
	wantContains(t, "keyed's suggestions", strings.Join(m["keyed"].Suggestions, "\n"), "store it: "+store, "--stdin", "then run: switchboard reload")
	wantContains(t, "varred's last_error", m["varred"].LastError, "servers.varred.env.REGION: variable "+unsetVar+" is not set")
	wantContains(t, "varred's suggestions", strings.Join(m["varred"].Suggestions, "\n"), "set it in the environment",
		"restart serve", "switchboard reload does not see a variable set since")

	r = runCLI(t, "call", "--config", file, "good", "echo", "message=hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "good's echo", r.stdout, "hi")
	r = runCLI(t, "call", "--config", file, "keyed", "echo", "message=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "keyed's echo", r.stderr, "server keyed cannot start", `input "mode" has no value`)

	// Without a terminal and without --stdin, config input says how.
	r = runCLIInput(t, context.Background(), strings.NewReader(""), "config", "input", "mode", file)
	wantCode(t, r, ExitUsage)
	wantContains(t, "config input without --stdin", r.stderr, "no terminal to ask", "--stdin")
	// An id the file does not declare is named, with the ones it does.
	r = runCLIInput(t, context.Background(), strings.NewReader("x"), "config", "input", "mdoe", file, "--stdin")
	wantCode(t, r, ExitFailure)
	wantContains(t, "config input of an undeclared id", r.stderr, `declares no input "mdoe"`, "it declares api-key, mode")

	for id, v := range map[string]string{"mode": "ok\n", "api-key": secret} {
		r = runCLIInput(t, context.Background(), strings.NewReader(v), "config", "input", id, file, "--stdin")
		wantCode(t, r, ExitOK)
		wantContains(t, "config input "+id, r.stdout, `stored input "`+id+`" of `+file, filepath.Join(state, "secrets"))
		wantContains(t, "config input "+id, r.stderr, "run switchboard reload")
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("config input printed the value:\n%s%s", r.stdout, r.stderr)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(state, "secrets", "values")); err != nil || strings.Contains(string(raw), secret) {
		t.Fatalf("the secret store: %v; want it sealed, without the value in plain text", err)
	}

	r = runCLI(t, "reload", "--config", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "reload", r.stdout, "changed: keyed")
	wantContains(t, "reload", r.stderr, "warning: server varred cannot start: ", unsetVar)
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Fatalf("reload printed the value:\n%s%s", r.stdout, r.stderr)
	}
	eventuallyCLI(t, 30*time.Second, "keyed connected after the reload", func() bool {
		m = servers()
		return m["keyed"].State == "connected"
	})
	if m["varred"].State != "cannot_start" {
		t.Errorf("varred after the reload: got %s, want cannot_start (serve's environment is read once)", m["varred"].State)
	}
	r = runCLI(t, "call", "--config", file, "keyed", "echo", "message=stored")
	wantCode(t, r, ExitOK)
	wantContains(t, "keyed's echo after the reload", r.stdout, "stored")
	r = runCLI(t, "config", "show", "--config", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "config show", r.stdout, `GIZMO_LOGIN: "[REDACTED]"`)
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("config show printed the input's value:\n%s", r.stdout)
	}
}

// TestClientFileVariableOnlyTheDaemonHas: a client's file whose server
// uses a variable the daemon serving it has and the caller's shell does
// not: commands from that shell read the file with a stand-in, as for
// switchboard.yaml, rather than as a server that cannot start — config
// validate passes and config show names no server that cannot start.
func TestClientFileVariableOnlyTheDaemonHas(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	const teamVar = "SWITCHBOARD_TEST_INPUTS32_TEAM"
	file := writeClientFile(t, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{
		"web": map[string]any{"url": "https://mcp.example.com/mcp", "headers": map[string]string{"X-Team": "${" + teamVar + "}"}},
	}})
	r := runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "validate without a daemon", r.stderr, "variable "+teamVar+" is not set")

	startDaemonIn(t, file, withVars(envOf(t), map[string]string{teamVar: "blue"}))
	r = runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitOK)
	r = runCLI(t, "config", "show", "--config", file)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stdout, "cannot start") {
		t.Errorf("config show with the daemon that has %s: got\n%s\nwant no server that cannot start", teamVar, r.stdout)
	}
}

// TestStandInsLeaveInputsToTheStore: the stand-in a command uses for a
// variable the daemon has is never one for a VS Code input's variable,
// which would shadow the value kept in the secret store (and, for a
// pickString, not be one of its options).
func TestStandInsLeaveInputsToTheStore(t *testing.T) {
	t.Parallel()
	a := &app{env: func(string) (string, bool) { return "", false }}
	if v, ok := a.envOrStandIn(config.InputEnvName("region")); ok {
		t.Errorf("input variable: got stand-in %q, want none", v)
	}
	if v, ok := a.envOrStandIn("TEAM"); !ok || v != unsetStandIn+"-TEAM" {
		t.Errorf("TEAM: got %q, %v; want its stand-in", v, ok)
	}
}

// writeClientFile writes v as JSON to rel (such as .vscode/mcp.json) in a
// new project folder, and returns its path.
func writeClientFile(t *testing.T, rel string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestConfigInputAsksWithoutEcho: on a terminal, config input asks for
// the value showing the input's description and never echoes what is
// typed, even for an input that is not a password; the value is then
// the input's for every command (config validate passes).
func TestConfigInputAsksWithoutEcho(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	file := writeClientFile(t, ".vscode/mcp.json", map[string]any{
		"inputs": []map[string]any{{"type": "promptString", "id": "team", "description": "Your team's name"}},
		"servers": map[string]any{
			"web": map[string]any{"type": "http", "url": "https://mcp.example.com/mcp", "headers": map[string]string{"X-Team": "${input:team}"}},
		},
	})
	wantCode(t, runCLI(t, "config", "validate", file), ExitFailure)

	const typed = "team-blue-7"
	p := startOnPTY(t, []string{"SWITCHBOARD_STATE_DIR=" + state}, "config", "input", "team", file)
	p.expect("Your team's name")
	p.answer("team: ", typed)
	out := p.succeeds("config input on a terminal")
	wantContains(t, "config input", out, `stored input "team" of `+file)
	if strings.Contains(out, typed) {
		t.Errorf("the terminal showed the value:\n%s", out)
	}
	r := runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitOK)

	// --json says what was stored where, never the value.
	r = runCLIInput(t, context.Background(), strings.NewReader("team-red-3\n"), "config", "input", "team", file, "--stdin", "--json")
	wantCode(t, r, ExitOK)
	var got map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got["file"] != file || got["input"] != "team" || got["store"] != filepath.Join(state, "secrets", "values") || strings.Contains(r.stdout, "team-red-3") {
		t.Errorf("config input --json: got %s (%v), want the file, the input and the store", r.stdout, err)
	}
}
