package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestMissingPathsMakeOneServerUnableToStart: in switchboard.yaml and in
// a client's file alike, a server whose env file or cwd does not exist
// no longer refuses the file: the file loads, that server carries each
// problem (position, field, message, fix) in CannotStart, and the other
// servers are as they would be without it.
func TestMissingPathsMakeOneServerUnableToStart(t *testing.T) {
	dir := t.TempDir()
	envFile, srv := filepath.Join(dir, "missing.env"), filepath.Join(dir, "srv")
	for _, tt := range []struct {
		name, file, text string
		wantFields       []string
	}{
		{"native", "switchboard.yaml", `servers:
  - name: good
    command: npx
    args: ["-y", "x"]
  - name: bad
    command: npx
    args: ["-y", "y"]
    env_file: missing.env
    cwd: srv
`, []string{"servers.bad.env_file", "servers.bad.cwd"}},
		{"claude desktop", "claude_desktop_config.json", `{"mcpServers": {
  "good": {"command": "npx", "args": ["-y", "x"]},
  "bad": {"command": "npx", "args": ["-y", "y"], "envFile": "` + envFile + `", "cwd": "` + srv + `"}
}}`, []string{"mcpServers.bad.envFile", "mcpServers.bad.cwd"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := config.WriteFile(t, dir, tt.file, tt.text)
			cfg, err := config.Load(p, config.TestOpts)
			if err != nil {
				t.Fatalf("Load refused the whole file: %v", err)
			}
			good, _ := cfg.Server("good")
			if len(good.CannotStart) > 0 {
				t.Errorf("good: got CannotStart %v, want none", good.CannotStart)
			}
			bad, ok := cfg.Server("bad")
			if !ok || len(bad.CannotStart) != 2 {
				t.Fatalf("bad: got %v, want two problems", bad.CannotStart)
			}
			for i, want := range []struct{ field, msg string }{
				{tt.wantFields[0], "env file " + envFile + " does not exist"},
				{tt.wantFields[1], "directory " + srv + " does not exist"},
			} {
				pr := bad.CannotStart[i]
				var mp *config.MissingPathError
				if pr.Field != want.field || pr.Message != want.msg || !strings.HasPrefix(pr.Fix, "create it, or fix the path") ||
					pr.Pos.File != p || pr.Pos.Line == 0 || !errors.As(pr.Err, &mp) || mp.Server != "bad" {
					t.Errorf("problem %d: got %+v, want field %s, message %q, a fix, the position in %s and a *MissingPathError of bad", i, pr, want.field, want.msg, p)
				}
			}
		})
	}
}

// TestMissingPathBesideAnotherProblemRefusesTheFile: a missing path sets
// a server aside only when nothing else is wrong. When the same server,
// or the file, has any other problem, Load refuses the file as before and
// lists every problem, the missing path too.
func TestMissingPathBesideAnotherProblemRefusesTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, text, other string }{
		{"same server", `servers:
  - name: bad
    command: npx
    args: ["-y", "y"]
    cwd: srv
    request_timeout: 1h
`, "servers.bad.request_timeout"},
		{"another server", `servers:
  - name: bad
    command: npx
    cwd: srv
  - name: worse
    command: npx
    encoding: latin1
`, "servers.worse.encoding"},
		{"the file", `servers:
  - name: bad
    command: npx
    cwd: srv
  - name: bad
    command: npx
`, "duplicate server name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := config.WriteFile(t, dir, "switchboard.yaml", tt.text)
			_, err := config.Load(p, config.TestOpts)
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want the file refused", err)
			}
			if !strings.Contains(err.Error(), "servers.bad.cwd: directory "+filepath.Join(dir, "srv")+" does not exist") || !strings.Contains(err.Error(), tt.other) {
				t.Errorf("got:\n%v\nwant both the missing cwd and %q", err, tt.other)
			}
		})
	}
}
