package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestLogoutHintOnce checks the exact output of every place the CLI hints
// `switchboard auth logout`: `auth status` for a stored sign-in whose
// server is no longer configured (table and --json), and `auth logout`
// itself, signed in and not. A trial once saw the hint twice; it names
// the command once in each.
func TestLogoutHintOnce(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, true)
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, "BROWSER", browserScript(t))
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("servers:\n  - name: demo\n    transport: http\n    url: %s\n", ex.URL))
	r := runCLI(t, "auth", "login", "demo", "--config", cfg)
	wantCode(t, r, ExitOK)

	// demo is no longer configured; its sign-in is still stored.
	write("servers: []\n")
	const hint = "switchboard auth logout demo"
	r = runCLI(t, "auth", "status", "--config", cfg)
	wantCode(t, r, ExitOK)
	// The sign-in still works, but its server is gone: the note says so
	// and names the command that forgets it, once.
	if n := strings.Count(r.stdout+r.stderr, "auth logout"); n != 1 {
		t.Errorf("auth status (signed in, unconfigured): the logout hint %d times, want once:\n%s%s", n, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "demo ") || !strings.HasSuffix(lines[1], "the server is no longer configured; run: "+hint) {
		t.Errorf("auth status: got\n%s\nwant the header and one row for demo ending with its note and %q", r.stdout, hint)
	}
	r = runCLI(t, "auth", "status", "--json", "--config", cfg)
	wantCode(t, r, ExitOK)
	var sts []oauth.Status
	if err := json.Unmarshal([]byte(r.stdout), &sts); err != nil || len(sts) != 1 {
		t.Fatalf("auth status --json: %v\n%s", err, r.stdout)
	}
	if st := sts[0]; st.Command != hint || strings.Contains(st.Problem, "logout") || strings.Count(r.stdout, "auth logout") != 1 {
		t.Errorf("auth status --json: got command %q and problem %q, want the command %q once and a problem without it", st.Command, st.Problem, hint)
	}

	r = runCLI(t, "auth", "logout", "demo", "--config", cfg)
	wantCode(t, r, ExitOK)
	// The demo offers no revocation (RFC 7009): one line says so.
	want := regexp.MustCompile(`^Signed out of demo: the tokens were forgotten; the authorization server offers no revocation \(RFC 7009\): the access token stays valid until it expires at \S+\.\n$`)
	if !want.MatchString(r.stdout) || r.stderr != "" {
		t.Errorf("auth logout: got stdout %q, stderr %q, want one line matching %s", r.stdout, r.stderr, want)
	}
	r = runCLI(t, "auth", "logout", "demo", "--config", cfg)
	wantCode(t, r, ExitOK)
	if r.stdout != "demo was not signed in.\n" || r.stderr != "" {
		t.Errorf("auth logout again: got stdout %q, stderr %q, want %q", r.stdout, r.stderr, "demo was not signed in.\n")
	}
	r = runCLI(t, "auth", "status", "--config", cfg)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stdout+r.stderr, "logout") {
		t.Errorf("auth status after logout: got %q, want no sign-in and no logout hint", r.stdout+r.stderr)
	}
}
