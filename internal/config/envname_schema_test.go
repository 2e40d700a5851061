package config_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// TestEnvNameKeysBySchema: the keys that name an environment variable
// holding a secret (a gateway token's token_env, the introspection and
// console client_secret_env) have their form in the schema, where editors
// see it too; the message is the one the hand-written check gave, and the
// value, taken out, is reported once (not also as a missing secret).
func TestEnvNameKeysBySchema(t *testing.T) {
	t.Parallel()
	const head = "servers:\n  - name: a\n    command: npx\n" // lines 1-3
	checkProblems(t, head, config.TestOpts, []problemCase{
		{
			name: "token_env",
			src:  "gateway:\n  tokens:\n    - {user: alice, token_env: not-a-var}\n",
			want: []string{`sb.yaml:6:32: gateway.tokens[0].token_env: invalid environment variable name "not-a-var"; name the variable that holds the token (letters, digits and _), e.g. token_env: ALICE_TOKEN`},
		},
		{
			name: "introspection client_secret_env",
			src:  "gateway:\n  oauth:\n    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    introspection: {client_id: sb, client_secret_env: 1SECRET}\n",
			want: []string{`sb.yaml:8:55: gateway.oauth.introspection.client_secret_env: invalid environment variable name "1SECRET"; name the variable that holds the secret (letters, digits and _), e.g. SWITCHBOARD_OAUTH_SECRET`},
		},
		{
			name: "console client_secret_env",
			src:  "gateway:\n  oauth:\n    resource: https://mcp.example.com\n    issuer: https://login.example.com\n    console: {client_id: sb, client_secret_env: my secret}\n",
			want: []string{`sb.yaml:8:49: gateway.oauth.console.client_secret_env: invalid environment variable name "my secret"; name the variable that holds the secret (letters, digits and _), e.g. SWITCHBOARD_OAUTH_SECRET`},
		},
	})
}

// TestEnvNameKeysInSchema checks that the schema alone refuses a bad
// variable name in each of those keys (so an editor flags it).
func TestEnvNameKeysInSchema(t *testing.T) {
	t.Parallel()
	oauth := func(k string, v map[string]any) map[string]any {
		return map[string]any{"resource": "https://mcp.example.com", "issuer": "https://login.example.com", k: v}
	}
	for path, gw := range map[string]map[string]any{
		"gateway/tokens/0/token_env":                    {"tokens": []any{map[string]any{"user": "alice", "token_env": "not-a-var"}}},
		"gateway/oauth/introspection/client_secret_env": {"oauth": oauth("introspection", map[string]any{"client_secret_env": "not-a-var"})},
		"gateway/oauth/console/client_secret_env":       {"oauth": oauth("console", map[string]any{"client_secret_env": "not-a-var"})},
	} {
		vs, err := schema.Validate(map[string]any{"gateway": gw})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || strings.Join(vs[0].Path, "/") != path {
			t.Errorf("got %+v, want one violation at %s", vs, path)
		}
	}
}
