package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestRelativePathMessageSaysWhereTheyStart checks that a missing relative
// cwd or env file names the folder it was looked for in, and the message
// says that folder is where relative paths start, for the user's own
// client file, a project's client file and a native file alike.
func TestRelativePathMessageSaysWhereTheyStart(t *testing.T) {
	tmp := t.TempDir()
	home, proj := filepath.Join(tmp, "home"), filepath.Join(tmp, "proj")
	userEnv := func(name string) (string, bool) {
		if name == "HOME" {
			return home, true
		}
		return "", false
	}
	write := func(path, text string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gemini := `{"mcpServers": {"a": {"command": "npx", "args": ["x"], "cwd": "./srv"}}}`
	cursor := `{"mcpServers": {"a": {"command": "npx", "args": ["x"], "envFile": ".env"}}}`
	tests := []struct {
		name, path, text, want string
	}{
		{"user gemini", filepath.Join(home, ".gemini", "settings.json"), gemini,
			"directory " + filepath.Join(proj, "srv") + " does not exist; create it, or fix the path (relative paths start at the folder Switchboard runs in, " + proj + ", as in the client, which starts its servers in the folder it has open)"},
		{"user cursor", filepath.Join(home, ".cursor", "mcp.json"), cursor,
			"env file " + filepath.Join(proj, ".env") + " does not exist; create it, or fix the path (relative paths start at the folder Switchboard runs in, " + proj + ", as in the client, which starts its servers in the folder it has open)"},
		{"project gemini", filepath.Join(tmp, "p", ".gemini", "settings.json"), gemini,
			"directory " + filepath.Join(tmp, "p", "srv") + " does not exist; create it, or fix the path (relative paths start at the project's folder, " + filepath.Join(tmp, "p") + ")"},
		{"native", filepath.Join(tmp, "n", "switchboard.yaml"), "servers:\n  - name: a\n    command: npx\n    cwd: srv\n",
			"directory " + filepath.Join(tmp, "n", "srv") + " does not exist; create it, or fix the path (relative paths start at the configuration file's folder)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(tt.path, tt.text)
			cfg, err := config.Load(path, config.Options{UserEnv: userEnv, LookupEnv: userEnv, WorkDir: proj, StateDir: t.TempDir()})
			if err != nil {
				t.Fatalf("got %v, want the file loaded with server a unable to start", err)
			}
			a, _ := cfg.Server("a")
			if len(a.CannotStart) != 1 {
				t.Fatalf("server a: got CannotStart %v, want the missing path", a.CannotStart)
			}
			var mp *config.MissingPathError
			if got := a.CannotStart[0]; !errors.As(got.Err, &mp) || !strings.Contains(got.String(), tt.want) {
				t.Errorf("got:\n%v\nwant a *MissingPathError containing:\n%s", got, tt.want)
			}
		})
	}
}
