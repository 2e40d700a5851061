package config_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestChangedBlocks: what a reload changed besides its servers is named by
// block; a block that only moved in the file (its positions) is not.
func TestChangedBlocks(t *testing.T) {
	const base = `servers:
  - name: memory
    command: npx
    args: [-y, pkg]
limits:
  max_concurrent: 10
gateway:
  views:
    - name: mem
      servers: [memory]
`
	parse := func(src string) *config.Config {
		t.Helper()
		c, err := config.Parse("sb.yaml", []byte(src), config.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name, src string
		want      []string
	}{
		{"same", base, nil},
		{"moved down", "# a comment\n\n" + base, nil},
		{"a token and a limit", base + "  tokens:\n    - user: ops\n      token_sha256: " + sha + "\n" + "hook_settings:\n  retries: 0\n",
			[]string{"gateway", "hook_settings"}},
		{"a view's include", base + "      include: [\"memory__read_*\"]\n", []string{"gateway"}},
		{"agent", base + "agent:\n  max_steps: 3\n", []string{"agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := config.ChangedBlocks(parse(base), parse(tt.src))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ChangedBlocks (-want +got):\n%s", diff)
			}
		})
	}
}

// sha is a token's SHA-256.
const sha = "9f03ef1533a68d2f506f81ef463c1183a82a6bd40e45613f36e6fe1889cf1b99"
