package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestOAuthKeys: a network server's oauth: and auth: keys resolve, the
// client secret is read from its variable and shown only by name (in
// config show, String, %#v and the redacted form), and the redactor
// knows it.
func TestOAuthKeys(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-client-value"
	src := `servers:
  - name: tools
    transport: http
    url: https://tools.example.com/mcp
    oauth:
      client_id: switchboard-laptop
      client_secret_env: TOOLS_CLIENT_SECRET
      scopes: [tools:read, tools:write]
      redirect_port: 33418
      issuer: https://auth.example.com
      token_auth_method: client_secret_post
    auth: per_user
  - name: ci
    transport: sse
    url: https://ci.example.com/mcp
    oauth: {grant: client_credentials, client_id: sb, client_secret_env: TOOLS_CLIENT_SECRET}
  - name: linear
    transport: http
    url: https://mcp.linear.app/mcp
`
	file := repoFile(t, "switchboard.yaml", src)
	lookup := func(k string) (string, bool) {
		if k == "TOOLS_CLIENT_SECRET" {
			return secret, true
		}
		return "", false
	}
	cfg, err := config.Load(file, config.Options{LookupEnv: lookup, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := cfg.Server("tools")
	want := &config.ServerOAuth{
		ClientID: "switchboard-laptop", ClientSecretEnv: "TOOLS_CLIENT_SECRET", ClientSecret: secret,
		Scopes: []string{"tools:read", "tools:write"}, RedirectPort: 33418,
		Issuer: "https://auth.example.com", TokenAuthMethod: "client_secret_post",
	}
	if diff := cmp.Diff(want, tools.OAuth); diff != "" {
		t.Errorf("tools.OAuth (-want +got):\n%s", diff)
	}
	if tools.Auth != config.AuthPerUser {
		t.Errorf("tools.Auth: got %q, want per_user", tools.Auth)
	}
	if ci, _ := cfg.Server("ci"); ci.OAuth == nil || ci.OAuth.Grant != "client_credentials" || ci.Auth != "" {
		t.Errorf("ci: got %v auth %q, want client_credentials, shared", ci.OAuth, ci.Auth)
	}
	if l, _ := cfg.Server("linear"); l.OAuth != nil {
		t.Errorf("linear: got oauth %v, want none", l.OAuth)
	}
	if !strings.Contains(strings.Join(tools.SecretValues(), "\n"), secret) {
		t.Error("SecretValues does not include the client secret: the redactor would not know it")
	}

	shown, err := config.MarshalResolved(cfg.Redacted())
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{
		"config show": string(shown),
		"server show": string(config.MarshalServer(tools)),
		"%v":          fmt.Sprintf("%v", tools),
		"%+v":         fmt.Sprintf("%+v", tools),
		"%#v":         fmt.Sprintf("%#v", tools),
	} {
		if strings.Contains(out, secret) {
			t.Errorf("%s shows the client secret:\n%s", name, out)
		}
	}
	for _, want := range []string{"client_secret_env: TOOLS_CLIENT_SECRET", "auth: per_user", "redirect_port: 33418", "grant: client_credentials"} {
		if !strings.Contains(string(shown), want) {
			t.Errorf("config show: want %q in\n%s", want, shown)
		}
	}
	// What config show wrote loads back to the same settings.
	again, err := config.Load(repoFile(t, "switchboard.yaml", string(shown)), config.Options{LookupEnv: lookup, StateDir: t.TempDir()})
	if err != nil {
		t.Fatalf("loading config show's output: %v\n%s", err, shown)
	}
	if s, _ := again.Server("tools"); !cmp.Equal(s.OAuth, tools.OAuth) || s.Auth != tools.Auth {
		t.Errorf("round trip: got %v %q, want %v %q", s.OAuth, s.Auth, tools.OAuth, tools.Auth)
	}
}

// TestOAuthKeysBad: each mistake in an oauth: block is reported where it
// was made, with what to do.
func TestOAuthKeysBad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, server, want string
	}{
		{"unset variable", "    oauth: {client_id: a, client_secret_env: NOPE_SECRET}\n", `servers.s.oauth.client_secret_env: variable NOPE_SECRET is not set; set NOPE_SECRET to the client secret`},
		{"secret without client", "    oauth: {client_secret_env: EMPTY_OK}\n", `servers.s.oauth.client_secret_env: a client secret without oauth.client_id; add client_id:`},
		{"grant", "    oauth: {grant: password}\n", `servers.s.oauth.grant: unknown grant "password"; use authorization_code or client_credentials`},
		{"client credentials alone", "    oauth: {grant: client_credentials}\n", `servers.s.oauth.grant: grant client_credentials needs client_id and client_secret_env`},
		{"port", "    oauth: {redirect_port: 70000}\n", `servers.s.oauth.redirect_port: 70000 is out of range; use 1 to 65535`},
		{"metadata url", "    oauth: {client_metadata_url: http://example.com/x}\n", `servers.s.oauth.client_metadata_url:`},
		{"auth", "    auth: everyone\n", `servers.s.auth: unknown auth "everyone"; use shared or per_user`},
		{"unknown key", "    oauth: {client: x}\n", `servers.s.oauth.client: unknown field`},
		{"method without secret", "    oauth: {client_id: a, token_auth_method: client_secret_basic}\n", `servers.s.oauth.token_auth_method: token_auth_method client_secret_basic needs client_secret_env`},
		{"stdio", "    oauth: {client_id: a}\n", `servers.s.oauth: oauth is not used by the stdio transport; remove it, or set transport: http`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			head := "servers:\n  - name: s\n    transport: http\n    url: https://x.example.com/mcp\n"
			if c.name == "stdio" {
				head = "servers:\n  - name: s\n    command: npx\n    args: [pkg]\n"
			}
			file := repoFile(t, "switchboard.yaml", head+c.server)
			lookup := func(k string) (string, bool) {
				if k == "EMPTY_OK" {
					return "x", true
				}
				return "", false
			}
			_, err := config.Load(file, config.Options{LookupEnv: lookup, StateDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
