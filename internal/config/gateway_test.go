package config_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// aliceSecret is a token value that must never be shown.
const aliceSecret = "alice-s3cret-value-42"

// gatewayEnv is the environment the gateway tests see.
var gatewayEnv = map[string]string{
	"ALICE_TOKEN": aliceSecret,
	"SAME_TOKEN":  aliceSecret,
	"EMPTY_TOKEN": "",
	"TEAM":        "platform",
	"API_TOKEN":   "tok_secret",
}

var gatewayOpts = config.Options{LookupEnv: func(k string) (string, bool) {
	v, ok := gatewayEnv[k]
	return v, ok
}}

// gatewayServers starts every gateway test file: two servers, lines 1-5.
const gatewayServers = `servers:
  - {name: github, command: npx}
  - name: notes
    transport: http
    url: https://notes.example.com/mcp
`

// fullGateway is a valid file using every key of the block.
const fullGateway = `servers:
  - name: github
    command: npx
  - name: notes
    transport: http
    url: https://notes.example.com/mcp
    headers:
      X-User: ${identity.user}
      X-Session: "s-${identity.session}"
      Authorization: Bearer ${API_TOKEN}
gateway:
  listen: 0.0.0.0:8080
  stateless: true
  allowed_origins: [https://App.example.com, "http://localhost:3000", "*"]
  allowed_hosts: [mcp.example.com, "MCP.example.com:8443", "[::1]:7777"]
  shutdown_timeout: 30s
  session_timeout: 0s
  handshake_timeout: 2s
  max_sessions: 50
  max_sessions_per_user: 0
  max_request_bytes: 16MiB
  instructions: "Ask the ${TEAM} team; costs $$5"
  views:
    - name: github
      servers: [github]
      include: ["create_*", "get_*"]
      exclude: ["*delete*"]
      prefix: never
      rename: {create_issue: new_issue}
      descriptions: {create_issue: "Open an issue"}
    - name: default
      exclude: ["*admin*"]
  tokens:
    - name: alice-laptop
      user: alice
      token_env: ALICE_TOKEN
      views: [github]
    - user: bob
      token_sha256: 9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99
      views: ["*"]
  default_user: "${TEAM}-bot"
`

func TestGatewayFull(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(fullGateway), gatewayOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Gateway{
		Listen:          "0.0.0.0:8080",
		Stateless:       true,
		AllowedOrigins:  []string{"https://app.example.com", "http://localhost:3000", "*"},
		AllowedHosts:    []string{"mcp.example.com", "mcp.example.com:8443", "[::1]:7777"},
		ShutdownTimeout: 30 * time.Second,
		MaxRequestBytes: 16 << 20,
		SessionTimeout:  0,

		HandshakeTimeout:   2 * time.Second,
		InputTimeout:       config.DefaultInputTimeout,
		WriteTimeout:       10 * time.Second,
		MaxSessions:        50,
		MaxSessionsPerUser: 0,
		MaxConnections:     10000,
		MaxBatch:           100,
		MaxRequestsPerUser: 1000,
		DefaultUser:        "platform-bot",
		Instructions:       "Ask the platform team; costs $5",
		Views: []config.View{
			{
				Name:         "github",
				Servers:      []string{"github"},
				Include:      []string{"create_*", "get_*"},
				Exclude:      []string{"*delete*"},
				Prefix:       config.PrefixNever,
				Rename:       map[string]string{"create_issue": "new_issue"},
				Descriptions: map[string]string{"create_issue": "Open an issue"},
				Pos:          config.Pos{File: "sb.yaml", Line: 24, Col: 7},
			},
			{Name: "default", Exclude: []string{"*admin*"}, Prefix: config.PrefixAlways, Pos: config.Pos{File: "sb.yaml", Line: 31, Col: 7}},
		},
		Tokens: []config.Token{
			{Name: "alice-laptop", User: "alice", Secret: aliceSecret, TokenEnv: "ALICE_TOKEN", Views: []string{"github"}, Pos: config.Pos{File: "sb.yaml", Line: 34, Col: 7}},
			{Name: "tokens[1]", User: "bob", SHA256: "9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99", Views: []string{"*"}, Pos: config.Pos{File: "sb.yaml", Line: 38, Col: 7}},
		},
		Pos: config.Pos{File: "sb.yaml", Line: 11, Col: 1},
	}
	if diff := cmp.Diff(want, cfg.Gateway); diff != "" {
		t.Errorf("gateway mismatch (-want +got):\n%s", diff)
	}
	wantHeaders := map[string]string{"X-User": config.IdentityUser, "X-Session": "s-" + config.IdentitySession, "Authorization": "Bearer tok_secret"}
	notes, _ := cfg.Server("notes")
	if diff := cmp.Diff(wantHeaders, notes.Headers); diff != "" {
		t.Errorf("headers mismatch (-want +got):\n%s", diff)
	}
}

// TestGatewayDefaults checks that an absent or empty block, or one giving
// only some keys, takes the defaults, and that config show leaves a block
// of defaults out.
func TestGatewayDefaults(t *testing.T) {
	for _, src := range []string{gatewayServers, gatewayServers + "gateway:\n", gatewayServers + "gateway: {listen: 127.0.0.1:7777}\n"} {
		cfg, err := config.Parse("sb.yaml", []byte(src), gatewayOpts)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		g := cfg.Gateway
		g.Pos = config.Pos{}
		if diff := cmp.Diff(config.DefaultGateway(), g); diff != "" {
			t.Errorf("%q: gateway mismatch (-want +got):\n%s", src, diff)
		}
		out, err := config.MarshalResolved(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte("gateway:")) {
			t.Errorf("%q: got a gateway block in\n%s\nwant none for the defaults", src, out)
		}
	}
	cfg, err := config.Parse("sb.yaml", []byte(gatewayServers+"gateway:\n  session_timeout: 5m\n  listen: localhost:0\n  input_timeout: 90s\n"), gatewayOpts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Gateway.InputTimeout, 90*time.Second; got != want {
		t.Errorf("got input_timeout %v, want %v", got, want)
	}
	if got, want := cfg.Gateway.SessionTimeout, 5*time.Minute; got != want {
		t.Errorf("got session_timeout %v, want %v", got, want)
	}
	if got, want := cfg.Gateway.ShutdownTimeout, config.DefaultShutdownTimeout; got != want {
		t.Errorf("got shutdown_timeout %v, want %v", got, want)
	}
	if got, want := cfg.Gateway.Listen, "localhost:0"; got != want {
		t.Errorf("got listen %q, want %q", got, want)
	}
}

// TestGatewayMarshal checks that config show prints the block, without
// secrets, and that what it prints reads back to the same gateway.
func TestGatewayMarshal(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(fullGateway), gatewayOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*config.Config{cfg, cfg.Redacted()} {
		out, err := config.MarshalResolved(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"gateway:\n  listen: \"0.0.0.0:8080\"\n  stateless: true\n",
			"      token_env: ALICE_TOKEN\n",
			"    - user: bob\n      token_sha256: \"9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99\"\n",
			`instructions: "Ask the platform team; costs $$5"`,
			"  default_user: platform-bot\n",
			`X-User: "${identity.user}"`,
			`X-Session: "s-${identity.session}"`,
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), aliceSecret) {
			t.Errorf("output holds the token secret:\n%s", out)
		}
		again, err := config.Parse("sb.yaml", out, gatewayOpts)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, out)
		}
		noPos := cmp.Options{
			cmp.Transformer("gwnopos", func(g config.Gateway) config.Gateway {
				g.Pos = config.Pos{}
				for i := range g.Views {
					g.Views[i].Pos = config.Pos{}
				}
				for i := range g.Tokens {
					g.Tokens[i].Pos = config.Pos{}
				}
				return g
			}),
		}
		// Parse reads the secret back from the environment.
		if diff := cmp.Diff(cfg.Gateway, again.Gateway, noPos); diff != "" {
			t.Errorf("gateway read back differs (-want +got):\n%s\noutput:\n%s", diff, out)
		}
		if c != cfg {
			continue // Redacted hides header values too
		}
		if diff := cmp.Diff(cfg.Servers, again.Servers, config.IgnorePos); diff != "" {
			t.Errorf("servers read back differ (-want +got):\n%s\noutput:\n%s", diff, out)
		}
	}
}

// TestGatewaySecretNeverShown checks every way a configuration is shown.
func TestGatewaySecretNeverShown(t *testing.T) {
	cfg, err := config.Parse("sb.yaml", []byte(fullGateway), gatewayOpts)
	if err != nil {
		t.Fatal(err)
	}
	red := cfg.Redacted()
	if got := red.Gateway.Tokens[0].Secret; got != "" {
		t.Errorf("got redacted secret %q, want \"\"", got)
	}
	if got, want := red.Gateway.Tokens[0].TokenEnv, "ALICE_TOKEN"; got != want {
		t.Errorf("got redacted token_env %q, want %q", got, want)
	}
	if got := cfg.Gateway.Tokens[0].Secret; got != aliceSecret {
		t.Errorf("Redacted changed the original: got secret %q, want %q", got, aliceSecret)
	}
	if red.Gateway.Tokens[0].Matches("") || red.Gateway.Tokens[0].Matches(config.Redaction) {
		t.Error("a redacted token matches an empty or redacted value, want no match")
	}
	js, err := json.Marshal(red)
	if err != nil {
		t.Fatal(err)
	}
	rawJS, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rawJS), `"TokenEnv":"ALICE_TOKEN"`) {
		t.Errorf("got JSON %s, want the token's TokenEnv in it", rawJS)
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("token", "token", cfg.Gateway.Tokens[0], "gateway", cfg.Gateway)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("token", "token", cfg.Gateway.Tokens[0], "gateway", cfg.Gateway)
	shown := map[string]string{
		"json of Redacted":  string(js),
		"json of Config":    string(rawJS),
		"%+v of Redacted":   fmt.Sprintf("%+v", red),
		"%v of the token":   fmt.Sprintf("%v", cfg.Gateway.Tokens[0]),
		"%v of the gateway": fmt.Sprintf("%v", cfg.Gateway),
		"slog of the token": logs.String(),
	}
	// Problems about a token never repeat its value.
	for _, src := range []string{
		gatewayServers + "gateway:\n  tokens:\n    - {user: a, token_env: ALICE_TOKEN}\n    - {user: b, token_env: SAME_TOKEN}\n",
		gatewayServers + "gateway:\n  tokens:\n    - {user: a, token_env: ALICE_TOKEN, token_sha256: x}\n",
		gatewayServers + "gateway:\n  tokens:\n    - {token_env: ALICE_TOKEN, views: [nope]}\n",
	} {
		_, err := config.Parse("sb.yaml", []byte(src), gatewayOpts)
		if err == nil {
			t.Fatalf("%q parsed, want an error", src)
		}
		shown["error for "+src] = err.Error()
	}
	for what, s := range shown {
		if strings.Contains(s, aliceSecret) {
			t.Errorf("%s holds the token secret: %s", what, s)
		}
	}
	if !strings.Contains(logs.String(), "alice-laptop") {
		t.Errorf("got log %q, want the token's name in it", logs.String())
	}
}

// TestGatewayProblems checks each rule of the block: every problem with
// its position, field path, message and fix.
func TestGatewayProblems(t *testing.T) {
	tests := []problemCase{
		{
			name: "not a mapping",
			src:  "gateway: [a]\n",
			want: []string{"sb.yaml:6:10: gateway: must be a mapping, not a list"},
		},
		{
			name: "unknown keys",
			src:  "gateway:\n  listn: 127.0.0.1:1\n  colour: red\n",
			want: []string{
				`sb.yaml:7:3: gateway.listn: unknown field "listn"; did you mean "listen"?`,
				`sb.yaml:8:3: gateway.colour: unknown field "colour"; remove it; docs/configuration.md lists the fields`,
			},
		},
		{
			name: "listen",
			src:  "gateway:\n  listen: 7777\n",
			want: []string{`sb.yaml:7:11: gateway.listen: must be a string, not a number; write it as host:port, e.g. 127.0.0.1:7777 (or [::1]:7777)`},
		},
		{
			name: "listen port",
			src:  "gateway:\n  listen: 127.0.0.1:http\n",
			want: []string{`sb.yaml:7:11: gateway.listen: invalid port "http" in listen address; use a port number from 0 (any free port) to 65535`},
		},
		{
			name: "listen variable",
			src:  "gateway:\n  listen: ${NOPE}\n",
			want: []string{`sb.yaml:7:11: gateway.listen: variable NOPE is not set; set it in the environment, or give a default: ${NOPE:-value}`},
		},
		{
			name: "default_user",
			src:  "gateway:\n  default_user: \"  \"\n",
			want: []string{`sb.yaml:7:17: gateway.default_user: is empty; give the identity trusted local callers act as, e.g. default_user: alice, or remove the key for the OS user`},
		},
		{
			name: "default_user control character",
			src:  "gateway:\n  default_user: \"al\\nice\"\n",
			want: []string{`sb.yaml:7:17: gateway.default_user: "al\nice" holds a control character; use a plain user id: it is sent to servers in _meta and in ${identity.user} headers`},
		},
		{
			name: "exposed without tokens",
			src:  "gateway:\n  listen: 0.0.0.0:7777\n",
			want: []string{`sb.yaml:7:11: gateway.listen: listening on 0.0.0.0:7777 requires tokens or OAuth: anyone who can reach it could call every tool; add gateway.tokens or gateway.oauth (see docs/configuration.md#gateway and docs/auth-gateway.md), or listen on 127.0.0.1`},
		},
		{
			name: "exposed with an empty token list",
			src:  "gateway:\n  listen: :7777\n  tokens: []\n",
			want: []string{`sb.yaml:7:11: gateway.listen: listening on :7777 requires tokens or OAuth: anyone who can reach it could call every tool; add gateway.tokens or gateway.oauth (see docs/configuration.md#gateway and docs/auth-gateway.md), or listen on 127.0.0.1`},
		},
		{
			name: "scalars",
			src:  "gateway:\n  stateless: yes please\n  shutdown_timeout: 11m\n  session_timeout: -1s\n  instructions: [a]\n  max_request_bytes: 1KiB\n  max_sessions: -1\n  handshake_timeout: 11m\n  input_timeout: 0s\n",
			want: []string{
				"sb.yaml:7:14: gateway.stateless: must be true or false, not a string; write stateless: true or stateless: false (true and false are written bare: yes, on and quoted words are strings)",
				"sb.yaml:8:21: gateway.shutdown_timeout: 11m is out of range; use a value from 0s (cancel at once) to 10m (the default is 10s)",
				"sb.yaml:9:20: gateway.session_timeout: must not be negative, not -1s",
				"sb.yaml:10:17: gateway.instructions: must be a string, not a list",
				"sb.yaml:11:22: gateway.max_request_bytes: 1KiB is out of range; use a size from 64KiB to 256MiB (the default is 4MiB)",
				"sb.yaml:12:17: gateway.max_sessions: must not be negative, not -1; use 0 (no limit) or a number of sessions such as 10000",
				"sb.yaml:13:22: gateway.handshake_timeout: 11m is out of range; use a value from 0s (no separate deadline) to 10m (the default is 10s)",
				"sb.yaml:14:18: gateway.input_timeout: 0s is out of range; use a value from 1s to 1h (the default is 5m)",
			},
		},
		{
			name: "origins",
			src:  "gateway:\n  allowed_origins:\n    - https://app.example.com/\n    - ftp://files.example.com\n    - app.example.com\n    - https://app.example.com:99999\n    - [x]\n",
			want: []string{
				`sb.yaml:8:7: gateway.allowed_origins[0]: origin "https://app.example.com/" must not have a path, query or credentials; write https://app.example.com`,
				`sb.yaml:9:7: gateway.allowed_origins[1]: origin "ftp://files.example.com" must use http or https; write it as scheme://host[:port], e.g. https://app.example.com, or "*" for any origin`,
				`sb.yaml:10:7: gateway.allowed_origins[2]: invalid origin "app.example.com"; write it as scheme://host[:port], e.g. https://app.example.com, or "*" for any origin`,
				`sb.yaml:11:7: gateway.allowed_origins[3]: invalid port in origin "https://app.example.com:99999"; write it as scheme://host[:port], e.g. https://app.example.com, or "*" for any origin`,
				"sb.yaml:12:7: gateway.allowed_origins[4]: must be a string, not a list",
			},
		},
		{
			name: "hosts",
			src:  "gateway:\n  allowed_hosts: [https://mcp.example.com, mcp.example.com/mcp, \"mcp.example.com:0\", \"::1\"]\n",
			want: []string{
				`sb.yaml:7:19: gateway.allowed_hosts[0]: host "https://mcp.example.com" must not have a scheme; write a host name or host:port, e.g. mcp.example.com or mcp.example.com:443, with no scheme or path`,
				`sb.yaml:7:44: gateway.allowed_hosts[1]: invalid host "mcp.example.com/mcp"; write a host name or host:port, e.g. mcp.example.com or mcp.example.com:443, with no scheme or path`,
				`sb.yaml:7:65: gateway.allowed_hosts[2]: invalid port in host "mcp.example.com:0"; write a host name or host:port, e.g. mcp.example.com or mcp.example.com:443, with no scheme or path`,
				`sb.yaml:7:86: gateway.allowed_hosts[3]: invalid host "::1"; write a host name or host:port, e.g. mcp.example.com or mcp.example.com:443, with no scheme or path (IPv6 addresses in brackets: [::1])`,
			},
		},
		{
			name: "views shape",
			src:  "gateway:\n  views: {github: {}}\n",
			want: []string{"sb.yaml:7:11: gateway.views: must be a list of views, not a mapping"},
		},
		{
			name: "view names",
			src:  "gateway:\n  views:\n    - servers: [github]\n    - name: GitHub\n    - name: gh\n    - name: gh\n    - just-a-name\n",
			want: []string{
				`sb.yaml:8:7: gateway.views[0].name: name is required; add name: with a lower-case name, e.g. name: github (the view is served at /mcp/github; "default" replaces /mcp)`,
				`sb.yaml:9:13: gateway.views[1].name: invalid view name "GitHub"; use 1 to 64 lower-case letters, digits, _ and -, starting with a letter or digit`,
				`sb.yaml:11:13: gateway.views[3].name: duplicate view name "gh" (first defined at sb.yaml:10:13); give each view a unique name`,
				"sb.yaml:12:7: gateway.views[4]: must be a mapping, not a string",
			},
		},
		{
			name: "view servers",
			src:  "gateway:\n  views:\n    - name: a\n      servers: [githbu, notes, notes, zzz]\n",
			want: []string{
				`sb.yaml:9:17: gateway.views[0].servers[0]: unknown server "githbu"; did you mean "github"?`,
				`sb.yaml:9:32: gateway.views[0].servers[2]: server "notes" is listed twice; remove one`,
				`sb.yaml:9:39: gateway.views[0].servers[3]: unknown server "zzz"; use the name of a server under servers: (github, notes)`,
			},
		},
		{
			name: "view globs",
			src:  "gateway:\n  views:\n    - name: a\n      include: [\"[a-\", \"\"]\n      exclude: \"*\"\n",
			want: []string{
				`sb.yaml:9:17: gateway.views[0].include[0]: invalid pattern "[a-"; use * for any run of characters, ? for one and [a-z] for a class, e.g. "github__*"`,
				`sb.yaml:9:24: gateway.views[0].include[1]: is empty; remove it, or write a pattern such as "github__*"`,
				"sb.yaml:10:16: gateway.views[0].exclude: must be a list of strings, not a string",
			},
		},
		{
			// Under prefix: always a view's tools are server__tool: a glob on
			// the server's own names matches nothing (an exclude then keeps
			// nothing out). prefix: never, "*", a server's prefix or a glob
			// that may reach one are fine.
			name: "view globs that match no tool",
			src: "gateway:\n  views:\n    - name: a\n      servers: [notes]\n      include: [\"read_*\", \"notes__*\", \"*search*\", \"no?es__x\", \"n*\"]\n" +
				"    - name: b\n      exclude: [\"delete_*\", \"github__delete_*\"]\n" +
				"    - name: c\n      servers: [github]\n      prefix: never\n      include: [\"read_*\"]\n",
			want: []string{
				`sb.yaml:10:17: gateway.views[0].include[0]: "read_*" matches no tool of this view: with prefix: always its tools are named server__tool; write "notes__read_*", or use prefix: never in a view of one server`,
				`sb.yaml:12:17: gateway.views[1].exclude[0]: "delete_*" matches no tool of this view: with prefix: always its tools are named server__tool; write "*__delete_*", or use prefix: never in a view of one server`,
			},
		},
		{
			// The same for the names rename and descriptions key on.
			name: "view renames of no tool",
			src:  "gateway:\n  views:\n    - name: a\n      servers: [notes]\n      rename: {create_note: new_note, notes__find: search}\n      descriptions: {find: Find notes}\n    - name: b\n      rename: {x: y}\n",
			want: []string{
				`sb.yaml:10:16: gateway.views[0].rename.create_note: "create_note" is no tool of this view: with prefix: always its tools are named server__tool; write notes__create_note, or use prefix: never in a view of one server`,
				`sb.yaml:11:22: gateway.views[0].descriptions.find: "find" is no tool of this view: with prefix: always its tools are named server__tool; write notes__find, or use prefix: never in a view of one server`,
				`sb.yaml:13:16: gateway.views[1].rename.x: "x" is no tool of this view: with prefix: always its tools are named server__tool; write SERVER__x, or use prefix: never in a view of one server`,
			},
		},
		{
			name: "view prefix",
			src:  "gateway:\n  views:\n    - name: a\n      prefix: alway\n    - name: b\n      servers: [github, notes]\n      prefix: never\n    - name: c\n      prefix: never\n",
			want: []string{
				`sb.yaml:9:15: gateway.views[0].prefix: unknown prefix "alway"; did you mean "always"?`,
				`sb.yaml:12:15: gateway.views[1].prefix: prefix: never needs exactly one entry in servers; list the one server the view shows (servers: [name]), or use prefix: always`,
				`sb.yaml:14:15: gateway.views[2].prefix: prefix: never needs exactly one entry in servers; list the one server the view shows (servers: [name]), or use prefix: always`,
			},
		},
		{
			name: "view rename and descriptions",
			src:  "gateway:\n  views:\n    - name: a\n      rename: {github__x: \"bad name\", notes__y: z, notes__w: z, notes__v: ~}\n      descriptions: [x]\n      renames: {}\n",
			want: []string{
				`sb.yaml:9:27: gateway.views[0].rename.github__x: invalid tool name "bad name"; use 1 to 128 letters, digits, _, . and -`,
				`sb.yaml:9:62: gateway.views[0].rename.notes__w: notes__y and notes__w are both renamed to "z"; give each tool a different name`,
				`sb.yaml:9:75: gateway.views[0].rename.notes__v: must be a string, not empty; write notes__v: "" for an empty value`,
				"sb.yaml:10:21: gateway.views[0].descriptions: must be a mapping of names to strings, not a list",
				`sb.yaml:11:7: gateway.views[0].renames: unknown field "renames"; did you mean "rename"?`,
			},
		},
		{
			name: "tokens shape",
			src:  "gateway:\n  tokens: {alice: x}\n",
			want: []string{"sb.yaml:7:12: gateway.tokens: must be a list of tokens, not a mapping"},
		},
		{
			name: "token fields",
			src: "gateway:\n  tokens:\n" +
				"    - token_env: ALICE_TOKEN\n" +
				"    - {user: \" \", token_sha256: 9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99}\n" +
				"    - {user: c}\n" +
				"    - {user: d, token_env: NOPE_TOKEN}\n" +
				"    - {user: e, token_env: EMPTY_TOKEN}\n" +
				"    - {user: f, token_env: not-a-var}\n" +
				"    - {user: g, token_env: ALICE_TOKEN, token_sha256: 9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99}\n" +
				"    - {user: h, token_sha256: 9F03EF1533A68D2F506F81EF463C1183A82A6BD40E45613F36E6FE1889CF1B99}\n" +
				"    - {user: i, token_sha256: abc}\n" +
				"    - {user: j, token_sha256: abc, secret: x}\n" +
				"    - nope\n",
			want: []string{
				"sb.yaml:8:7: gateway.tokens[0].user: user is required; add user: with the identity calls made with this token carry, e.g. user: alice",
				"sb.yaml:9:14: gateway.tokens[1].user: is empty; give the identity calls made with this token carry, e.g. user: alice",
				"sb.yaml:10:8: gateway.tokens[2].token_env: a token needs token_env or token_sha256; add token_env: VARIABLE (a variable holding the token), or token_sha256: its SHA-256 in hex (printf %s TOKEN | sha256sum)",
				"sb.yaml:11:28: gateway.tokens[3].token_env: variable NOPE_TOKEN is not set; set NOPE_TOKEN to the token in the environment switchboard runs in (e.g. export NOPE_TOKEN=$(openssl rand -hex 32)), or use token_sha256",
				"sb.yaml:12:28: gateway.tokens[4].token_env: variable EMPTY_TOKEN is empty; set EMPTY_TOKEN to the token (e.g. export EMPTY_TOKEN=$(openssl rand -hex 32)), or use token_sha256",
				`sb.yaml:13:28: gateway.tokens[5].token_env: invalid environment variable name "not-a-var"; name the variable that holds the token (letters, digits and _), e.g. token_env: ALICE_TOKEN`,
				"sb.yaml:14:41: gateway.tokens[6].token_sha256: token_env and token_sha256 cannot both be set; keep one: token_env names a variable holding the token, token_sha256 is its hash",
				"sb.yaml:15:31: gateway.tokens[7].token_sha256: must be in lower case; write the hex digits in lower case",
				"sb.yaml:16:31: gateway.tokens[8].token_sha256: must be 64 hex digits (a SHA-256), not 3 characters; give the token's SHA-256 as 64 hex digits (printf %s TOKEN | sha256sum)",
				"sb.yaml:17:31: gateway.tokens[9].token_sha256: must be 64 hex digits (a SHA-256), not 3 characters; give the token's SHA-256 as 64 hex digits (printf %s TOKEN | sha256sum)",
				`sb.yaml:17:36: gateway.tokens[9].secret: unknown field "secret"; remove it; docs/configuration.md lists the fields`,
				"sb.yaml:18:7: gateway.tokens[10]: must be a mapping, not a string",
			},
		},
		{
			name: "duplicate tokens",
			src: "gateway:\n  listen: 0.0.0.0:7777\n  tokens:\n" +
				"    - {name: laptop, user: a, token_env: ALICE_TOKEN}\n" +
				"    - {name: laptop, user: b, token_env: SAME_TOKEN}\n" +
				"    - {user: c, token_sha256: 9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99}\n" +
				"    - {user: d, token_sha256: 9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99}\n",
			want: []string{
				`sb.yaml:10:14: gateway.tokens[1].name: duplicate token name "laptop" (first defined at sb.yaml:9:14); give each token a unique name`,
				"sb.yaml:10:42: gateway.tokens[1].token_env: tokens[1] has the same token as laptop; give each token its own value, so that calls can be told apart",
				"sb.yaml:12:31: gateway.tokens[3].token_sha256: tokens[3] has the same token as tokens[2]; give each token its own value, so that calls can be told apart",
			},
		},
		{
			name: "token views",
			src:  "gateway:\n  views:\n    - name: github\n  tokens:\n    - {user: a, token_env: ALICE_TOKEN, views: [githbu, default, \"*\", zzz]}\n",
			want: []string{
				`sb.yaml:10:49: gateway.tokens[0].views[0]: unknown view "githbu"; did you mean "github"?`,
				`sb.yaml:10:71: gateway.tokens[0].views[3]: unknown view "zzz"; use the name of a view under gateway.views, "default" or "*"`,
			},
		},
	}
	checkProblems(t, gatewayServers, gatewayOpts, tests)
}

// TestGatewayUnknownTopLevel checks that a misspelt gateway key is caught.
func TestGatewayUnknownTopLevel(t *testing.T) {
	_, err := config.Parse("sb.yaml", []byte(gatewayServers+"gatway:\n  listen: 127.0.0.1:1\n"), gatewayOpts)
	want := `sb.yaml:6:1: gatway: unknown field "gatway"; did you mean "gateway"?`
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

func TestCheckExposure(t *testing.T) {
	tok := []config.Token{{Name: "a", User: "alice", SHA256: strings.Repeat("ab", 32)}}
	tests := []struct {
		listen  string
		tokens  []config.Token
		exposed bool
	}{
		{"127.0.0.1:7777", nil, false},
		{"127.1.2.3:7777", nil, false},
		{"localhost:7777", nil, false},
		{"LOCALHOST:7777", nil, false},
		{"[::1]:7777", nil, false},
		{"0.0.0.0:7777", nil, true},
		{"0.0.0.0:7777", tok, false},
		{":7777", nil, true},
		{":7777", tok, false},
		{"[::]:7777", nil, true},
		{"192.168.1.5:7777", nil, true},
		{"192.168.1.5:7777", tok, false},
		{"mcp.example.com:443", nil, true},
	}
	for _, tt := range tests {
		g := config.DefaultGateway()
		g.Listen, g.Tokens = tt.listen, tt.tokens
		err := g.CheckExposure()
		if got := err != nil; got != tt.exposed {
			t.Errorf("CheckExposure(%q, %d tokens) = %v; want an error: %v", tt.listen, len(tt.tokens), err, tt.exposed)
			continue
		}
		if err == nil {
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Config {
			t.Errorf("CheckExposure(%q): got %T %v, want a *fault.Error of kind config", tt.listen, err, err)
			continue
		}
		if want := "listening on " + tt.listen + " requires tokens"; !strings.HasPrefix(fe.Message, want) {
			t.Errorf("CheckExposure(%q): got message %q, want it to start with %q", tt.listen, fe.Message, want)
		}
		if got, want := strings.Join(fe.Suggestions, "; "), "add gateway.tokens or gateway.oauth (see docs/configuration.md#gateway and docs/auth-gateway.md), or listen on 127.0.0.1"; got != want {
			t.Errorf("CheckExposure(%q): got suggestions %q, want %q", tt.listen, got, want)
		}
	}
}

func TestGatewayView(t *testing.T) {
	g := config.DefaultGateway()
	got, ok := g.View(config.DefaultViewName)
	if want := (config.View{Name: "default", Prefix: config.PrefixAlways}); !ok || !cmp.Equal(got, want) {
		t.Errorf("View(default) = %+v, %v; want %+v, true", got, ok, want)
	}
	if got, ok := g.View("github"); ok {
		t.Errorf("View(github) = %+v, true; want false", got)
	}
	custom := config.View{Name: "default", Servers: []string{"github"}, Prefix: config.PrefixNever}
	gh := config.View{Name: "github", Prefix: config.PrefixAlways, Exclude: []string{"*delete*"}}
	g.Views = []config.View{gh, custom}
	if got, ok := g.View("default"); !ok || !cmp.Equal(got, custom) {
		t.Errorf("View(default) = %+v, %v; want the configured %+v, true", got, ok, custom)
	}
	if got, ok := g.View("github"); !ok || !cmp.Equal(got, gh) {
		t.Errorf("View(github) = %+v, %v; want %+v, true", got, ok, gh)
	}
}

func TestTokenMatches(t *testing.T) {
	sum := sha256.Sum256([]byte("bob-secret"))
	tests := []struct {
		name      string
		tok       config.Token
		presented string
		want      bool
	}{
		{"secret", config.Token{Secret: "alice"}, "alice", true},
		{"wrong secret", config.Token{Secret: "alice"}, "alicf", false},
		{"prefix of secret", config.Token{Secret: "alice"}, "alic", false},
		{"empty presented", config.Token{Secret: "alice"}, "", false},
		{"hash", config.Token{SHA256: hex.EncodeToString(sum[:])}, "bob-secret", true},
		{"wrong against hash", config.Token{SHA256: hex.EncodeToString(sum[:])}, "bob-secreT", false},
		{"hash wins over secret", config.Token{Secret: "alice", SHA256: hex.EncodeToString(sum[:])}, "alice", false},
		{"the hash itself", config.Token{SHA256: hex.EncodeToString(sum[:])}, hex.EncodeToString(sum[:]), false},
		{"no secret", config.Token{}, "", false},
		{"bad hash", config.Token{SHA256: "zz"}, "", false},
	}
	for _, tt := range tests {
		if got := tt.tok.Matches(tt.presented); got != tt.want {
			t.Errorf("%s: Matches(%q) = %v, want %v", tt.name, tt.presented, got, tt.want)
		}
	}
}

func TestTokenAllows(t *testing.T) {
	tests := []struct {
		views []string
		view  string
		want  bool
	}{
		{nil, "default", true},
		{nil, "github", true},
		{[]string{"*"}, "github", true},
		{[]string{"github"}, "github", true},
		{[]string{"github"}, "default", false},
		{[]string{"github", "default"}, "default", true},
		{[]string{"github"}, "git", false},
	}
	for _, tt := range tests {
		if got := (config.Token{Views: tt.views}).Allows(tt.view); got != tt.want {
			t.Errorf("Token{Views: %q}.Allows(%q) = %v, want %v", tt.views, tt.view, got, tt.want)
		}
	}
}

// TestIdentityPlaceholders checks that ${identity.*} is kept in headers
// and is a problem everywhere else.
func TestIdentityPlaceholders(t *testing.T) {
	ok := `servers:
  - name: api
    transport: sse
    url: https://api.example.com/sse
    headers:
      X-User: ${identity.user}
      X-Both: "${identity.user}/${identity.session}/$$HOME/${API_TOKEN}"
      X-Default: ${UNSET:-${identity.user}}
  - name: ws
    transport: websocket
    url: wss://api.example.com/ws
    headers: {X-Session: "${identity.session}"}
`
	cfg, err := config.Parse("sb.yaml", []byte(ok), gatewayOpts)
	if err != nil {
		t.Fatal(err)
	}
	api, _ := cfg.Server("api")
	want := map[string]string{"X-User": config.IdentityUser, "X-Both": config.IdentityUser + "/" + config.IdentitySession + "/$HOME/tok_secret", "X-Default": config.IdentityUser}
	if diff := cmp.Diff(want, api.Headers); diff != "" {
		t.Errorf("api headers mismatch (-want +got):\n%s", diff)
	}
	ws, _ := cfg.Server("ws")
	if got, want := ws.Headers["X-Session"], config.IdentitySession; got != want {
		t.Errorf("got ws X-Session %q, want %q", got, want)
	}

	bad := `servers:
  - name: local
    command: npx
    args: ["--user=${identity.user}"]
    env: {WHO: "${identity.session}"}
  - name: api
    transport: http
    url: https://api.example.com/${identity.user}
    headers: {X-Other: "${identity.name}"}
    description: for ${identity.user}
gateway:
  instructions: ${identity.user}
`
	_, err = config.Parse("sb.yaml", []byte(bad), gatewayOpts)
	wantErr := []string{
		"sb.yaml:4:12: servers.local.args[0]: ${identity.user} is only valid in the headers of http, sse and websocket servers; move it to a header value, or write $$ for a literal $",
		"sb.yaml:5:16: servers.local.env.WHO: ${identity.session} is only valid in the headers of http, sse and websocket servers; move it to a header value, or write $$ for a literal $",
		"sb.yaml:8:10: servers.api.url: ${identity.user} is only valid in the headers of http, sse and websocket servers; move it to a header value, or write $$ for a literal $",
		`sb.yaml:9:24: servers.api.headers.X-Other: invalid variable reference "${identity.name}"; use ${NAME} or ${NAME:-default}, and $$ for a literal $`,
		"sb.yaml:10:18: servers.api.description: ${identity.user} is only valid in the headers of http, sse and websocket servers; move it to a header value, or write $$ for a literal $",
		"sb.yaml:12:17: gateway.instructions: ${identity.user} is only valid in the headers of http, sse and websocket servers; move it to a header value, or write $$ for a literal $",
	}
	if err == nil {
		t.Fatal("Parse succeeded, want problems")
	}
	if diff := cmp.Diff(wantErr, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}

// FuzzGateway checks that a gateway block never panics the parser and
// that what config show prints for it reads back to the same gateway.
// FuzzParse covers the rest of the file (testdata/formats/gateway.yaml is
// its gateway seed).
func FuzzGateway(f *testing.F) {
	f.Add([]byte(fullGateway))
	seed, err := os.ReadFile("testdata/formats/gateway.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(gatewayServers + "gateway:\n  listen: '[::1]:0'\n  views: [{name: a, servers: [notes], prefix: never, rename: {x: y}}]\n"))
	noPos := cmp.Transformer("gwnopos", func(g config.Gateway) config.Gateway {
		g.Pos = config.Pos{}
		for i := range g.Views {
			g.Views[i].Pos = config.Pos{}
		}
		for i := range g.Tokens {
			g.Tokens[i].Pos = config.Pos{}
		}
		return g
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse("sb.yaml", data, gatewayOpts)
		if err != nil {
			return
		}
		if err := cfg.Gateway.CheckExposure(); err != nil {
			t.Fatalf("a valid configuration fails CheckExposure: %v\ninput:\n%s", err, data)
		}
		out, err := config.MarshalResolved(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), aliceSecret) {
			t.Fatalf("output holds a token secret:\n%s", out)
		}
		again, err := config.Parse("sb.yaml", out, gatewayOpts)
		if err != nil {
			t.Fatalf("resolved output does not parse: %v\ninput:\n%s\noutput:\n%s", err, data, out)
		}
		if diff := cmp.Diff(cfg.Gateway, again.Gateway, noPos); diff != "" {
			t.Fatalf("gateway read back differs (-want +got):\n%s\ninput:\n%s\noutput:\n%s", diff, data, out)
		}
	})
}

// TestGatewaySeed checks that the fuzz seed with a gateway block is valid
// with an empty environment, so that FuzzParse goes past parsing with it.
func TestGatewaySeed(t *testing.T) {
	cfg, err := config.Load("testdata/formats/gateway.yaml", config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(cfg.Gateway.Views)+len(cfg.Gateway.Tokens), 4; got != want {
		t.Errorf("got %d views and tokens, want %d", got, want)
	}
}

// TestViewToolNames: a view's globs, renames and descriptions apply to the
// exposed name, or with prefix never to the tool's own name.
func TestViewToolNames(t *testing.T) {
	always := config.View{Name: "a", Servers: []string{"gh"}, Include: []string{"gh__*"}, Exclude: []string{"gh__delete_*"}, Prefix: config.PrefixAlways,
		Rename: map[string]string{"gh__search": "find"}, Descriptions: map[string]string{"gh__search": "Finds."}}
	never := config.View{Name: "n", Servers: []string{"gh"}, Include: []string{"search", "get_*"}, Prefix: config.PrefixNever,
		Rename: map[string]string{"search": "find"}, Descriptions: map[string]string{"search": "Finds."}}
	tests := []struct {
		view                 config.View
		server, exposed, own string
		shown                bool
		name, description    string
	}{
		{always, "gh", "gh__search", "search", true, "find", "Finds."},
		{always, "gh", "gh__get_issue", "get_issue", true, "gh__get_issue", "own"},
		{always, "gh", "gh__delete_repo", "delete_repo", false, "", ""},
		{always, "fs", "fs__search", "search", false, "", ""},
		{never, "gh", "gh__search", "search", true, "find", "Finds."},
		{never, "gh", "gh__get_issue", "get_issue", true, "get_issue", "own"},
		{never, "gh", "gh__delete_repo", "delete_repo", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.view.Name+" "+tt.server+" "+tt.own, func(t *testing.T) {
			base := tt.view.ToolBase(tt.exposed, tt.own)
			if got := tt.view.Shows(tt.server, base); got != tt.shown {
				t.Fatalf("Shows(%q, %q) = %v, want %v", tt.server, base, got, tt.shown)
			}
			if !tt.shown {
				return
			}
			if got := tt.view.ToolName(base); got != tt.name {
				t.Errorf("ToolName(%q) = %q, want %q", base, got, tt.name)
			}
			if got := tt.view.Description(base, "own"); got != tt.description {
				t.Errorf("Description(%q) = %q, want %q", base, got, tt.description)
			}
		})
	}
}

// TestTrustedUser checks who a caller without a token is: its own
// _meta.user_id, else default_user, when no tokens are configured; with
// tokens, default_user for a local caller (serve --stdio) only.
func TestTrustedUser(t *testing.T) {
	open := config.Gateway{DefaultUser: "ada"}
	guarded := config.Gateway{DefaultUser: "ada", Tokens: []config.Token{{Name: "ci", User: "ci-bot", Secret: "s"}}}
	tests := []struct {
		name     string
		g        config.Gateway
		metaUser string
		local    bool
		want     string
	}{
		{"no tokens, no claim", open, "", false, "ada"},
		{"no tokens, the client's claim wins", open, "grace", false, "grace"},
		{"no tokens, stdio", open, "", true, "ada"},
		{"tokens, remote caller", guarded, "", false, ""},
		{"tokens, remote caller's claim is ignored", guarded, "grace", false, ""},
		{"tokens, stdio", guarded, "", true, "ada"},
		{"tokens, stdio claim is ignored", guarded, "grace", true, "ada"},
		{"no OS user and no claim", config.Gateway{}, "", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.g.TrustedUser(tt.metaUser, tt.local); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
