package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// introSecret is an introspection client secret that must never be shown.
const introSecret = "intro-s3cret-value-77"

// consoleSecret is the console client's secret, never shown either.
const consoleSecret = "console-s3cret-value-88"

var oauthOpts = config.Options{LookupEnv: func(k string) (string, bool) {
	switch k {
	case "INTRO_SECRET":
		return introSecret, true
	case "CONSOLE_SECRET":
		return consoleSecret, true
	case "EMPTY":
		return "", true
	case "ISSUER_HOST":
		return "login.example.com", true
	}
	return "", false
}}

// fullOAuth uses every key of gateway.oauth, on a listener beyond
// loopback with no static tokens: OAuth alone guards it.
const fullOAuth = gatewayServers + `gateway:
  listen: 0.0.0.0:8080
  views:
    - {name: eng, servers: [github]}
    - {name: ops, servers: [notes]}
  oauth:
    resource: https://mcp.example.com
    issuer: https://${ISSUER_HOST}/realms/team
    audiences: [api://switchboard]
    jwks_url: https://login.example.com/realms/team/certs
    algorithms: [RS256, ES256]
    introspection:
      url: https://login.example.com/realms/team/introspect
      client_id: switchboard
      client_secret_env: INTRO_SECRET
      auth_method: client_secret_post
    user_claim: preferred_username
    groups_claim: realm_access.roles
    views: [default]
    group_views:
      engineers: [eng]
      admins: ["*"]
    scopes: ["mcp:tools"]
    view_scopes: {eng: ["eng:write"]}
    leeway: 10s
    cache: {size: 500, ttl: 1m, negative_ttl: 5s}
    keys: {refresh: 30m, min_interval: 15s}
    resource_name: Acme MCP gateway
    resource_documentation: https://wiki.example.com/mcp
    console:
      client_id: switchboard-console
      client_secret_env: CONSOLE_SECRET
      scopes: [openid, "mcp:tools"]
      groups: [admins]
`

func TestGatewayOAuthFull(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(fullOAuth), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := &config.OAuth{
		Resource:   "https://mcp.example.com",
		Issuer:     "https://login.example.com/realms/team",
		Audiences:  []string{"api://switchboard"},
		JWKSURL:    "https://login.example.com/realms/team/certs",
		Algorithms: []string{"RS256", "ES256"},
		Introspection: &config.OAuthIntrospection{
			URL: "https://login.example.com/realms/team/introspect", ClientID: "switchboard",
			ClientSecretEnv: "INTRO_SECRET", ClientSecret: introSecret, AuthMethod: "client_secret_post",
		},
		UserClaim: "preferred_username", GroupsClaim: "realm_access.roles",
		Views:      []string{"default"},
		GroupViews: map[string][]string{"engineers": {"eng"}, "admins": {"*"}},
		Scopes:     []string{"mcp:tools"},
		ViewScopes: map[string][]string{"eng": {"eng:write"}},
		Leeway:     10 * time.Second, CacheSize: 500, CacheTTL: time.Minute, NegativeTTL: 5 * time.Second,
		KeysRefresh: 30 * time.Minute, KeysMinInterval: 15 * time.Second,
		ResourceName: "Acme MCP gateway", ResourceDocumentation: "https://wiki.example.com/mcp",
		Console: &config.OAuthConsole{ClientID: "switchboard-console", ClientSecretEnv: "CONSOLE_SECRET", ClientSecret: consoleSecret,
			Scopes: []string{"openid", "mcp:tools"}, Groups: []string{"admins"}},
		Pos: config.Pos{File: "sb.yaml", Line: 11, Col: 3},
	}
	if diff := cmp.Diff(want, cfg.Gateway.OAuth); diff != "" {
		t.Errorf("oauth mismatch (-want +got):\n%s", diff)
	}
	if !cfg.Gateway.AuthRequired() {
		t.Error("AuthRequired() = false with gateway.oauth, want true")
	}
	if err := cfg.Gateway.CheckExposure(); err != nil {
		t.Errorf("CheckExposure on 0.0.0.0 with OAuth: %v, want nil", err)
	}
	opts := cfg.Gateway.OAuth.Options()
	if err := opts.Check(); err != nil {
		t.Errorf("Options().Check(): %v", err)
	}
	if got := opts.Introspection.ClientSecret; got != introSecret {
		t.Errorf("Options().Introspection.ClientSecret = %q, want the variable's value", got)
	}
}

// TestGatewayOAuthDefaults checks the defaults a minimal block takes.
func TestGatewayOAuthDefaults(t *testing.T) {
	src := gatewayServers + "gateway:\n  oauth: {resource: \"http://127.0.0.1:7777\", issuer: \"http://localhost:9000\"}\n"
	cfg, err := config.Parse("sb.yaml", []byte(src), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Gateway.OAuth
	if o == nil {
		t.Fatal("OAuth is nil")
	}
	got := fmt.Sprintf("%s %s %s %d %s %s %s %s %q", o.UserClaim, o.Leeway, o.CacheTTL, o.CacheSize, o.NegativeTTL, o.KeysRefresh, o.KeysMinInterval, o.ResourceName, o.Algorithms)
	if want := `sub 30s 2m0s 10000 10s 1h0m0s 30s Switchboard gateway []`; got != want {
		t.Errorf("defaults: got %s, want %s", got, want)
	}
}

// TestGatewayOAuthShow checks that config show writes the block so that
// it reads back the same, with the client secret as its variable's name.
func TestGatewayOAuthShow(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(fullOAuth), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*config.Config{cfg, cfg.Redacted()} {
		out, err := config.MarshalResolved(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"  oauth:\n    resource: \"https://mcp.example.com\"\n", "client_secret_env: INTRO_SECRET\n", "groups_claim: realm_access.roles\n", "client_secret_env: CONSOLE_SECRET\n"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), introSecret) || strings.Contains(string(out), consoleSecret) {
			t.Errorf("output holds a client secret:\n%s", out)
		}
		again, err := config.Parse("sb.yaml", out, oauthOpts)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		if !cfg.Gateway.OAuth.Same(again.Gateway.OAuth) {
			t.Errorf("read back differs:\n%s", cmp.Diff(cfg.Gateway.OAuth, again.Gateway.OAuth))
		}
	}
	if got := cfg.Gateway.OAuth.Introspection.ClientSecret; got != introSecret {
		t.Errorf("Redacted changed the original: secret %q", got)
	}
	if got := cfg.Redacted().Gateway.OAuth.Introspection.ClientSecret; got != "" {
		t.Errorf("Redacted kept the secret %q", got)
	}
	if got := cfg.Redacted().Gateway.OAuth.Console.ClientSecret; got != "" {
		t.Errorf("Redacted kept the console's secret %q", got)
	}
	js, _ := json.Marshal(cfg)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("gw", "gateway", cfg.Gateway)
	for what, s := range map[string]string{"json": string(js), "slog": logs.String(), "%+v": fmt.Sprintf("%+v", cfg.Gateway.OAuth.Introspection), "%v": fmt.Sprintf("%v", *cfg.Gateway.OAuth.Introspection),
		"console %+v": fmt.Sprintf("%+v", cfg.Gateway.OAuth.Console)} {
		if strings.Contains(s, introSecret) || strings.Contains(s, consoleSecret) {
			t.Errorf("%s holds the client secret: %s", what, s)
		}
	}
}

// TestGatewayOAuthSame checks that a reload can tell an unchanged block.
func TestGatewayOAuthSame(t *testing.T) {
	a, err := config.Parse("sb.yaml", []byte(fullOAuth), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := config.Parse("other.yaml", []byte("# moved\n"+fullOAuth), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Gateway.OAuth.Same(b.Gateway.OAuth) {
		t.Error("the same block at another position is not Same")
	}
	c, err := config.Parse("sb.yaml", []byte(strings.Replace(fullOAuth, "leeway: 10s", "leeway: 11s", 1)), oauthOpts)
	if err != nil {
		t.Fatal(err)
	}
	if a.Gateway.OAuth.Same(c.Gateway.OAuth) {
		t.Error("blocks with different leeways are Same")
	}
	var none *config.OAuth
	if !none.Same(nil) || none.Same(a.Gateway.OAuth) {
		t.Error("nil blocks: Same is wrong")
	}
}

func TestGatewayOAuthProblems(t *testing.T) {
	const head = "gateway:\n  views: [{name: eng}]\n  oauth:\n" // lines 6-8
	tests := []struct {
		name string
		src  string // after head (line 9 is the first)
		want []string
	}{
		{
			name: "required",
			src:  "    scopes: [a]\n",
			want: []string{
				`sb.yaml:8:3: gateway.oauth.resource: resource is required; add resource: with the URL clients reach the gateway at, e.g. resource: https://mcp.example.com`,
				`sb.yaml:8:3: gateway.oauth.issuer: issuer is required; add issuer: with the authorization server's issuer URL, e.g. issuer: https://login.example.com/realms/team`,
			},
		},
		{
			name: "http beyond loopback",
			src:  "    resource: http://mcp.example.com\n    issuer: https://login.example.com\n",
			want: []string{`sb.yaml:9:15: gateway.oauth.resource: "http://mcp.example.com" uses http on a non-loopback host; OAuth needs https (http only on 127.0.0.1, ::1 or localhost); give an https URL (http only on 127.0.0.1, ::1 or localhost)`},
		},
		{
			name: "unknown views",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    groups_claim: groups\n    views: [engg]\n    group_views: {admins: [\"*\", nope]}\n    view_scopes: {opz: [x]}\n",
			want: []string{
				`sb.yaml:12:13: gateway.oauth.views[0]: unknown view "engg"; did you mean "eng"?`,
				`sb.yaml:13:33: gateway.oauth.group_views.admins[1]: unknown view "nope"; use the name of a view under gateway.views or "default", or "*" for every view`,
				`sb.yaml:14:19: gateway.oauth.view_scopes: unknown view "opz"; use the name of a view under gateway.views or "default"`,
			},
		},
		{
			name: "alg none and HMAC",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    algorithms: [none, HS256]\n",
			want: []string{
				`sb.yaml:11:18: gateway.oauth.algorithms[0]: unknown algorithm "none"; use one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA`,
				`sb.yaml:11:24: gateway.oauth.algorithms[1]: unknown algorithm "HS256"; did you mean "RS256"?`,
			},
		},
		{
			name: "group views without a groups claim",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    group_views: {admins: [eng]}\n",
			want: []string{`sb.yaml:11:19: gateway.oauth.group_views: views are granted to groups, but no groups claim is set: name the claim that holds the groups (e.g. groups, roles, realm_access.roles); set groups_claim together with views or group_views, or neither (every signed-in user then may use every view)`},
		},
		{
			name: "secret variable",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    introspection: {client_id: sb, client_secret_env: NOPE}\n",
			want: []string{`sb.yaml:11:55: gateway.oauth.introspection.client_secret_env: variable NOPE is not set; set NOPE to the gateway's client secret at the authorization server in the environment switchboard runs in`},
		},
		{
			name: "secret without client id",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    introspection: {client_secret_env: INTRO_SECRET}\n",
			want: []string{`sb.yaml:11:21: gateway.oauth.introspection: give both the client id and the client secret, or neither; set both client_id and client_secret_env, or neither`},
		},
		{
			name: "console secret without client id, groups without a groups claim",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    console:\n      client_secret_env: CONSOLE_SECRET\n      groups: [admins]\n",
			want: []string{
				`sb.yaml:12:26: gateway.oauth.console.client_secret_env: a client secret without a client id; add console.client_id: the id the authorization server gave the client whose secret this is, or remove client_secret_env`,
				`sb.yaml:13:7: gateway.oauth.console.groups: console groups without groups_claim; set groups_claim to the claim that holds the user's groups, or remove console.groups`,
			},
		},
		{
			name: "leeway and cache",
			src:  "    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    leeway: 1h\n    cache: {size: 0}\n",
			want: []string{
				`sb.yaml:11:13: gateway.oauth.leeway: 1h is out of range; use a value from 0s to 5m (a leeway tolerates clock differences, it does not extend tokens)`,
				`sb.yaml:12:19: gateway.oauth.cache.size: 0 is out of range; use 1 to 10000000 (the default is 10000)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("sb.yaml", []byte(gatewayServers+head+tt.src), oauthOpts)
			if err == nil {
				t.Fatalf("Parse succeeded, want %d problems", len(tt.want))
			}
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got error %T, want *ValidationError", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), introSecret) {
				t.Errorf("a problem shows the secret: %v", err)
			}
		})
	}
}

// TestTrustedUserOAuth checks that with OAuth configured a client's
// _meta.user_id is never trusted, as with static tokens.
func TestTrustedUserOAuth(t *testing.T) {
	g := config.Gateway{DefaultUser: "ada", OAuth: &config.OAuth{Resource: "https://mcp.example.com", Issuer: "https://login.example.com"}}
	if got := g.TrustedUser("grace", false); got != "" {
		t.Errorf("remote caller's claim with OAuth: got %q, want \"\"", got)
	}
	if got := g.TrustedUser("grace", true); got != "ada" {
		t.Errorf("stdio caller with OAuth: got %q, want the default user", got)
	}
}

// TestCheckExposureOAuth checks that OAuth satisfies the exposure rule.
func TestCheckExposureOAuth(t *testing.T) {
	g := config.DefaultGateway()
	g.Listen = "0.0.0.0:7777"
	if g.CheckExposure() == nil {
		t.Fatal("no error without tokens or OAuth")
	}
	g.OAuth = &config.OAuth{Resource: "https://mcp.example.com", Issuer: "https://login.example.com"}
	if err := g.CheckExposure(); err != nil {
		t.Errorf("with OAuth: %v, want nil", err)
	}
}
