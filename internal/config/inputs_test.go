package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// memSecrets is a SecretStore in memory, with function fields to fail on
// demand.
type memSecrets struct {
	m      map[string]string
	setErr error
}

var _ config.SecretStore = (*memSecrets)(nil)

func (s *memSecrets) Secret(key string) (string, bool, error) {
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *memSecrets) SetSecret(key, value string) error {
	if s.setErr != nil {
		return s.setErr
	}
	s.m[key] = value
	return nil
}

func TestInputEnvName(t *testing.T) {
	for id, want := range map[string]string{
		"github-token": "SWITCHBOARD_INPUT_GITHUB_TOKEN",
		"apiKey":       "SWITCHBOARD_INPUT_APIKEY",
		"path":         "SWITCHBOARD_INPUT_PATH",
		"a.b c":        "SWITCHBOARD_INPUT_A_B_C",
	} {
		if got := config.InputEnvName(id); got != want {
			t.Errorf("InputEnvName(%q): got %q, want %q", id, got, want)
		}
	}
}

// TestInputResolver: the environment first, then the secret store, then
// the prompt (whose answer is kept), then the default; nothing else is an
// *InputUnsetError naming the variable.
func TestInputResolver(t *testing.T) {
	in := config.Input{ID: "api-key", Type: config.InputPromptString, Password: true, File: "/p/.vscode/mcp.json"}
	key := config.InputSecretKey(in.File, in.ID)
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	store := &memSecrets{m: map[string]string{}}
	asked := 0
	prompt := func(got config.Input) (string, error) {
		asked++
		if got.ID != in.ID || !got.Password {
			t.Errorf("prompted for %+v", got)
		}
		return "typed", nil
	}
	r := &config.InputResolver{Prompt: prompt, Secrets: store}

	if v, err := r.Resolve(in, env(map[string]string{"SWITCHBOARD_INPUT_API_KEY": "from-env"})); v != "from-env" || err != nil || asked != 0 {
		t.Errorf("environment: got %q, %v after %d prompts", v, err, asked)
	}
	if v, err := r.Resolve(in, nil); v != "typed" || err != nil || asked != 1 || store.m[key] != "typed" {
		t.Errorf("prompt: got %q, %v after %d prompts, stored %q", v, err, asked, store.m[key])
	}
	if v, err := r.Resolve(in, nil); v != "typed" || err != nil || asked != 1 {
		t.Errorf("store: got %q, %v after %d prompts", v, err, asked)
	}

	noTerminal := &config.InputResolver{}
	_, err := noTerminal.Resolve(in, nil)
	var unset *config.InputUnsetError
	if !errors.As(err, &unset) || unset.EnvVar != "SWITCHBOARD_INPUT_API_KEY" || !strings.Contains(err.Error(), "set SWITCHBOARD_INPUT_API_KEY") {
		t.Errorf("no value: got %v", err)
	}
	withDefault := in
	withDefault.Default = "dflt"
	if v, err := noTerminal.Resolve(withDefault, nil); v != "dflt" || err != nil {
		t.Errorf("default: got %q, %v", v, err)
	}

	pick := config.Input{ID: "region", Type: config.InputPickString, Options: []string{"eu", "us"}}
	if _, err := noTerminal.Resolve(pick, env(map[string]string{"SWITCHBOARD_INPUT_REGION": "mars"})); err == nil || !strings.Contains(err.Error(), "not one of its options (eu, us)") {
		t.Errorf("pickString: got %v", err)
	}
	cmd := config.Input{ID: "pick", Type: config.InputCommand, Command: "shellCommand.execute"}
	if _, err := r.Resolve(cmd, nil); !errors.As(err, &unset) || !strings.Contains(err.Error(), "shellCommand.execute") {
		t.Errorf("command input: got %v", err)
	}

	broken := &config.InputResolver{Prompt: prompt, Secrets: &memSecrets{m: map[string]string{}, setErr: errors.New("disk full")}}
	if _, err := broken.Resolve(in, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("store failure: got %v", err)
	}
}

// TestInputsValidateAndImportAgree: the same file, read by config validate
// (Load) and by config import, resolves inputs the same way: Load asks once
// per input however often it is used, and the import refers to the
// variable whose value Load would take.
func TestInputsValidateAndImportAgree(t *testing.T) {
	file := repoFile(t, ".vscode/mcp.json", `{
  "inputs": [{"type": "promptString", "id": "tok", "password": true}],
  "servers": {
    "a": {"type": "http", "url": "https://a.example.com/mcp", "headers": {"Authorization": "Bearer ${input:tok}"}},
    "b": {"type": "http", "url": "https://b.example.com/mcp", "headers": {"X-Token": "${input:tok}"}}
  }
}`)
	asked := 0
	opts := config.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
		Inputs:    &config.InputResolver{Prompt: func(config.Input) (string, error) { asked++; return "secret", nil }},
	}
	cfg, err := config.Load(file, opts)
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 || cfg.Servers[0].Headers["Authorization"] != "Bearer secret" || cfg.Servers[1].Headers["X-Token"] != "secret" {
		t.Errorf("got %d prompts, headers %v %v", asked, cfg.Servers[0].Headers, cfg.Servers[1].Headers)
	}

	out, err := config.Import(file, opts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "secret") || !strings.Contains(string(out), "${SWITCHBOARD_INPUT_TOK}") {
		t.Errorf("import: the input is not a variable reference:\n%s", out)
	}
	native := filepath.Join(t.TempDir(), config.FileName)
	if err := os.WriteFile(native, out, 0o600); err != nil {
		t.Fatal(err)
	}
	withVar := config.Options{LookupEnv: func(k string) (string, bool) { return "secret", k == "SWITCHBOARD_INPUT_TOK" }}
	imported, err := config.Load(native, withVar)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := config.Load(file, withVar)
	if err != nil {
		t.Fatal(err)
	}
	for i := range loaded.Servers {
		for k, v := range loaded.Servers[i].Headers {
			if imported.Servers[i].Headers[k] != v {
				t.Errorf("server %d header %s: import gives %q, load %q", i, k, imported.Servers[i].Headers[k], v)
			}
		}
	}

	// Without a terminal or a value, both say which variable to set: load
	// keeps both servers, unable to start, saying so; import succeeds
	// with the reference.
	cfg, err = config.Load(file, config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("no value: got %v, want the file loaded", err)
	}
	for _, srv := range cfg.Servers {
		var unset *config.InputUnsetError
		if len(srv.CannotStart) != 1 || !errors.As(srv.CannotStart[0].Err, &unset) || !strings.Contains(srv.CannotStart[0].String(), "or set SWITCHBOARD_INPUT_TOK") {
			t.Errorf("no value: server %s: got CannotStart %v, want the input without a value", srv.Name, srv.CannotStart)
		}
	}
	if _, err := config.Import(file, config.Options{LookupEnv: func(string) (string, bool) { return "", false }}); err != nil {
		t.Errorf("import without a value: %v", err)
	}
}
