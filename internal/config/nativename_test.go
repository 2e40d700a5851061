package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestNativeNameInAClientShape: a file named switchboard.yaml whose
// servers are a mapping is read as VS Code's format, as documented; the
// reader is told so, as a warning — also when a server cannot start (an
// untrusted client file may not run node), for that is what a native file
// would not have had. A client's own file name, and
// a native file, get no such note.
func TestNativeNameInAClientShape(t *testing.T) {
	dir := t.TempDir()
	const note = "switchboard.yaml is read as VS Code's format, not as a native switchboard.yaml"
	const fix = "list servers as a sequence (servers: then - name: NAME per server)"

	loads := "servers:\n  mem:\n    command: npx\n    args: [x]\n"
	cfg, err := config.Parse(filepath.Join(dir, "switchboard.yaml"), []byte(loads), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), note) || !strings.Contains(cfg.Warnings[0].String(), fix) {
		t.Errorf("warnings: got %v, want one saying %q and %q", cfg.Warnings, note, fix)
	}

	// node is refused: mem cannot start, and the note is there too.
	refused := "servers:\n  mem:\n    command: node\n    args: [x.js]\n"
	cfg, err = config.Parse(filepath.Join(dir, "switchboard.yaml"), []byte(refused), config.TestOpts)
	if err != nil || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), note) ||
		startErr(cfg, nil) == nil || !strings.Contains(startErr(cfg, nil).Error(), `command "node" is not allowed`) {
		t.Errorf("got %v (warnings %v), want mem unable to start for the refusal of node, and the note %q", startErr(cfg, err), cfg.Warnings, note)
	}

	for _, tc := range []struct{ name, src string }{
		{filepath.Join(dir, ".vscode", "mcp.json"), `{"servers": {"mem": {"command": "npx", "args": ["x"]}}}`},
		{filepath.Join(dir, "switchboard.yaml"), "servers:\n  - name: mem\n    command: npx\n    args: [x]\n"},
	} {
		cfg, err := config.Parse(tc.name, []byte(tc.src), config.TestOpts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range cfg.Warnings {
			if strings.Contains(w.String(), "is read as") {
				t.Errorf("%s: got the note %q", tc.name, w)
			}
		}
	}
}
