package config_test

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestMarshalServerHidesSecrets(t *testing.T) {
	s := config.Server{Name: "gh", Transport: config.TransportStdio, Command: "npx", Args: []string{"-y", "server", "--token=abc123secret"},
		Env: map[string]string{"GITHUB_TOKEN": "ghp_verysecret"}, Enabled: true}
	out := string(config.MarshalServer(s))
	for _, secret := range []string{"abc123secret", "ghp_verysecret"} {
		if strings.Contains(out, secret) {
			t.Errorf("MarshalServer shows %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"servers:", "- name: gh", "command: npx", "GITHUB_TOKEN"} {
		if !strings.Contains(out, want) {
			t.Errorf("MarshalServer lacks %q:\n%s", want, out)
		}
	}
}
