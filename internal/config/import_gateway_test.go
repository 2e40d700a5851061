package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestImportKeepsTheGatewayBlock: importing a native file keeps its
// gateway: block (never a token's secret), so nothing is lost.
func TestImportKeepsTheGatewayBlock(t *testing.T) {
	t.Setenv("SB_IMPORT_TOKEN", "the-secret-value")
	src := `gateway:
  listen: 127.0.0.1:7000
  views:
    - name: ev
      servers: [everything]
      prefix: never
  tokens:
    - user: alice
      token_env: SB_IMPORT_TOKEN
servers:
  - name: everything
    command: npx
    args: [-y, "@modelcontextprotocol/server-everything"]
`
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := config.Import(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"gateway:", `listen: "127.0.0.1:7000"`, "name: ev", "prefix: never", "token_env: SB_IMPORT_TOKEN"} {
		if !strings.Contains(got, want) {
			t.Errorf("imported file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "the-secret-value") {
		t.Errorf("imported file contains the token's secret:\n%s", got)
	}
	cfg, err := config.Parse(path, out, config.Options{})
	if err != nil {
		t.Fatalf("the imported file does not load: %v", err)
	}
	if v, ok := cfg.Gateway.View("ev"); !ok || v.Prefix != config.PrefixNever || len(cfg.Gateway.Tokens) != 1 {
		t.Errorf("imported gateway: got %+v", cfg.Gateway)
	}
}
