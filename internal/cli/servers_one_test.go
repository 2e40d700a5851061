package cli

import (
	"strings"
	"testing"
)

// TestServersOfOneServer: `servers NAME` lists that server alone (its exit
// code is its own: another server's failure does not count); a name that
// is neither a server nor a subcommand is a usage error with the closest of
// both.
func TestServersOfOneServer(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{"dead": "exit"}, httpServersYAML(t, "alpha"))

	r := runCLI(t, "servers", "alpha", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers alpha", r.stdout, "alpha", "connected")
	if strings.Contains(r.stdout, "dead") {
		t.Errorf("servers alpha lists another server:\n%s", r.stdout)
	}

	r = runCLI(t, "servers", "dead", "--config", cfg, "--json")
	wantCode(t, r, ExitFailure)
	wantContains(t, "servers dead --json", r.stdout, `"server": "dead"`)
	if strings.Contains(r.stdout, `"alpha"`) {
		t.Errorf("servers dead lists another server:\n%s", r.stdout)
	}

	for _, tt := range []struct{ arg, want string }{
		{"alpah", `switchboard servers: no server named "alpah" is configured, nor is it a servers subcommand; did you mean "alpha"?`},
		{"enabel", `did you mean "enable"?`},
		{"zzz", "want a server (dead, alpha) or disable, enable or refresh"},
	} {
		r = runCLI(t, "servers", tt.arg, "--config", cfg)
		wantCode(t, r, ExitUsage)
		wantContains(t, "servers "+tt.arg, r.stderr, tt.want)
	}
}
