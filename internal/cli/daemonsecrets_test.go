package cli

import (
	"testing"
)

// TestCommandsNeedNotTheDaemonsTokens: a configuration with two
// gateway tokens from token_env, which the daemon's environment has and
// the operator's shell lacks, still lets every command that asks the
// daemon run (each unset variable gets a stand-in of its own: one shared
// by both would make them the same token, which the configuration
// refuses).
func TestCommandsNeedNotTheDaemonsTokens(t *testing.T) {
	t.Parallel()
	const aliceVar, bobVar = "SWITCHBOARD_TEST_ALICE_TOKEN", "SWITCHBOARD_TEST_BOB_TOKEN"
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	if err := appendFile(cfg, "gateway:\n  tokens:\n"+
		"    - name: alice\n      user: alice\n      token_env: "+aliceVar+"\n"+
		"    - name: bob\n      user: bob\n      token_env: "+bobVar+"\n"); err != nil {
		t.Fatal(err)
	}
	// The daemon's environment has the tokens; the operator's shell (t's)
	// does not.
	startDaemonIn(t, cfg, withVars(envOf(t), map[string]string{aliceVar: "daemon-secret-alice", bobVar: "daemon-secret-bob"}))
	r := runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "alpha")
	r = runCLI(t, "history", "--config", cfg)
	wantCode(t, r, ExitOK)
}
