package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// everyBlock is a native file with every block config show writes, and
// a $ in values of keys that expand variables (written $$) and of keys
// read as written (a binding's heading, a server's secrets and oauth
// scopes, a mapping's param: written as they are).
const everyBlock = `
limits:
  rate:
    per_user: {calls_per_second: 2.5, burst: 5}
gateway:
  listen: 127.0.0.1:7788
  fast_path: false
  default_user: alice
  instructions: "Pay $$5"
  views:
    - name: gh
      servers: [github]
      include: ["github__*"]
      rename: {github__search: find}
  tokens:
    - user: bob
      token_sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      views: [gh]
    - name: ci
      user: ci
      token_env: CI_TOKEN
  oauth:
    resource: https://mcp.example.com
    issuer: https://login.example.com
    groups_claim: groups
    group_views: {admins: ["*"]}
    view_scopes: {gh: [repo]}
    introspection: {client_id: gw, client_secret_env: GW_SECRET}
hook_settings:
  max_concurrent: 3
hooks:
  - name: notify
    on: tool.after
    if:
      server: github
      tool: {glob: "create_*"}
    actions:
      - type: http
        url: https://hooks.example.com/x
        headers: {X-User: "${identity.user}", X-Price: "$$3"}
      - type: mcp
        server: github
        tool: create_issue
        params:
          - param: "title$"
            value: "{tool} $$1"
          - param: labels
            source: literal
            value: [a, "b$$c", {k: 1}]
  - name: fire
    on: git.*
    priority: 2
    enabled: false
    actions:
      - type: event
        event: review.requested
        fields:
          - {field: who, source: context, value: user}
notebook:
  concurrency: 2
  max_blocks: 50
  bindings:
    - {heading: "## Price $5", server: github}
    - {block: fc, server: github, inherit_to_children: true}
    - {start_line: 3, end_line: 9, server: remote}
llm: {base_url: "http://127.0.0.1:11434/v1", model: llama3.2, api_key_env: OPENAI_API_KEY}
agent: {max_steps: 4, tools: ["github__*"]}
telemetry:
  endpoint: http://localhost:4318
  headers: {X-Tenant: "t$$1", X-U: "${identity.user}"}
  metrics: {enabled: true}
audit: {file: audit.jsonl, required: true}
servers:
  - name: github
    command: npx
    args: ["-y", "x"]
    env: {A: "1$$2"}
    secrets: ["MY$KEY"]
    session: per_client
    max_sessions: 4
  - name: remote
    transport: http
    url: https://mcp.example.com/mcp
    headers: {X-User: "${identity.user}"}
    oauth: {client_id: abc, scopes: ["read$x", write]}
`

// TestShowReadsBackTheSame: what config show writes of a file with every
// block reads back to the same configuration, block by block: each key
// escaped as the reading of its key needs (a heading is read as written,
// so its $ stays one $).
func TestShowReadsBackTheSame(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CI_TOKEN": "tok", "GW_SECRET": "sec"}
	opts := config.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	cfg, err := config.Parse("sb.yaml", []byte(everyBlock), opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := config.Parse("sb.yaml", out, opts)
	if err != nil {
		t.Fatalf("reading back what config show wrote: %v\n%s", err, out)
	}
	if diff := cmp.Diff(cfg, back, cmpopts.IgnoreTypes(config.Pos{}), cmpopts.IgnoreFields(config.Config{}, "Warnings")); diff != "" {
		t.Errorf("read back differs (-shown +read back):\n%s\n%s", diff, out)
	}
	if !strings.Contains(string(out), `heading: "## Price $5"`) {
		t.Errorf("config show escapes a heading, which is read as written:\n%s", out)
	}
}
