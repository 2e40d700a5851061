package config

import (
	"os"
	"path/filepath"
	"testing"
)

// testEnv is the process environment the tests see.
var testEnv = map[string]string{
	"GITHUB_TOKEN": "ghp_secret",
	"API_TOKEN":    "tok_secret",
	"API_KEY":      "key_secret",
	"HOME":         "/home/u",
	"EMPTY":        "",
	"PROCESS_VAR":  "from-process",
	// The VS Code input github-token of testdata/.vscode/mcp.json.
	"SWITCHBOARD_INPUT_GITHUB_TOKEN": "ghp_secret",
}

func testLookup(k string) (string, bool) {
	v, ok := testEnv[k]
	return v, ok
}

var testOpts = Options{LookupEnv: testLookup}

// abs returns the absolute form of a path under the package folder.
func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// writeFile writes a file in a temporary folder and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
