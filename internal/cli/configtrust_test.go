package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/sealed"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// cursorFile writes a project's .cursor/mcp.json shaped like Cursor's own
// (see internal/config/testdata/clients/cursor), whose server "notes" runs
// the test server program by its absolute path: beyond the allowlist, so the file
// needs trust.
func cursorFile(t *testing.T, dir string) string {
	t.Helper()
	exe := testserver.Command(t)
	body := map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{
			"command": exe,
			"args":    []string{"--home", "${userHome}/notes"},
			"env":     map[string]string{testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv},
		},
		"linear": map[string]any{"url": "https://mcp.linear.app/sse", "headers": map[string]string{"Authorization": "Bearer ${env:LINEAR_TOKEN:-none}"}},
	}}
	data, err := json.MarshalIndent(body, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigTrustCursorFile: a repository's Cursor file that runs a
// program beyond the allowlist is refused with the command that trusts
// it; after `config trust --yes` it loads and its server runs; an edit
// needs trust again.
func TestConfigTrustCursorFile(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	setenv(t, "HOME", t.TempDir())
	file := cursorFile(t, t.TempDir())

	r := runCLI(t, "call", "--config", file, "notes", "echo", "message=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "is not allowed: this file is not trusted", "run: switchboard config trust "+file+" --yes")

	// No terminal to confirm on: nothing is recorded.
	r = runCLI(t, "config", "trust", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stdout", r.stdout, "notes", "Once trusted it also runs", "(server notes)")
	wantContains(t, "stderr", r.stderr, "no terminal to confirm on", "--yes")
	if st, _ := config.CheckTrust(state, file); st != config.Untrusted {
		t.Fatalf("trust without confirmation: state %s", st)
	}

	r = runCLI(t, "config", "trust", file, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "trusted "+file, "sha256 ")

	r = runCLI(t, "call", "--config", file, "notes", "echo", "message=hi")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "hi")

	r = runCLI(t, "config", "trust", "--status", file, "--json")
	wantCode(t, r, ExitOK)
	var st trustJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if st.State != "trusted" || st.TrustedAt == nil || len(st.SHA256) != 64 || st.Native || st.Path != file {
		t.Errorf("status: got %+v", st)
	}

	// An edit needs trust again.
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "call", "--config", file, "notes", "echo", "message=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "the file changed since you trusted it")
	r = runCLI(t, "config", "trust", "--status", file)
	wantContains(t, "stdout", r.stdout, ": changed (trusted ")
}

// TestConfigTrustNative: trusting a native file says that its commands
// are allowed by security.allowed_commands and only its hooks need trust.
func TestConfigTrustNative(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, map[string]string{"alpha": "ok"})
	r := runCLI(t, "config", "trust", file, "--yes")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "native switchboard.yaml", "security.allowed_commands", "its hooks run until it changes")
	r = runCLI(t, "config", "trust", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "already trusted")
}

// TestUserClientFileWithoutTerminal: the user's own Cursor file may be
// trusted at first use, but only on a terminal; without one its server
// cannot start, and the refusal says both ways to trust it, and the command it gives works where it was
// given (config trust without a terminal needs --yes).
func TestUserClientFileWithoutTerminal(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	home := t.TempDir()
	setenv(t, "HOME", home)
	file := cursorFile(t, home) // ~/.cursor/mcp.json: the user's own
	r := runCLI(t, "servers", "--config", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "servers", r.stdout, "notes", "cannot_start", "your Cursor configuration", "run a command on a terminal to be asked, or, once you have reviewed the file, run: switchboard config trust")
	runTrustHint(t, r.stdout)
	wantCode(t, runCLI(t, "call", "--config", file, "notes", "echo", "message=hi"), ExitOK)
}

// TestTrustHintsWorkWithoutTerminal: every hint that tells a person
// without a terminal to trust a file gives a command that works there: the
// refusal of a file that is not a client's, of a changed file, and
// config trust --status.
func TestTrustHintsWorkWithoutTerminal(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	file := cursorFile(t, t.TempDir()) // not the user's own: no question at all

	r := runCLI(t, "config", "trust", file, "--status")
	wantCode(t, r, ExitOK)
	wantContains(t, "config trust --status", r.stdout, "to trust it: switchboard config trust "+file+" --yes\n")

	r = runCLI(t, "servers", "--config", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "refusal", r.stdout, "cannot_start", "this file is not trusted")
	runTrustHint(t, r.stdout)
	wantCode(t, runCLI(t, "call", "--config", file, "notes", "echo", "message=hi"), ExitOK)

	if err := appendFile(file, "\n"); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "servers", "--config", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "refusal of the changed file", r.stdout, "cannot_start", "review the change, then run: ")
	runTrustHint(t, r.stdout)
	wantCode(t, runCLI(t, "call", "--config", file, "notes", "echo", "message=hi"), ExitOK)
}

// runTrustHint runs the trust command an error's hint gives, as a person
// without a terminal would, and wants it to trust the file.
func runTrustHint(t *testing.T, stderr string) {
	t.Helper()
	m := regexp.MustCompile(`run: switchboard (config trust \S+(?: --yes)?)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no trust command in:\n%s", stderr)
	}
	r := runCLI(t, strings.Fields(m[1])...)
	if r.code != ExitOK {
		t.Fatalf("the hint's command %q without a terminal: exit %d, want 0\nstderr:\n%s", "switchboard "+m[1], r.code, r.stderr)
	}
}

// TestUserClientFileConfirmed: on a terminal (an injected asker), the
// question names the file and the commands; yes records the trust and the
// file loads.
func TestUserClientFileConfirmed(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	home := t.TempDir()
	setenv(t, "HOME", home)
	file := cursorFile(t, home)
	var out bytes.Buffer
	a := &app{stderr: &out, stateDir: state, env: envOf(t), ask: &asker{in: bufio.NewReader(strings.NewReader("y\n")), out: &out}}
	cfg, err := config.Load(file, a.configOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 2 {
		t.Fatalf("got %d servers", len(cfg.Servers))
	}
	wantContains(t, "question", out.String(), file, "your Cursor configuration", "(server notes)", "[y/N]")
	if st, _ := config.CheckTrust(state, file); st != config.Trusted {
		t.Fatalf("state %s after yes", st)
	}

	// configOptions(false), as the daemon's reload: nobody is asked.
	a2 := &app{stderr: &out, stateDir: t.TempDir(), env: envOf(t), ask: &asker{in: bufio.NewReader(strings.NewReader("y\n")), out: &out}}
	cfg, err = config.Load(file, a2.configOptions(false))
	if err != nil {
		t.Fatal(err)
	}
	if notes, _ := cfg.Server("notes"); len(notes.CannotStart) == 0 {
		t.Fatal("an untrusted file's command may run without asking")
	}
}

// TestAskerConfirm: y/yes is yes, an empty answer or n is no, anything
// else asks again, and the end of the input is an error.
func TestAskerConfirm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want bool
		err  bool
	}{
		{"y\n", true, false},
		{"YES\n", true, false},
		{"\n", false, false},
		{"n\n", false, false},
		{"maybe\ny\n", true, false},
		{"", false, true},
	} {
		var out bytes.Buffer
		q := &asker{in: bufio.NewReader(strings.NewReader(tc.in)), out: &out}
		got, err := q.confirm("Trust it?")
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%q: got %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if tc.in == "" && !errors.Is(err, errNoAnswer) {
			t.Errorf("end of input: got %v, want errNoAnswer", err)
		}
		if !strings.Contains(out.String(), "Trust it? [y/N] ") {
			t.Errorf("%q: the question was %q", tc.in, out.String())
		}
	}
}

// TestAskerInput: the prompt shows the input's description, options and
// default and the variable that would give it; a password is read without
// echo (readPassword); a pick must be an option; an empty answer takes
// the default.
func TestAskerInput(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	q := &asker{in: bufio.NewReader(strings.NewReader("asia\nus\n\n")), out: &out, readPassword: func() (string, error) { return "s3cret", nil }}
	pick := config.Input{ID: "region", Type: config.InputPickString, Description: "Region", Options: []string{"eu", "us"}, Default: "eu", File: "/p/.vscode/mcp.json"}
	got, err := q.input(pick)
	if err != nil || got != "us" {
		t.Fatalf("pick: got %q, %v; want us", got, err)
	}
	wantContains(t, "prompt", out.String(), `/p/.vscode/mcp.json needs input "region": Region`, "options: eu, us", "region [eu]: ",
		`"asia" is not one of the options`, "SWITCHBOARD_INPUT_REGION")
	if got, err := q.input(pick); err != nil || got != "" {
		t.Fatalf("empty answer: got %q, %v (the resolver takes the default)", got, err)
	}
	pw := config.Input{ID: "key", Type: config.InputPromptString, Description: "API key", Password: true}
	if got, err := q.input(pw); err != nil || got != "s3cret" {
		t.Fatalf("password: got %q, %v", got, err)
	}
	if strings.Contains(out.String(), "s3cret") {
		t.Error("the password was echoed")
	}
}

// vscodeFile writes a project's .vscode/mcp.json with a password input,
// shaped like VS Code's own.
func vscodeFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, ".vscode", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `{
  // Inputs are prompted on first server start.
  "inputs": [
    {"type": "promptString", "id": "api-key", "description": "Perplexity API Key", "password": true},
  ],
  "servers": {
    "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"], "env": {"PERPLEXITY_API_KEY": "${input:api-key}"}},
  },
}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInputsWithoutTerminal: without a terminal an input with no value
// is named with the variable to set; once the value is in the secret
// store (given on a terminal before), every command has it, and it is
// never on disk in plain text.
func TestInputsWithoutTerminal(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	file := vscodeFile(t)
	r := runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, `input "api-key" has no value; store it: `+config.StoreInputCommand(file, "api-key"), "or set SWITCHBOARD_INPUT_API_KEY")

	// Asked on a terminal (an injected asker): the answer is kept.
	const secret = "pplx-0123456789abcdef"
	var out bytes.Buffer
	a := &app{stderr: &out, stateDir: state, ask: &asker{in: bufio.NewReader(strings.NewReader("")), out: &out, readPassword: func() (string, error) { return secret, nil }}}
	cfg, err := config.Load(file, a.configOptions(true))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers[0].Env["PERPLEXITY_API_KEY"]; got != secret {
		t.Fatalf("env: got %q", got)
	}
	wantContains(t, "prompt", out.String(), "Perplexity API Key")

	r = runCLI(t, "config", "validate", file)
	wantCode(t, r, ExitOK)
	r = runCLI(t, "config", "show", "--config", file)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stdout, secret) {
		t.Error("config show printed the input's value")
	}
	if v, ok, err := sealed.NewSecrets(state).Secret(config.InputSecretKey(file, "api-key")); !ok || err != nil || v != secret {
		t.Fatalf("secret store: %q %v %v", v, ok, err)
	}
	err = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the input's value in plain text", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// config import never asks and never writes the value.
	r = runCLI(t, "config", "import", file)
	wantCode(t, r, ExitOK)
	wantContains(t, "import", r.stdout, "${SWITCHBOARD_INPUT_API_KEY}")
	if strings.Contains(r.stdout, secret) {
		t.Error("config import wrote the input's value")
	}
}
