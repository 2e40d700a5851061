package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommandsUseTheirWorkingDirectory: a command finds ./switchboard.yaml,
// and reads a relative FILE or --config, in the working directory it is
// run in (chdir), which need not be the process's.
func TestCommandsUseTheirWorkingDirectory(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, "XDG_CONFIG_HOME", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	setenv(t, envNoDaemon, "1")
	work := t.TempDir()
	chdir(t, work)
	server := func(name string) string {
		return "  - name: " + name + "\n    transport: http\n    url: http://127.0.0.1:9/mcp\n"
	}
	found := filepath.Join(work, "switchboard.yaml")
	if err := os.WriteFile(found, []byte("servers:\n"+server("a")+server("b")), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(work, "sub", "other.yaml")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("servers:\n"+server("c")), 0o600); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "config", "validate")
	wantCode(t, r, ExitOK)
	wantContains(t, "config validate", r.stdout, "ok: "+found+" (", "2 server(s)")
	for _, args := range [][]string{
		{"config", "validate", filepath.Join("sub", "other.yaml")},
		{"config", "validate", "--config", filepath.Join("sub", "other.yaml")},
	} {
		r = runCLI(t, args...)
		wantCode(t, r, ExitOK)
		wantContains(t, "config validate", r.stdout, "ok: "+other+" (", "1 server(s)")
	}
}
