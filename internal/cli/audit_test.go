package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/audit"
)

// auditFixture writes a trail of known events and a configuration that
// names it, and returns both paths.
func auditFixture(t *testing.T) (cfgPath, trail string) {
	t.Helper()
	cfgPath = writeConfig(t, map[string]string{"alpha": "ok"})
	trail = filepath.Join(filepath.Dir(cfgPath), "audit.jsonl")
	b, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append(b, []byte("audit:\n  file: audit.jsonl\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	err := audit.Append(audit.Options{File: trail},
		audit.Event{Time: now.Add(-3 * time.Hour), Event: audit.TokenRefused, Outcome: audit.Denied, Actor: audit.Actor{Via: "gateway", Remote: "10.0.0.9:4242"}, Reason: "the bearer token is not one of gateway.tokens"},
		audit.Event{Time: now.Add(-30 * time.Minute), Event: audit.ServerDisabled, Outcome: audit.OK, Actor: audit.Actor{User: "ana", Via: "control"}, Target: audit.Target{Server: "github"}},
		audit.Event{Time: now.Add(-10 * time.Minute), Event: audit.CallDenied, Outcome: audit.Denied, Actor: audit.Actor{User: "bo", Via: "gateway", Token: "ci"}, Target: audit.Target{Server: "github", Tool: "delete_repo"}, Reason: "denied by hook no-deletes"},
	)
	if err != nil {
		t.Fatal(err)
	}
	return cfgPath, trail
}

// TestAuditCommand: switchboard audit reads the trail that the
// configuration names, as a table or JSON lines, with each filter.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	cfgPath, trail := auditFixture(t)

	r := runCLI(t, "--config", cfgPath, "audit")
	wantCode(t, r, 0)
	wantContains(t, "the table", r.stdout, "TIME", "EVENT", "OUTCOME", "auth.token_refused", "10.0.0.9:4242", "server.disabled", "server=github",
		"call.denied", "token ci", "tool=delete_repo", "denied by hook no-deletes")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 4 {
		t.Errorf("got %d lines, want a header and 3 events:\n%s", len(lines), r.stdout)
	}

	events := func(r result) []string {
		t.Helper()
		wantCode(t, r, 0)
		var events []audit.Event
		if err := json.Unmarshal([]byte(r.stdout), &events); err != nil {
			t.Fatalf("--json: %q: %v", r.stdout, err)
		}
		var out []string
		for _, e := range events {
			out = append(out, e.Event)
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "1h"}, "server.disabled call.denied"},
		{[]string{"--event", "call.denied"}, "call.denied"},
		{[]string{"--event", "auth.*"}, "auth.token_refused"},
		{[]string{"--user", "ana"}, "server.disabled"},
		{[]string{"--outcome", "denied"}, "auth.token_refused call.denied"},
		{[]string{"--outcome", "denied", "--user", "bo"}, "call.denied"},
		{[]string{"--file", trail, "--event", "server.disabled", "--event", "call.denied"}, "server.disabled call.denied"},
	} {
		got := strings.Join(events(runCLI(t, append([]string{"--config", cfgPath, "audit", "--json"}, tc.args...)...)), " ")
		if got != tc.want {
			t.Errorf("audit %v: got %q, want %q", tc.args, got, tc.want)
		}
	}

	// Mistakes say what is wrong.
	r = runCLI(t, "--config", cfgPath, "audit", "--event", "auth.login")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, `no audit event is named "auth.login"`, "auth.sign_in")
	r = runCLI(t, "--config", cfgPath, "audit", "--outcome", "refused")
	wantCode(t, r, 2)
	wantContains(t, "stderr", r.stderr, `no audit outcome is "refused"`)
	plain := writeConfig(t, map[string]string{"alpha": "ok"})
	r = runCLI(t, "--config", plain, "audit")
	wantCode(t, r, 1)
	wantContains(t, "stderr", r.stderr, "configures no audit trail", "--file")
}

// TestAuditFollow: audit --follow prints the events already there, then
// each new one as it is written, until interrupted.
func TestAuditFollow(t *testing.T) {
	t.Parallel()
	cfgPath, trail := auditFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- mainIn(t, ctx, &out, &errb, "--config", cfgPath, "audit", "--follow", "--json", "--outcome", "ok")
	}()
	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond(out.String()) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("waiting for %s; stdout:\n%s\nstderr:\n%s", what, out.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the existing event", func(s string) bool { return strings.Contains(s, `"server.disabled"`) })
	if err := audit.Append(audit.Options{File: trail},
		audit.Event{Event: audit.Resumed, Outcome: audit.OK, Actor: audit.Actor{User: "cy", Via: "console"}},
		audit.Event{Event: audit.TokenRefused, Outcome: audit.Denied}); err != nil {
		t.Fatal(err)
	}
	waitFor("the new event", func(s string) bool { return strings.Contains(s, `"engine.resumed"`) })
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("audit --follow ended with %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), "auth.token_refused") {
		t.Errorf("--outcome ok printed a denied event:\n%s", out.String())
	}
}

// TestConfigTrustIsAudited: `config trust` of a file writes a config.trust
// event, with the file and its hash, to the trail of the configuration.
func TestConfigTrustIsAudited(t *testing.T) {
	t.Parallel()
	cfgPath, trail := auditFixture(t)
	setenv(t, "HOME", t.TempDir())
	b, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append(b, []byte("hooks:\n  - name: h\n    on: deploy.done\n    actions:\n      - {type: command, command: [\"true\"]}\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "--config", cfgPath, "config", "trust", cfgPath, "--yes")
	wantCode(t, r, 0)
	var got []audit.Event
	if err := audit.Read(trail, audit.Filter{Events: []string{audit.ConfigTrust}}, func(e audit.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d config.trust events, want 1", len(got))
	}
	data, _ := os.ReadFile(cfgPath)
	abs, _ := filepath.Abs(cfgPath)
	e := got[0]
	if e.Outcome != audit.OK || e.Actor.Via != "cli" || e.Target.File != abs || e.Target.Hash != sha256Hex(data) {
		t.Errorf("got %+v, want the trusted file and its hash, by the CLI", e)
	}
}

// sha256Hex is the hex SHA-256 of data.
func sha256Hex(data []byte) string {
	d := sha256.Sum256(data)
	return hex.EncodeToString(d[:])
}

// TestStopAndResumeWithoutADaemonAreAudited: with no daemon to record
// them, `stop`, `resume` and `servers disable/enable` write their events
// to the trail themselves.
func TestStopAndResumeWithoutADaemonAreAudited(t *testing.T) {
	t.Parallel()
	cfgPath, trail := auditFixture(t)
	state := t.TempDir()
	wantCode(t, runCLI(t, "--config", cfgPath, "--state-dir", state, "stop"), 0)
	wantCode(t, runCLI(t, "--config", cfgPath, "--state-dir", state, "resume"), 0)
	var got []string
	if err := audit.Read(trail, audit.Filter{Events: []string{"engine.*"}}, func(e audit.Event) error {
		if e.Outcome != audit.OK || e.Actor.Via != "cli" || e.Actor.User == "" {
			t.Errorf("got %+v, want an ok event by the CLI's user", e)
		}
		got = append(got, e.Event)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{audit.Stopped, audit.Resumed}; !slices.Equal(got, want) {
		t.Errorf("got events %v, want %v", got, want)
	}

	wantCode(t, runCLI(t, "--config", cfgPath, "--state-dir", state, "servers", "disable", "alpha"), 0)
	wantCode(t, runCLI(t, "--config", cfgPath, "--state-dir", state, "servers", "enable", "alpha"), 0)
	got = nil
	if err := audit.Read(trail, audit.Filter{Events: []string{"server.*"}}, func(e audit.Event) error {
		if e.Actor.Via == "cli" {
			if e.Target.Server != "alpha" || e.Outcome != audit.OK {
				t.Errorf("got %+v, want an ok event for alpha", e)
			}
			got = append(got, e.Event)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{audit.ServerDisabled, audit.ServerEnabled}; !slices.Equal(got, want) {
		t.Errorf("got server events by the CLI %v, want %v", got, want)
	}
}
