package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConfigImportWarnsOfMissingEnvFile: config import of a Cursor file
// whose ${workspaceFolder}/.env does not exist goes through, with a
// warning on stderr naming the server and the path.
func TestConfigImportWarnsOfMissingEnvFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"mcpServers": {"api": {"command": "npx", "args": ["-y", "s"], "envFile": "${workspaceFolder}/.env"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "config", "import", p)
	wantCode(t, r, ExitOK)
	wantContains(t, "import stderr", r.stderr, "warning: ", "server api: env file "+filepath.Join(dir, ".env")+" does not exist; imported as written")
	wantContains(t, "import stdout", r.stdout, "env_file: "+filepath.Join(dir, ".env"))
}
