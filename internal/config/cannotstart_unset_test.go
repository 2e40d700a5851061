package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// mapSecrets is a config.SecretStore in memory.
type mapSecrets map[string]string

var _ config.SecretStore = mapSecrets(nil)

func (m mapSecrets) Secret(key string) (string, bool, error) {
	v, ok := m[key]
	return v, ok, nil
}

func (m mapSecrets) SetSecret(key, value string) error {
	m[key] = value
	return nil
}

// vscodeUnsetFile is a project's VS Code file with one server that needs
// nothing, one that uses an input and one that uses variables in its url,
// header and args.
const vscodeUnsetFile = `{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
  "servers": {
    "good": {"type": "stdio", "command": "npx", "args": ["-y", "x"]},
    "keyed": {"type": "stdio", "command": "npx", "args": ["-y", "y"], "env": {"API_KEY": "${input:api-key}"}},
    "remote": {"type": "http", "url": "https://${NOPE_HOST}/mcp", "headers": {"X-Team": "${NOPE_TEAM}"}},
    "tool": {"type": "stdio", "command": "npx", "args": ["-y", "${NOPE_PKG}"]}
  }
}`

// TestUnsetInputOrVariableMakesOneServerUnableToStart: in a client's
// file, a VS Code input with no value (no variable, nothing stored, no
// terminal, no default) and a ${VAR} that is not set no longer refuse the
// file: each server that uses one cannot start, saying which input or
// variable and how to give it a value; the others are as written. The
// hint for an input is a reload (the secret store is read afresh), for a
// variable a restart of serve (its environment is read once). Once the
// value is stored, the server loads with it. In switchboard.yaml an unset
// variable still refuses the file.
func TestUnsetInputOrVariableMakesOneServerUnableToStart(t *testing.T) {
	file := repoFile(t, ".vscode/mcp.json", vscodeUnsetFile)
	store := mapSecrets{}
	opts := config.Options{
		LookupEnv: func(string) (string, bool) { return "", false },
		Inputs:    &config.InputResolver{Secrets: store},
	}
	cfg, err := config.Load(file, opts)
	if err != nil {
		t.Fatalf("the whole file was refused: %v", err)
	}
	if good, _ := cfg.Server("good"); len(good.CannotStart) != 0 || good.Command != "npx" {
		t.Errorf("good: got %+v, want it as written, able to start", good)
	}
	keyed, _ := cfg.Server("keyed")
	var ui *config.InputUnsetError
	want := `servers.keyed.env.API_KEY: input "api-key" has no value; store it: ` + config.StoreInputCommand(file, "api-key") +
		" (it asks without echo; --stdin reads it from a pipe), or set SWITCHBOARD_INPUT_API_KEY"
	if len(keyed.CannotStart) != 1 || !errors.As(keyed.CannotStart[0].Err, &ui) || !strings.HasSuffix(keyed.CannotStart[0].String(), want) {
		t.Fatalf("keyed: got %v, want %q", keyed.CannotStart, want)
	}
	if got := config.StartHint(keyed.CannotStart, 0); !strings.Contains(got, "switchboard reload") {
		t.Errorf("keyed's hint: got %q, want a reload", got)
	}
	if got := config.StartHint(keyed.CannotStart, 4242); !strings.Contains(got, "or send that serve SIGHUP (kill -HUP 4242)") ||
		strings.Contains(got, "then run: switchboard reload") {
		t.Errorf("keyed's hint under serve --stdio: got %q, want a restart of its client or SIGHUP, not switchboard reload", got)
	}
	for name, vars := range map[string][]string{"remote": {"NOPE_HOST", "NOPE_TEAM"}, "tool": {"NOPE_PKG"}} {
		srv, _ := cfg.Server(name)
		if len(srv.CannotStart) != len(vars) {
			t.Errorf("%s: got %v, want %d unset variables", name, srv.CannotStart, len(vars))
			continue
		}
		for i, v := range vars {
			var uv *config.UnresolvedVariableError
			if p := srv.CannotStart[i]; !errors.As(p.Err, &uv) || uv.Variable != v || !strings.Contains(p.String(), "variable "+v+" is not set") {
				t.Errorf("%s problem %d: got %v, want %s not set", name, i, p, v)
			}
		}
		if got := config.StartHint(srv.CannotStart, 0); !strings.Contains(got, "restart serve") || strings.Contains(got, "then run: switchboard reload") {
			t.Errorf("%s's hint: got %q, want a restart of serve", name, got)
		}
		// serve --stdio is restarted by its client, in whose entry the
		// variable is set.
		if got := config.StartHint(srv.CannotStart, 4242); !strings.Contains(got, "restart the MCP client that runs switchboard serve --stdio, with the variable set") ||
			strings.Contains(got, "SIGHUP") {
			t.Errorf("%s's hint under serve --stdio: got %q, want a restart of the client with the variable set", name, got)
		}
	}

	// Stored (as config input does), the value is there at the next load.
	if err := store.SetSecret(config.InputSecretKey(file, "api-key"), "k-123"); err != nil {
		t.Fatal(err)
	}
	cfg, err = config.Load(file, opts)
	if err != nil {
		t.Fatal(err)
	}
	if keyed, _ := cfg.Server("keyed"); len(keyed.CannotStart) != 0 || keyed.Env["API_KEY"] != "k-123" {
		t.Errorf("keyed once stored: got CannotStart %v, API_KEY set %v; want it able to start with the value", keyed.CannotStart, keyed.Env["API_KEY"] == "k-123")
	}

	// config trust's preview is not stopped by an input with no value.
	if _, err := config.TrustPreview(file, config.Options{LookupEnv: func(string) (string, bool) { return "x", true }}); err != nil {
		t.Errorf("TrustPreview with the input unset: %v", err)
	}

	// Beside another problem of the same server, the file is refused, with
	// both problems.
	bad := repoFile(t, ".vscode/mcp.json", `{"servers": {
  "good": {"type": "stdio", "command": "npx"},
  "bad": {"type": "stdio", "command": "npx", "args": ["${NOPE_PKG}"], "env": {"A=B": "x"}}
}}`)
	if _, err := config.Load(bad, opts); err == nil || !strings.Contains(err.Error(), "variable NOPE_PKG is not set") || !strings.Contains(err.Error(), `invalid environment variable name "A=B"`) {
		t.Errorf("beside another problem: got %v, want the file refused with both", err)
	}

	// switchboard.yaml is written for Switchboard: an unset variable
	// refuses it.
	native := repoFile(t, "switchboard.yaml", "servers:\n  - name: ok\n    command: npx\n  - name: tool\n    command: npx\n    args: [\"${NOPE_PKG}\"]\n")
	var uv *config.UnresolvedVariableError
	if _, err := config.Load(native, opts); !errors.As(err, &uv) {
		t.Errorf("switchboard.yaml: got %v, want the file refused for NOPE_PKG", err)
	}
}

// TestPasswordInputIsSecretWhateverItsKey: a password input's value is
// secret in whichever env or header key it goes to, however the key is
// named: the server lists the key in Secrets, so that config show
// (Redacted) and the redactor (SecretValues) hide it. A value of an input
// that is not a password is shown as a key's value is.
func TestPasswordInputIsSecretWhateverItsKey(t *testing.T) {
	file := repoFile(t, ".vscode/mcp.json", `{
  "inputs": [
    {"type": "promptString", "id": "pw", "password": true},
    {"type": "pickString", "id": "region", "options": ["eu", "us"]}
  ],
  "servers": {
    "local": {"type": "stdio", "command": "npx", "env": {"MODE": "${input:pw}", "REGION": "${input:region}"}},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "team-${input:pw}"}}
  }
}`)
	store := mapSecrets{config.InputSecretKey(file, "pw"): "hunter2-inputs32", config.InputSecretKey(file, "region"): "eu"}
	cfg, err := config.Load(file, config.Options{LookupEnv: func(string) (string, bool) { return "", false }, Inputs: &config.InputResolver{Secrets: store}})
	if err != nil {
		t.Fatal(err)
	}
	local, _ := cfg.Server("local")
	remote, _ := cfg.Server("remote")
	if local.Env["MODE"] != "hunter2-inputs32" || !slices.Contains(local.Secrets, "MODE") || slices.Contains(local.Secrets, "REGION") {
		t.Errorf("local: got secrets %v, want MODE (a password input) and not REGION", local.Secrets)
	}
	if !slices.Contains(remote.Secrets, "X-Team") {
		t.Errorf("remote: got secrets %v, want X-Team", remote.Secrets)
	}
	out, err := config.MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "REGION: eu") {
		t.Errorf("redacted: got\n%s\nwant the password input hidden and the region shown", out)
	}
	if !slices.Contains(local.SecretValues(), "hunter2-inputs32") {
		t.Errorf("local's secret values: got %d, want the password input's", len(local.SecretValues()))
	}
}
