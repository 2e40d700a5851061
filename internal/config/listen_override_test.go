package config_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestListenOverride checks that Options.Listen (serve --listen) replaces
// gateway.listen before validation, and is checked as the key is.
func TestListenOverride(t *testing.T) {
	const exposed = "gateway:\n  listen: 0.0.0.0:18110\n"
	tests := []struct {
		name, file, listen string
		want               string // the listen address, or the problem
	}{
		{"a loopback flag serves a file exposed without tokens", exposed, "127.0.0.1:18111", "127.0.0.1:18111"},
		{"a flag without a gateway block", "servers: []\n", "127.0.0.1:18111", "127.0.0.1:18111"},
		{"a malformed file value is not used", "gateway:\n  listen: nonsense\n", "127.0.0.1:18111", "127.0.0.1:18111"},
		{"no flag keeps the file's check", exposed, "", "switchboard.yaml:2:11: gateway.listen: listening on 0.0.0.0:18110 requires tokens"},
		{"a malformed flag", exposed, "foo", `--listen: gateway.listen: invalid listen address "foo"; write it as host:port`},
		{"a bad port", exposed, "127.0.0.1:99999", `--listen: gateway.listen: invalid port "99999" in listen address; use a port number from 0 (any free port) to 65535`},
		{"an exposed flag without tokens", "gateway:\n  listen: 127.0.0.1:1\n", "0.0.0.0:18110", "--listen: gateway.listen: listening on 0.0.0.0:18110 requires tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse("switchboard.yaml", []byte(tt.file), config.Options{Listen: tt.listen, LookupEnv: func(string) (string, bool) { return "", false }})
			if err != nil {
				if !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %q, want %q", err, tt.want)
				}
				return
			}
			if cfg.Gateway.Listen != tt.want {
				t.Errorf("listen: got %q, want %q", cfg.Gateway.Listen, tt.want)
			}
		})
	}
}
