package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// urlElicitConfig writes a configuration with the "urlelicit" test server,
// named ue, and a fresh state directory.
func urlElicitConfig(t *testing.T) string {
	t.Helper()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	exe := testserver.Command(t)
	cfg := "defaults:\n  connect_timeout: 10s\n  request_timeout: 60s\n" +
		"security:\n  allowed_commands: [\"" + exe + "\"]\n" +
		"servers:\n  - name: ue\n    command: \"" + exe + "\"\n    env: " + testserver.EnvYAML("urlelicit") + "\n"
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noBrowser is the environment of a terminal without a display: the
// browser is not offered.
var noBrowser = []string{"DISPLAY=", "WAYLAND_DISPLAY=", "BROWSER="}

var completionURL = regexp.MustCompile(`open: (http://127\.0\.0\.1:\d+/connect/` + testserver.URLElicitationID + `)`)

// visit fetches the completion URL shown in out, as the person's browser
// would.
func visit(t *testing.T, out string) {
	t.Helper()
	m := completionURL.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no completion URL on the terminal:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m[1], nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("visiting %s: %v", m[1], err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("visiting %s: %s %s", m[1], resp.Status, body)
	}
}

// urlElicitOnPTY runs `call ue connect` on a terminal: the URL the server
// requires is shown with its host; once it is visited, the server's
// notifications/elicitation/complete has the call made again, once, with
// no key pressed.
func urlElicitOnPTY(t *testing.T, cfg string) {
	t.Helper()
	p := startOnPTY(t, noBrowser, "call", "--config", cfg, "ue", "connect")
	p.expect("ue requires you to complete 1 step before it answers the call:")
	p.expect("Connect your account")
	p.expect("host: 127.0.0.1:")
	p.expect("/connect/" + testserver.URLElicitationID)
	p.expect("Press Enter when you have finished there, or type d to decline: ")
	if strings.Contains(p.out.String(), "in your browser?") {
		t.Error("the browser was offered on a terminal without a display")
	}
	visit(t, p.out.String())
	p.expect("ue says it is done; calling it again")
	out := p.succeeds("call")
	wantContains(t, "the result", out, "connected after 2 calls")
}

// TestURLElicitationRequiredOnATerminal: a go-sdk server that answers
// -32042 until its completion URL is visited; switchboard call shows it,
// waits for the server's completion notice and calls again once. The
// history records the call as it went.
func TestURLElicitationRequiredOnATerminal(t *testing.T) {
	t.Parallel()
	cfg := urlElicitConfig(t)
	urlElicitOnPTY(t, cfg)
	r := runCLI(t, "history", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "history", r.stdout, `"status": "success"`)
}

// TestURLElicitationRequiredThroughTheDaemon: the same through a daemon:
// the URLs come back over the control socket; the completion notice
// reaches the daemon's upstream session, which withdraws the question
// and calls again.
func TestURLElicitationRequiredThroughTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := urlElicitConfig(t)
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	urlElicitOnPTY(t, cfg)
	if d.requests.Load() == before {
		t.Fatal("the daemon did not run the call")
	}
}

// TestURLElicitationRequiredWithoutATerminal: piped, the call fails with
// an error that names what is required, after a note that prints the URL
// and says how to complete it and run the command again; the history
// records elicitation_required with the server's message.
func TestURLElicitationRequiredWithoutATerminal(t *testing.T) {
	t.Parallel()
	cfg := urlElicitConfig(t)
	r := runCLI(t, "call", "--config", cfg, "ue", "connect")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr,
		"ue requires you to complete 1 step before it answers the call (there is no terminal to ask on):",
		"Connect your account", "host: 127.0.0.1:", "/connect/"+testserver.URLElicitationID,
		"Open each URL in a browser and finish there, then run the command again.",
		`requires a URL elicitation to be completed first ("Connect your account" at 127.0.0.1:`)
	if !completionURL.MatchString(r.stderr) {
		t.Errorf("the URL is not printed:\n%s", r.stderr)
	}
	r = runCLI(t, "history", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "history", r.stdout, `"error_kind": "elicitation_required"`, `Connect your account`)
	if strings.Contains(r.stdout, "/connect/") {
		t.Errorf("the history keeps the URL, which may hold a token:\n%s", r.stdout)
	}
}
