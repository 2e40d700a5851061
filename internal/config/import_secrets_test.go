package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestImportNotesLiteralSecrets: a header or env value whose name marks a
// credential, written in the source file as a literal, is copied (the
// import must resolve to the same servers) but noted in the output's
// head, so that the user moves it out of the file; references and values
// of names that are no credential are not noted.
func TestImportNotesLiteralSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".vscode")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mcp.json")
	const src = `{"servers": {
  "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
             "headers": {"Authorization": "Bearer abc123", "X-Trace": "on", "X-Api-Key": "${env:REMOTE_KEY}"}},
  "local": {"type": "stdio", "command": "node", "args": ["server.js"],
            "env": {"GITHUB_TOKEN": "ghp_literal", "DEBUG": "1", "OPENAI_API_KEY": ""}}
}}`
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := config.Import(file, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, line := range strings.Split(string(out), "\n") {
		if n, ok := strings.CutPrefix(line, "# note: "); ok && strings.Contains(n, "literal value") {
			notes = append(notes, n)
		}
	}
	want := []string{"remote.headers.Authorization ", "local.env.GITHUB_TOKEN "}
	if len(notes) != len(want) {
		t.Fatalf("got %d literal-secret notes, want %d (%v):\n%s", len(notes), len(want), want, out)
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w) || !strings.Contains(notes[i], "${VARIABLE}") {
			t.Errorf("note %d: got %q, want it to start with %q and say how to write a reference", i, notes[i], w)
		}
	}
	// Copied all the same: the import says what the file says.
	for _, v := range []string{"Bearer abc123", "ghp_literal", "${REMOTE_KEY}"} {
		if !strings.Contains(string(out), v) {
			t.Errorf("the import lost %q:\n%s", v, out)
		}
	}
}
