package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestOwnGatewaySkipped: in a client's file, Switchboard's own entry — the
// gateway's URL, or switchboard serve --stdio by any path — is skipped
// with a warning (it would connect Switchboard to itself), even where its
// command is beyond the allowlist; another server on another port is not.
func TestOwnGatewaySkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	body := `{"mcpServers": {
  "mine": {"command": "npx", "args": ["-y", "server-memory"]},
  "switchboard": {"url": "http://127.0.0.1:7777/mcp"},
  "sb-stdio": {"command": "/opt/bin/switchboard", "args": ["serve", "--stdio", "--config", "/x/switchboard.yaml"]},
  "team": {"url": "http://127.0.0.1:9000/mcp"},
  "view": {"type": "http", "url": "http://localhost:7777/mcp/eng"}
}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "mine,team" {
		t.Errorf("servers: got %s, want mine,team", got)
	}
	var warned []string
	for _, w := range cfg.Warnings {
		if strings.Contains(w.Message, "Switchboard's own gateway") {
			warned = append(warned, w.Field)
		}
	}
	if len(warned) != 3 {
		t.Errorf("warnings about the own entry: %v\n%v", warned, cfg.Warnings)
	}
	// serve --listen moves the gateway: the entry on its port is the own one.
	cfg, err = config.Load(path, config.Options{Listen: "127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Server("team"); ok {
		t.Error("the entry on the --listen port was read")
	}
}

// TestOwnGatewayOnAnotherPort: client connect with a gateway started by
// serve --listen 127.0.0.1:17731 writes that port; read later without
// the flag, its entry (named as connect names it) is still Switchboard's
// own, and another server on a loopback port is still read.
func TestOwnGatewayOnAnotherPort(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	body := `{"mcpServers": {
  "switchboard": {"url": "http://127.0.0.1:17731/mcp"},
  "team": {"url": "http://127.0.0.1:17732/mcp"}
}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Server("switchboard"); ok {
		t.Error("Switchboard's own entry on port 17731 was read as a server")
	}
	if _, ok := cfg.Server("team"); !ok {
		t.Error("another server on a loopback port was not read")
	}
}
