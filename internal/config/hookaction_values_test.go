package config_test

import (
	"slices"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestHookActionListsExpand checks that a github action's labels and an
// agent action's tools read $$ as a literal $ and ${VAR} as the variable,
// as every other string of the file does, so that what config show writes
// (with $ written $$) reads back the same: they were taken as written.
func TestHookActionListsExpand(t *testing.T) {
	t.Parallel()
	const file = `servers:
  - name: s
    command: npx
hooks:
  - name: gh
    on: tool.after
    actions:
      - type: github
        github: issue
        title: t
        labels: ["cost$$", "${HOME}"]
      - type: agent
        prompt: check
        tools: ["s__a$$b"]
`
	cfg, err := config.Parse("switchboard.yaml", []byte(file), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	acts := cfg.Hooks.List[0].Actions
	if got, want := acts[0].Labels, []string{"cost$", "/home/u"}; !slices.Equal(got, want) {
		t.Errorf("labels = %q, want %q", got, want)
	}
	if got, want := acts[1].Tools, []string{"s__a$b"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse("switchboard.yaml", out, config.TestOpts)
	if err != nil {
		t.Fatalf("reading what config show wrote:\n%s\n%v", out, err)
	}
	if got := again.Hooks.List[0].Actions; !slices.Equal(got[0].Labels, acts[0].Labels) || !slices.Equal(got[1].Tools, acts[1].Tools) {
		t.Errorf("after config show: labels %q, tools %q; want %q, %q\n%s", got[0].Labels, got[1].Tools, acts[0].Labels, acts[1].Tools, out)
	}
}
