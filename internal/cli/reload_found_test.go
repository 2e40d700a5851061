package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestReloadWithoutConfigSaysWhichFileIsWhich: reload without --config
// while a daemon serves another configuration checks the file found here
// (the one the person edited), not the daemon's, and says that the daemon
// serves the other one and how to serve this one; with no file here it
// reloads what the daemon serves, as every command follows the daemon.
func TestReloadWithoutConfigSaysWhichFileIsWhich(t *testing.T) {
	t.Parallel()
	served := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	setenv(t, "XDG_CONFIG_HOME", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	empty := t.TempDir()
	chdir(t, empty)
	d := startDaemon(t, served)

	r := runCLI(t, "reload")
	wantCode(t, r, ExitOK)
	wantContains(t, "reload with no file here", r.stderr, "note: reloading what the running daemon (pid ", "serves: "+control.AbsSource(served))
	wantContains(t, "reload with no file here", r.stdout, "reloaded "+served)
	if n := d.reloads.Load(); n != 1 {
		t.Errorf("reloads: got %d, want 1", n)
	}

	dir := t.TempDir()
	found := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(found, []byte("servers:\n  - name: web\n    transport: http\n    url: http://127.0.0.1:1/mcp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chdir(t, dir)
	r = runCLI(t, "reload")
	wantCode(t, r, ExitFailure)
	wantContains(t, "reload of the file found here", r.stdout, "configuration OK: "+found+", 1 server(s)")
	wantContains(t, "reload of the file found here", r.stderr,
		"the running daemon (pid ", "serves "+control.AbsSource(served)+", not "+found+"; nothing was reloaded",
		"hint: to reload what the daemon serves, run: switchboard reload --config "+control.AbsSource(served),
		"to serve "+found+", stop the daemon (Ctrl-C where it runs, or kill ", "and run: switchboard serve\n")
	if strings.Contains(r.stderr, "not "+control.AbsSource(served)) {
		t.Errorf("reload compared the daemon's file with itself:\n%s", r.stderr)
	}
	if n := d.reloads.Load(); n != 1 {
		t.Errorf("reloads after the refused one: got %d, want 1", n)
	}
}
