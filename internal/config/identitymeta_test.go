package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestIdentityMeta: identity_meta: false is read, kept when the resolved
// file is written back, and the default (true) adds nothing to it; a
// value that is not a boolean is an error naming the key.
func TestIdentityMeta(t *testing.T) {
	file := filepath.Join(t.TempDir(), "switchboard.yaml")
	src := `servers:
  - name: plain
    command: npx
  - name: quiet
    command: npx
    identity_meta: false
`
	cfg, err := config.Parse(file, []byte(src), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(cfg *config.Config, when string) {
		t.Helper()
		for i, want := range []bool{false, true} {
			if got := cfg.Servers[i].NoIdentityMeta; got != want {
				t.Errorf("%s: %s has NoIdentityMeta %v, want %v", when, cfg.Servers[i].Name, got, want)
			}
		}
	}
	check(cfg, "parsed")
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "identity_meta"); n != 1 {
		t.Errorf("the resolved file has identity_meta %d times, want once (only where it is off):\n%s", n, out)
	}
	again, err := config.Parse(file, out, config.Options{})
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", out, err)
	}
	check(again, "read back")

	_, err = config.Parse(file, []byte("servers:\n  - name: a\n    command: npx\n    identity_meta: nope\n"), config.Options{})
	if err == nil || !strings.Contains(err.Error(), "identity_meta") {
		t.Errorf("identity_meta: nope gave %v, want an error naming identity_meta", err)
	}
}
