package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestHookCommandEnv: a command action's env (values expanded from
// ${VAR}) and inherit_env are read, hidden by config show where a name
// looks secret, offered for redaction, written back as read, and refused
// on other actions and with a bad name.
func TestHookCommandEnv(t *testing.T) {
	t.Parallel()
	const file = `hooks:
  - name: notify
    on: tool.failed
    actions:
      - type: command
        command: [./notify.sh]
        env: {CHANNEL: ops, SLACK_TOKEN: "${HOME}/token"}
        inherit_env: false
      - type: command
        command: [./all.sh]
        inherit_env: true
`
	cfg, err := config.Parse("switchboard.yaml", []byte(file), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	acts := cfg.Hooks.List[0].Actions
	if got := acts[0].Env; got["CHANNEL"] != "ops" || got["SLACK_TOKEN"] != "/home/u/token" || acts[0].InheritEnv != nil {
		t.Errorf("first action: env %v, inherit_env %v; want CHANNEL=ops, SLACK_TOKEN expanded, inherit_env unset", got, acts[0].InheritEnv)
	}
	if acts[1].InheritEnv == nil || !*acts[1].InheritEnv {
		t.Errorf("second action: inherit_env %v, want true", acts[1].InheritEnv)
	}
	if got := acts[0].SecretValues(); !slices.Equal(got, []string{"/home/u/token"}) {
		t.Errorf("SecretValues() = %q, want the token's value", got)
	}
	if got := cfg.Redacted().Hooks.List[0].Actions[0].Env; got["SLACK_TOKEN"] != config.Redaction || got["CHANNEL"] != "ops" {
		t.Errorf("redacted env = %v, want SLACK_TOKEN hidden", got)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("switchboard.yaml", out, config.TestOpts)
	if err != nil {
		t.Fatalf("reading what config show wrote:\n%s\n%v", out, err)
	}
	if got := again.Hooks.List[0].Actions; got[0].Env["SLACK_TOKEN"] != "/home/u/token" || got[1].InheritEnv == nil || !*got[1].InheritEnv {
		t.Errorf("after config show: %+v\n%s", got, out)
	}

	for _, tt := range []struct{ name, action, want string }{
		{"on an mcp action", "{type: http, url: \"http://127.0.0.1:9/x\", env: {A: b}}", `env`},
		{"a bad name", "{type: command, command: [./n.sh], env: {\"A=B\": c}}", `invalid environment variable name "A=B"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("switchboard.yaml", []byte("hooks:\n  - {name: n, on: x.y, actions: ["+tt.action+"]}\n"), config.TestOpts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error about %s", err, tt.want)
			}
		})
	}
}
