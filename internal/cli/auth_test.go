package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// browserScript writes a $BROWSER that runs this test binary as the
// scripted browser, clicking "Allow".
func browserScript(t *testing.T) string { return testpeer.BrowserScript(t, "allow") }

// serverState returns a server's state and note from `servers --json`.
func serverState(t *testing.T, cfg, name string) (state, lastError string, suggestions []string, raw string) {
	t.Helper()
	r := runCLI(t, "servers", "--json", "--config", cfg)
	var rows []struct {
		Server      string   `json:"server"`
		State       string   `json:"state"`
		LastError   string   `json:"last_error"`
		Suggestions []string `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("servers --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	for _, row := range rows {
		if row.Server == name {
			return row.State, row.LastError, row.Suggestions, r.stdout
		}
	}
	t.Fatalf("servers --json has no %s:\n%s", name, r.stdout)
	return
}

// reSignInNoticed is the daemon's log line for a server that saw its
// stored sign-in change while it waited for one.
var reSignInNoticed = regexp.MustCompile(`(?m)^.*msg="the stored sign-in changed; connecting".* server=demo\b`)

// TestAuthEndToEnd: a daemon serving the TypeScript SDK's OAuth example
// (strict: it checks the resource indicator) shows it needs_auth with the
// exact command; `auth login` through a scripted $BROWSER stores a sign-in
// that the daemon picks up within a second, without a restart; a tool call
// through the gateway then works; the token appears in no output; `auth
// status` says who and what; `auth logout` signs out and the daemon is
// needs_auth again.
func TestAuthEndToEnd(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, true)
	// alpha, a stdio server, must be served throughout, whatever demo's state.
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	state := getenvOf(t, "SWITCHBOARD_STATE_DIR")
	setenv(t, "BROWSER", browserScript(t))
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(data), "defaults:\n", "gateway:\n  listen: 127.0.0.1:0\ndefaults:\n  health: {ping_interval: 1s, max_failures: 1, backoff: [10ms]}\n", 1) +
		fmt.Sprintf("  - name: demo\n    transport: http\n    url: %s\n", ex.URL) + "audit:\n  file: audit.jsonl\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg, "--log-level", "debug") }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	eventuallyCLI(t, 30*time.Second, "the daemon to show demo needs_auth", func() bool {
		return strings.Contains(out.String(), "demo: needs_auth")
	})
	st, lastErr, hints, _ := serverState(t, cfg, "demo")
	if st != "needs_auth" || !strings.Contains(lastErr, "server demo needs sign-in: not signed in") || len(hints) != 1 || hints[0] != "run: switchboard auth login demo" {
		t.Fatalf("servers --json: got %s %q %q, want needs_auth with `run: switchboard auth login demo`", st, lastErr, hints)
	}
	r := runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "servers", r.stdout, "needs_auth", "switchboard auth login demo")
	eventuallyCLI(t, 20*time.Second, "alpha to be connected while demo needs sign-in", func() bool {
		st, _, _, _ := serverState(t, cfg, "alpha")
		return st == "connected"
	})
	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=still here")
	wantCode(t, r, ExitOK)
	r = runCLI(t, "call", "--config", cfg, "demo", "greet", "name=Ada")
	wantCode(t, r, ExitFailure)
	wantContains(t, "call demo before sign-in", r.stderr, "needs sign-in", "switchboard auth login demo")
	r = runCLI(t, "auth", "status", "--config", cfg)
	wantCode(t, r, ExitOK)

	var addr string // the port serve took
	eventuallyCLI(t, 10*time.Second, "serve to say where the gateway is", func() bool {
		m := reGatewayBase.FindStringSubmatch(out.String())
		if m != nil {
			addr = strings.TrimPrefix(m[1], "http://")
		}
		return m != nil
	})
	cs := gatewaySession(t, ctx, addr)

	r = runCLI(t, "auth", "login", "demo", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "auth login", r.stdout, "To sign in to demo, open this URL in a browser:", "code_challenge_method=S256", "resource=", "Signed in to demo")
	eventuallyCLI(t, 10*time.Second, "the daemon to connect demo after the sign-in", func() bool {
		return strings.Contains(out.String(), "demo: connected")
	})
	// It connected because it saw the stored sign-in change (it looks
	// every 200 ms while it waits for one), not by a restart or a retry
	// that would have come anyway; how long the connection then takes is
	// the machine's load, not the point.
	if !reSignInNoticed.MatchString(errb.String()) {
		t.Errorf("the daemon connected demo without noticing the new sign-in; its log:\n%s", errb.String())
	}

	// A tool call through the gateway.
	eventuallyCLI(t, 10*time.Second, "the gateway to list demo__greet", func() bool {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tl := range tools.Tools {
			if tl.Name == "demo__greet" {
				return true
			}
		}
		return false
	})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Ada") {
		t.Fatalf("greet through the gateway: got %+v, %v", res, err)
	}

	// The token is in no output.
	m, err := oauth.New(oauth.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := m.Secrets()
	if err != nil || len(secrets) == 0 {
		t.Fatalf("Secrets: %v %v", secrets, err)
	}
	outputs := map[string]string{"serve stdout": out.String(), "serve stderr": errb.String(), "login": r.stdout + r.stderr}
	for _, args := range [][]string{
		{"servers", "--json"}, {"servers"}, {"config", "show"}, {"history", "--json"}, {"auth", "status", "--json"}, {"auth", "status"},
	} {
		r := runCLI(t, append(args, "--config", cfg)...)
		outputs[strings.Join(args, " ")] = r.stdout + r.stderr
	}
	for what, text := range outputs {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a token or client secret", what)
			}
		}
	}
	if h := outputs["history --json"]; !strings.Contains(h, "greet") {
		t.Errorf("history does not have the call:\n%s", h)
	}
	var statuses []oauth.Status
	if err := json.Unmarshal([]byte(outputs["auth status --json"]), &statuses); err != nil || len(statuses) != 1 {
		t.Fatalf("auth status --json: %v\n%s", err, outputs["auth status --json"])
	}
	if s := statuses[0]; s.Server != "demo" || s.State != oauth.StateSignedIn || strings.Join(s.Scopes, " ") != "mcp:tools" || s.ExpiresAt.IsZero() || s.Refreshable {
		t.Errorf("auth status: got %+v, want demo signed in with mcp:tools, an expiry, not refreshable (the demo gives no refresh token)", s)
	}
	// Whom the sign-in is for, or that the authorization server did not
	// say (the demo gives no ID token): never a bare "-" for a sign-in.
	as := statuses[0].Subject
	if as == "" {
		as = "(not said by the authorization server)"
	}
	wantContains(t, "auth status", outputs["auth status"], "SIGNED IN AS", as)

	// Logout: the example offers no revocation, and the command says so;
	// the daemon shows needs_auth again.
	r = runCLI(t, "auth", "logout", "demo", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "auth logout", r.stdout, "Signed out of demo", "no revocation")
	eventuallyCLI(t, 15*time.Second, "the daemon to show demo needs_auth after logout", func() bool {
		st, _, _, _ := serverState(t, cfg, "demo")
		return st == "needs_auth"
	})
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		t.Fatalf("greet after logout: %v, want an error result", err)
	}
	if got := textOfResult(res); !res.IsError || !strings.Contains(got, "authentication") || !strings.Contains(got, "switchboard auth login demo") {
		t.Errorf("greet after logout: got %q, want an authentication_error naming `switchboard auth login demo`", got)
	}

	// The audit trail has the sign-in and the sign-out, by the CLI, and
	// no token.
	trail := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
	var got []string
	if err := audit.Read(trail, audit.Filter{Events: []string{"auth.*"}}, func(e audit.Event) error {
		if e.Actor.Via == "cli" && e.Actor.User != "" && e.Target.Server == "demo" {
			got = append(got, e.Event+" "+string(e.Outcome))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ", ") != "auth.sign_in ok, auth.sign_out ok" {
		t.Errorf("the audit trail's sign-ins: got %q, want the sign-in and the sign-out of demo by the CLI", got)
	}
	raw, _ := os.ReadFile(trail)
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Error("the audit trail holds a token or client secret")
		}
	}
}

func textOfResult(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		b.Write(data)
	}
	return b.String()
}

// gatewaySession connects an MCP client to the daemon's gateway.
func gatewaySession(t *testing.T, ctx context.Context, addr string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	var cs *mcp.ClientSession
	eventuallyCLI(t, 10*time.Second, "the gateway to accept a client", func() bool {
		var err error
		cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
		return err == nil
	})
	t.Cleanup(func() { cs.Close() })
	return cs
}

// authAdHocOnATerminal: `switchboard tools --url URL` on a terminal
// signs in by itself when the server asks (through $BROWSER), then lists
// the tools. The terminal is a real pseudo-terminal, made by script(1).
func authAdHocOnATerminal(t *testing.T, ex *testpeer.OAuthExample) {
	t.Parallel()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) is not installed (%v): install it (Debian: apt-get install bsdutils; elsewhere util-linux) to run this test on a pseudo-terminal", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	cmdline := fmt.Sprintf("%q tools --url %q", exe, ex.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "-qec", cmdline, "/dev/null")
	cmd.Env = append(os.Environ(), envRunMain+"=1", "SWITCHBOARD_STATE_DIR="+state, "BROWSER="+browserScript(t),
		"XDG_CONFIG_HOME="+t.TempDir())
	cmd.Dir = t.TempDir()
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("tools --url on a terminal: %v\n%s", err, out)
	}
	wantContains(t, "tools --url", out, "asks for sign-in", "To sign in to adhoc, open this URL in a browser:", "Signed in to adhoc", "greet")

	// Without a terminal it does not sign in: it says what to do.
	r := runCLI(t, "tools", "--url", ex.URL, "--state-dir", t.TempDir())
	if r.code == ExitOK {
		t.Fatalf("tools --url without a terminal and without a sign-in: got exit 0\n%s", r.stdout)
	}
	wantContains(t, "tools --url (no terminal)", r.stdout+r.stderr, "needs sign-in", "switchboard auth login --url "+ex.URL)
	// Once: the message ends with the command, and no "try:" line repeats it.
	if n := strings.Count(r.stderr, "switchboard auth login --url "+ex.URL); n != 1 {
		t.Errorf("tools --url (no terminal): the sign-in command is said %d times, want once:\n%s", n, r.stderr)
	}
}

// TestAuthWithTheOAuthExample runs the sign-ins that need no strict
// authorization server against one TypeScript OAuth example (non-strict),
// in parallel: each registers a client of its own (dynamic registration)
// with its own state directory, and none changes what the server does
// for another, so one node process serves them all (one each cost ~1 s
// CPU more per test).
func TestAuthWithTheOAuthExample(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, false)
	t.Run("bad input", func(t *testing.T) { authLoginBadInput(t, ex) })
	t.Run("interrupted", func(t *testing.T) { authLoginInterrupted(t, ex) })
	t.Run("ad hoc on a terminal", func(t *testing.T) { authAdHocOnATerminal(t, ex) })
}

// authLoginBadInput: each mistake or failure of a sign-in says what
// failed and what to run, and shows no secret.
func authLoginBadInput(t *testing.T, ex *testpeer.OAuthExample) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "client-secret-never-shown-93c1"
	setenv(t, "DOWN_SECRET", secret)
	yaml := string(data) + fmt.Sprintf("  - name: demo\n    transport: http\n    url: %s\n", ex.URL) +
		"  - name: down\n    transport: http\n    url: http://127.0.0.1:1/mcp\n    oauth: {client_id: sb, client_secret_env: DOWN_SECRET}\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		browser string // BROWSER mode of the scripted browser
		args    []string
		code    int
		want    []string
	}{
		{"declined", "deny", []string{"auth", "login", "demo"}, ExitFailure,
			[]string{"the authorization server answered the sign-in with access_denied", "the sign-in was declined", "switchboard auth login demo"}},
		{"wrong state", "wrongstate", []string{"auth", "login", "demo"}, ExitFailure,
			[]string{"the redirect's state does not match this sign-in", "switchboard auth login demo"}},
		{"unreachable", "allow", []string{"auth", "login", "down"}, ExitFailure,
			[]string{"reaching the server to sign in", "127.0.0.1:1", "switchboard auth login down"}},
		{"unknown server", "allow", []string{"auth", "login", "demoo"}, ExitFailure, []string{`no server named "demoo"`, "demo"}},
		{"stdio server", "allow", []string{"auth", "login", "alpha"}, ExitFailure, []string{"server alpha is a stdio server"}},
		{"user on a shared server", "allow", []string{"auth", "login", "demo", "--user", "bob"}, ExitFailure, []string{"server demo has one shared sign-in, so --user does not apply", "auth: per_user"}},
		{"no server", "allow", []string{"auth", "login"}, ExitUsage, []string{"usage: switchboard auth login SERVER"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setenv(t, "BROWSER", testpeer.BrowserScript(t, c.browser))
			r := runCLI(t, append(c.args, "--config", cfg)...)
			if r.code != c.code {
				t.Fatalf("exit code: got %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			wantContains(t, "stderr", r.stderr, c.want...)
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("the output shows the client secret")
			}
		})
	}
}
