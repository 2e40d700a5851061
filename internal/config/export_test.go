package config

// The helpers the package's tests share, white-box (package config) and
// black-box (package config_test): exported from a _test.go file of the
// package, so that only its tests see them.

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnv is the process environment the tests see.
var TestEnv = map[string]string{
	"GITHUB_TOKEN": "ghp_secret",
	"API_TOKEN":    "tok_secret",
	"API_KEY":      "key_secret",
	"HOME":         "/home/u",
	"EMPTY":        "",
	"PROCESS_VAR":  "from-process",
	// The VS Code input github-token of testdata/.vscode/mcp.json.
	"SWITCHBOARD_INPUT_GITHUB_TOKEN": "ghp_secret",
}

// LookupTestEnv looks a variable up in TestEnv.
func LookupTestEnv(k string) (string, bool) {
	v, ok := TestEnv[k]
	return v, ok
}

// TestOpts reads a configuration with TestEnv as its environment.
var TestOpts = Options{LookupEnv: LookupTestEnv}

// Abs returns the absolute form of a path under the package folder.
func Abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// WriteFile writes a file in a temporary folder and returns its path.
func WriteFile(t *testing.T, dir, name, content string) string {
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

// IgnorePos compares configurations without the servers' positions.
var IgnorePos = cmp.Options{
	cmp.Transformer("nopos", func(s Server) Server { s.Pos = Pos{}; return s }),
}

// Update rewrites the golden files (-update) instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Golden compares got with testdata/golden/name, or rewrites it with
// -update. The absolute path of testdata is written as <testdata>.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	text := strings.ReplaceAll(string(got), Abs(t, "testdata"), "<testdata>")
	path := filepath.Join("testdata", "golden", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), text); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
