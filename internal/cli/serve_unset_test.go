package cli

import (
	"strings"
	"testing"
)

// TestServeReloadRefusesAnUnsetTokenVariable: a reload of a file whose
// gateway token's token_env is not set in the daemon's environment is
// refused, naming the variable. The daemon must not read its own file
// with the stand-ins a command that asks a daemon uses (it found itself
// serving the file): the stand-in became a token anyone could guess.
func TestServeReloadRefusesAnUnsetTokenVariable(t *testing.T) {
	t.Parallel()
	const tokenVar = "SWITCHBOARD_TEST_NEVER_SET_TOKEN"
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha")+"gateway:\n  listen: 127.0.0.1:0\n")
	serveInProcessArgs(t, "serve", "--config", cfg) // gateway.listen from the file: no --listen
	if err := appendFile(cfg, "  tokens:\n    - name: me\n      user: alice\n      token_env: "+tokenVar+"\n"); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "reload stderr", r.stderr, "not reloaded", tokenVar)
	if strings.Contains(r.stdout, "reloaded") {
		t.Errorf("the daemon reloaded a token whose variable it does not have:\n%s", r.stdout)
	}
}
