package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestCheckCommand(t *testing.T) {
	allowed := []string{"npx", "uvx", "docker", "node", "/opt/bin/server", "/opt/npx"}
	tests := []struct {
		name    string
		command string
		args    []string
		want    string // "" for allowed; else the error text
	}{
		{"npx", "npx", []string{"-y", "@modelcontextprotocol/server-github"}, ""},
		{"uvx", "uvx", []string{"mcp-server-time"}, ""},
		{"extended bare name", "node", []string{"server.js"}, ""},
		{"listed absolute path", "/opt/bin/server", nil, ""},
		{"listed absolute path, uncleaned", "/opt/bin/../bin/server", nil, ""},
		{"not listed", "python", []string{"-m", "server"}, `command "python" is not allowed: it is not in the allowlist (npx, uvx, docker, node, /opt/bin/server, /opt/npx)`},
		{"empty", "", nil, `command "" is not allowed: the command is empty`},
		{"relative ./", "./server", nil, `command "./server" is not allowed: relative paths are not allowed`},
		{"relative dir", "bin/server", nil, `command "bin/server" is not allowed: relative paths are not allowed`},
		{"absolute not listed", "/usr/bin/npx", nil, `command "/usr/bin/npx" is not allowed: absolute paths must be listed under security.allowed_commands`},
		{"bare name does not allow a path", "/usr/bin/node", nil, `command "/usr/bin/node" is not allowed: absolute paths must be listed under security.allowed_commands`},

		{"command line", "npx -y", nil, `command "npx -y" is not allowed: it is a command line, not one program: nothing runs through a shell`},

		// The launch rules apply after the allowlist (launchpolicy_test.go
		// has them all).
		{"npx -c", "npx", []string{"-c", "echo hi"}, `npx argument "-c echo hi" is refused: it runs a shell command instead of a package`},
		{"npx by absolute path", "/opt/npx", []string{"-yc", "id"}, `npx argument "-yc id" is refused: it runs a shell command instead of a package`},
		{"docker -v /:/x", "docker", []string{"run", "-v", "/:/x", "img"}, `docker argument "-v /:/x" is refused: it mounts the host's root filesystem into the container`},
		{"docker plain", "docker", []string{"run", "-i", "--rm", "mcp/github"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := config.CheckCommand(tt.command, tt.args, allowed)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if err == nil {
				return
			}
			var na *config.CommandNotAllowedError
			var ua *config.UnsafeArgumentError
			switch {
			case errors.As(err, &na):
				if !strings.Contains(tt.want, "is not allowed: ") || na.Command != tt.command {
					t.Errorf("got %+v for command %q", na, tt.command)
				}
			case errors.As(err, &ua):
				if ua.Fix == "" {
					t.Error("UnsafeArgumentError has no Fix")
				}
				if ua.Index < 0 || ua.Index >= len(tt.args) || !strings.HasPrefix(ua.Arg, tt.args[ua.Index]) {
					t.Errorf("got Index %d, Arg %q; not an argument of %q", ua.Index, ua.Arg, tt.args)
				}
			default:
				t.Errorf("got %T, want a typed error", err)
			}
		})
	}
}

func TestAllowlistFixes(t *testing.T) {
	tests := []struct {
		file, src, want string
	}{
		{
			"testdata/s.yaml", "servers:\n  - name: a\n    command: python\n",
			`testdata/s.yaml:3:14: servers.a.command: command "python" is not in the allowlist (npx, uvx, docker); add it under security.allowed_commands`,
		},
		{
			"testdata/claude.json", `{"mcpServers": {"a": {"command": "python"}}}`,
			`testdata/claude.json:1:34: mcpServers.a.command: command "python" is not allowed: this file is not trusted, and an untrusted file may run only npx, uvx, docker; if you wrote or reviewed it, run: switchboard config trust <testdata>/claude.json --yes`,
		},
		{
			"testdata/s.yaml", "security:\n  allowed_commands: [python]\nservers:\n  - name: a\n    command: python\n    args: [-c, ok]\n",
			``,
		},
	}
	for _, tt := range tests {
		err := startErr(config.Parse(tt.file, []byte(tt.src), config.TestOpts))
		got := ""
		if err != nil {
			got = strings.ReplaceAll(err.Error(), config.Abs(t, "testdata"), "<testdata>")
		}
		if got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// Docker launches built from the docker: form pass the allowlist.
func TestDockerFormIsAllowed(t *testing.T) {
	src := "servers:\n  - name: a\n    docker: {image: mcp/x, container_name: x, command: [--privileged], ports: {\"80\": 8080}}\n    env: {T: v}\n"
	cfg, err := config.Parse("t.yaml", []byte(src), config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := "run --rm -i --name x -p 127.0.0.1:8080:80 -e T mcp/x --privileged"
	if got := strings.Join(cfg.Servers[0].Args, " "); got != want {
		t.Errorf("got args %q, want %q", got, want)
	}
}
