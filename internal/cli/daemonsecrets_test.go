package cli

import (
	"os"
	"testing"
)

// TestCommandsNeedNotTheDaemonsTokens: a configuration with two
// gateway tokens from token_env, which the daemon's environment has and
// the operator's shell lacks, still lets every command that asks the
// daemon run (each unset variable gets a stand-in of its own: one shared
// by both would make them the same token, which the configuration
// refuses).
func TestCommandsNeedNotTheDaemonsTokens(t *testing.T) {
	const aliceVar, bobVar = "SWITCHBOARD_TEST_ALICE_TOKEN", "SWITCHBOARD_TEST_BOB_TOKEN"
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	if err := appendFile(cfg, "gateway:\n  tokens:\n"+
		"    - name: alice\n      user: alice\n      token_env: "+aliceVar+"\n"+
		"    - name: bob\n      user: bob\n      token_env: "+bobVar+"\n"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(aliceVar, "daemon-secret-alice") // restored when the test ends
	t.Setenv(bobVar, "daemon-secret-bob")
	startDaemon(t, cfg)
	for _, v := range []string{aliceVar, bobVar} { // the operator's shell
		if err := os.Unsetenv(v); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "alpha")
	r = runCLI(t, "history", "--config", cfg)
	wantCode(t, r, ExitOK)
}
