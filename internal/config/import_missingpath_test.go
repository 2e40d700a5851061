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
// of the output; loading the imported file then names it too.
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
	// The imported file names the missing paths when it is loaded.
	native := config.WriteFile(t, dir, "switchboard.yaml", string(out))
	_, err = config.Load(native, config.TestOpts)
	var mp *config.MissingPathError
	if !errors.As(err, &mp) || !strings.Contains(err.Error(), "servers.api.env_file: env file "+envFile+" does not exist") {
		t.Errorf("loading the imported file: got %v, want the missing env file of api", err)
	}
}
