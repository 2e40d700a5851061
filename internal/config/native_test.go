package config_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestKeysWithoutValues: a key written with no value is as good as
// absent (a block with everything commented out), except in a mapping of
// names to values, where the value is missing.
func TestKeysWithoutValues(t *testing.T) {
	src := "defaults:\nlimits:\n  max_concurrent:\nservers:\n  - name: a\n    command: npx\n    enabled:\n    description:\n"
	cfg, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := cfg.Limits.MaxConcurrent, config.DefaultMaxConcurrent; got != want {
		t.Errorf("got max_concurrent %d, want the default %d", got, want)
	}
	if s := cfg.Servers[0]; !s.Enabled || s.Description != "" {
		t.Errorf("got enabled %v, description %q; want the defaults", s.Enabled, s.Description)
	}
	_, err = config.Parse("sb.yaml", []byte("servers:\n  - name: a\n    command: npx\n    env: {A:}\n"), config.TestOpts)
	if err == nil || err.Error() != `sb.yaml:4:13: servers.a.env.A: must be a string, not empty; write A: "" for an empty value` {
		t.Errorf("got %v, want the value of env.A reported missing", err)
	}
}

// TestViolationsAreReportedOnce: what the schema finds wrong is taken out
// before the blocks are read, so no reader reports it again.
func TestViolationsAreReportedOnce(t *testing.T) {
	src := `limits:
  max_concurrent: many
gateway:
  views:
    - name: Bad
      servers: [a]
  tokens:
    - token_env: T
servers:
  - name: a
    command: npx
    max_concurrent: 100
    docker: mcp/x
`
	_, err := config.Parse("sb.yaml", []byte(src), config.TestOpts)
	ve, ok := err.(*config.ValidationError)
	if !ok {
		t.Fatalf("got %v, want a *ValidationError", err)
	}
	want := []string{
		"sb.yaml:2:19: limits.max_concurrent: must be a whole number, not a string",
		`sb.yaml:5:13: gateway.views[0].name: invalid view name "Bad"; use 1 to 64 lower-case letters, digits, _ and -, starting with a letter or digit`,
		"sb.yaml:8:7: gateway.tokens[0].user: user is required; add user: with the identity calls made with this token carry, e.g. user: alice",
		"sb.yaml:8:18: gateway.tokens[0].token_env: variable T is not set; set T to the token in the environment switchboard runs in (e.g. export T=$(openssl rand -hex 32)), or use token_sha256",
		"sb.yaml:13:13: servers.a.docker: must be a mapping, not a string",
	}
	if len(ve.Problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(ve.Problems), len(want), err)
	}
	for i, p := range ve.Problems {
		if p.String() != want[i] {
			t.Errorf("problem %d: got %q, want %q", i, p, want[i])
		}
	}
}
