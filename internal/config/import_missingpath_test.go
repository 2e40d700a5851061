package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestImportMissingEnvFileAndCwd: a client's file whose envFile or cwd
// does not exist (Cursor's ${workspaceFolder}/.env imported from a folder
// without .env) is imported, not refused: each such server is kept as
// written and named, with the missing path, in a warning and in a note
// of the output; loading the imported file then shows each such server
// unable to start, naming its path, and the others as they are.
func TestImportMissingEnvFileAndCwd(t *testing.T) {
	dir := t.TempDir()
	p := config.WriteFile(t, dir, ".cursor/mcp.json", `{"mcpServers": {
  "api": {"command": "npx", "args": ["-y", "some-server"], "envFile": "${workspaceFolder}/.env"},
  "files": {"command": "npx", "args": ["-y", "x"], "cwd": "./srv"},
  "ok": {"command": "npx", "args": ["-y", "y"]}
}}`)
	envFile, srv := filepath.Join(dir, ".env"), filepath.Join(dir, "srv")
	out, warnings, err := config.ImportReport(p, config.TestOpts)
	if err != nil {
		t.Fatalf("import refused the file: %v", err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, w.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"mcpServers.api.envFile: server api: env file " + envFile + " does not exist; imported as written",
		"mcpServers.files.cwd: server files: directory " + srv + " does not exist; imported as written",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings:\n%s\nwant one containing %q", text, want)
		}
	}
	if len(warnings) != 2 {
		t.Errorf("got %d warnings, want 2:\n%s", len(warnings), text)
	}
	for _, want := range []string{
		"# note: server api: env file " + envFile + " does not exist",
		"env_file: " + envFile,
		"cwd: " + srv,
		"- name: ok",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output:\n%s\nwant it to contain %q", out, want)
		}
	}
	// The imported file loads; the servers whose paths are missing cannot
	// start, each naming its path.
	native := config.WriteFile(t, dir, "switchboard.yaml", string(out))
	cfg, err := config.Load(native, config.TestOpts)
	if err != nil {
		t.Fatalf("loading the imported file: %v", err)
	}
	for name, want := range map[string]string{
		"api":   "servers.api.env_file: env file " + envFile + " does not exist",
		"files": "servers.files.cwd: directory " + srv + " does not exist",
		"ok":    "",
	} {
		s, _ := cfg.Server(name)
		var mp *config.MissingPathError
		switch {
		case want == "" && len(s.CannotStart) > 0:
			t.Errorf("server %s: got CannotStart %v, want none", name, s.CannotStart)
		case want != "" && (len(s.CannotStart) != 1 || !errors.As(s.CannotStart[0].Err, &mp) || !strings.Contains(s.CannotStart[0].String(), want)):
			t.Errorf("server %s: got CannotStart %v, want the *MissingPathError %q", name, s.CannotStart, want)
		}
	}
}
