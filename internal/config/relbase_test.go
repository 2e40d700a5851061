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

// TestAbsolutePathMessageSaysNothingOfRelativePaths: a missing env file,
// cwd or root written as an absolute path (or with ~/, or as a file://
// URI), and a ${file:PATH} that cannot be read, are fixed by creating the
// path or fixing it; where relative paths start would be beside the point,
// and is not said.
func TestAbsolutePathMessageSaysNothingOfRelativePaths(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	env := func(name string) (string, bool) {
		if name == "HOME" {
			return home, true
		}
		return "", false
	}
	missing := filepath.Join(tmp, "missing")
	load := func(name, text string) (*config.Config, error) {
		t.Helper()
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return config.Load(path, config.Options{UserEnv: env, LookupEnv: env, WorkDir: tmp, StateDir: t.TempDir()})
	}
	cfg, err := load("switchboard.yaml", "servers:\n  - name: a\n    command: npx\n    env_file: "+missing+".env\n    cwd: "+missing+
		"\n    roots: [~/nope, file://"+missing+"-root]\n")
	if err != nil {
		t.Fatalf("got %v, want the file loaded with server a unable to start", err)
	}
	a, _ := cfg.Server("a")
	cursor, err := load("mcp.json", `{"mcpServers": {"a": {"command": "npx", "args": ["x"], "envFile": "`+missing+`.env"}}}`)
	if err != nil {
		t.Fatalf("got %v, want the file loaded with server a unable to start", err)
	}
	c, _ := cursor.Server("a")
	ps := append(a.CannotStart, c.CannotStart...)
	if len(ps) != 5 {
		t.Fatalf("got %v, want the env file, the cwd and the two roots of switchboard.yaml and the env file of mcp.json", ps)
	}
	for _, p := range ps {
		if p.Fix != "create it, or fix the path" {
			t.Errorf("%s: got the fix %q, want %q", p.Field, p.Fix, "create it, or fix the path")
		}
	}

	_, err = load("file.yaml", "servers:\n  - name: a\n    command: npx\n    env: {KEY: \"${file:"+missing+".key}\"}\n")
	if err == nil || !strings.Contains(err.Error(), "create the file, or fix the path") || strings.Contains(err.Error(), "relative paths") {
		t.Errorf("${file:%s.key}: got %v, want to create the file or fix the path, with nothing of relative paths", missing, err)
	}
}
