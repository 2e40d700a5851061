package hooks_test

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestCommandActionEnvironment: a command action gets the base variables
// (PATH, HOME, ...), its own env (${VAR} expanded at load), the event's
// variables — and nothing else of Switchboard's environment unless it
// says inherit_env: true. It got the whole environment: a daemon's
// tokens reached every hook script.
func TestCommandActionEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_TEST_DAEMON_TOKEN", "tok-3f9a8c1e")
	t.Setenv("SWITCHBOARD_TEST_FOR_HOOK", "from-the-daemon")
	f := engineOnly(t, `hooks:
  - name: plain
    on: env.plain
    actions: [{type: command, command: [env], env: {NOTIFY_CHANNEL: ops, FORWARDED: "${SWITCHBOARD_TEST_FOR_HOOK}", SWITCHBOARD_EVENT: spoofed}}]
  - name: whole
    on: env.whole
    actions: [{type: command, command: [env], inherit_env: true}]
  - name: leaky
    on: env.leaky
    actions: [{type: command, command: [sh, -c, "echo bad token $NOTIFY_TOKEN >&2; exit 4"], env: {NOTIFY_TOKEN: tok-77d1e0b2a9}}]
`, nil)
	envOf := func(event string) map[string]string {
		t.Helper()
		rep, err := f.eng.Fire(context.Background(), event, nil)
		if err != nil || len(rep.Runs) != 1 || rep.Failed {
			t.Fatalf("fire %s: got %+v, %v", event, rep, err)
		}
		out, _ := rep.Runs[0].Output.(string)
		env := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				env[k] = v
			}
		}
		return env
	}

	got := envOf("env.plain")
	if v, ok := got["SWITCHBOARD_TEST_DAEMON_TOKEN"]; ok {
		t.Errorf("the command got the daemon's SWITCHBOARD_TEST_DAEMON_TOKEN=%s; want only what it names", v)
	}
	for k, want := range map[string]string{
		"PATH":              os.Getenv("PATH"),
		"HOME":              os.Getenv("HOME"),
		"NOTIFY_CHANNEL":    "ops",
		"FORWARDED":         "from-the-daemon",
		"SWITCHBOARD_EVENT": "env.plain", // the event's own variables win
	} {
		if got[k] != want {
			t.Errorf("%s: got %q, want %q", k, got[k], want)
		}
	}
	if got["SWITCHBOARD_HOOK_CHAIN"] == "" {
		t.Errorf("SWITCHBOARD_HOOK_CHAIN: got none, want the chain (env %v)", got)
	}

	if got := envOf("env.whole"); got["SWITCHBOARD_TEST_DAEMON_TOKEN"] != "tok-3f9a8c1e" {
		t.Errorf("inherit_env: got SWITCHBOARD_TEST_DAEMON_TOKEN=%q, want the whole environment", got["SWITCHBOARD_TEST_DAEMON_TOKEN"])
	}

	// A secret-looking variable of env is redacted from what is reported
	// and recorded, as a server's is.
	rep, err := f.eng.Fire(context.Background(), "env.leaky", nil)
	if err != nil || len(rep.Runs) != 1 {
		t.Fatalf("fire env.leaky: got %+v, %v", rep, err)
	}
	if e := rep.Runs[0].Error; strings.Contains(e, "tok-77d1e0b2a9") || !strings.Contains(e, "bad token") {
		t.Errorf("the run's error: got %q, want the token redacted", e)
	}
}
