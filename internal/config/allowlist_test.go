package config

import (
	"errors"
	"strings"
	"testing"
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

		// npx: options before the package run shell commands.
		{"npx -c", "npx", []string{"-c", "echo hi"}, `npx argument "-c" is not allowed: it runs a shell command`},
		{"npx --call", "npx", []string{"--call", "sh"}, `npx argument "--call" is not allowed: it runs a shell command`},
		{"npx --call=", "npx", []string{"--call=sh -c id"}, `npx argument "--call=sh -c id" is not allowed: it runs a shell command`},
		{"npx -c=", "npx", []string{"-c=id"}, `npx argument "-c=id" is not allowed: it runs a shell command`},
		{"npx -yc cluster", "npx", []string{"-yc", "id"}, `npx argument "-yc" is not allowed: it includes -c, which runs a shell command`},
		{"npx -c after -y", "npx", []string{"-y", "-c", "id"}, `npx argument "-c" is not allowed: it runs a shell command`},
		{"npx -c after a valued option", "npx", []string{"--registry", "https://r.example.com", "-c", "id"}, `npx argument "-c" is not allowed: it runs a shell command`},
		{"npx --shell", "npx", []string{"--shell", "bash", "pkg"}, `npx argument "--shell" is not allowed: it runs commands through a shell`},
		{"npx --shell-auto-fallback", "npx", []string{"--shell-auto-fallback", "pkg"}, `npx argument "--shell-auto-fallback" is not allowed: it runs commands through a shell`},
		{"npx --script-shell", "npx", []string{"--script-shell=/bin/sh", "pkg"}, `npx argument "--script-shell=/bin/sh" is not allowed: it runs commands through a shell`},
		{"npx package's own -c", "npx", []string{"-y", "some-server", "-c", "config.json"}, ""},
		{"npx after --", "npx", []string{"--", "pkg", "-c", "x"}, ""},
		{"npx -p then package", "npx", []string{"-p", "pkg", "bin", "-c", "x"}, ""},
		{"npx by absolute path", "/opt/npx", []string{"-c", "id"}, `npx argument "-c" is not allowed: it runs a shell command`},

		// docker run: options that loosen isolation.
		{"docker plain", "docker", []string{"run", "-i", "--rm", "mcp/github"}, ""},
		{"docker --privileged", "docker", []string{"run", "-i", "--privileged", "img"}, `docker argument "--privileged" is not allowed: it gives the container full access to the host`},
		{"docker --privileged=true", "docker", []string{"run", "--privileged=true", "img"}, `docker argument "--privileged=true" is not allowed: it gives the container full access to the host`},
		{"docker --privileged=false", "docker", []string{"run", "--privileged=false", "img"}, ""},
		{"docker -v /:/x", "docker", []string{"run", "-v", "/:/x", "img"}, `docker argument "-v /:/x" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker -v /:/x:ro", "docker", []string{"run", "-v", "/:/x:ro", "img"}, `docker argument "-v /:/x:ro" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker --volume=/:/x", "docker", []string{"run", "--volume=/:/x", "img"}, `docker argument "--volume=/:/x" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker --volume /", "docker", []string{"run", "--volume", "/:/host", "img"}, `docker argument "--volume /:/host" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker -v attached", "docker", []string{"run", "-v/:/x", "img"}, `docker argument "-v/:/x" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker -itv cluster", "docker", []string{"run", "-itv", "/:/x", "img"}, `docker argument "-itv /:/x" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker -v /. ", "docker", []string{"run", "-v", "/./:/x", "img"}, `docker argument "-v /./:/x" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker -v subdir", "docker", []string{"run", "-v", "/home/u/data:/data", "img"}, ""},
		{"docker -v anonymous /", "docker", []string{"run", "-v", "/", "img"}, ""},
		{"docker --mount source=/", "docker", []string{"run", "--mount", "type=bind,source=/,target=/h", "img"}, `docker argument "--mount type=bind,source=/,target=/h" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker --mount=src=/", "docker", []string{"run", "--mount=type=bind,src=/,dst=/h", "img"}, `docker argument "--mount=type=bind,src=/,dst=/h" is not allowed: it mounts the host's root filesystem into the container`},
		{"docker --mount subdir", "docker", []string{"run", "--mount", "type=bind,source=/data,target=/d", "img"}, ""},
		{"docker --pid=host", "docker", []string{"run", "--pid=host", "img"}, `docker argument "--pid=host" is not allowed: it shares the host's process namespace with the container`},
		{"docker --pid host", "docker", []string{"run", "--pid", "host", "img"}, `docker argument "--pid host" is not allowed: it shares the host's process namespace with the container`},
		{"docker --cap-add=ALL", "docker", []string{"run", "--cap-add=ALL", "img"}, `docker argument "--cap-add=ALL" is not allowed: it gives the container (nearly) every capability of root on the host`},
		{"docker --cap-add all", "docker", []string{"run", "--cap-add", "all", "img"}, `docker argument "--cap-add all" is not allowed: it gives the container (nearly) every capability of root on the host`},
		{"docker --cap-add SYS_ADMIN", "docker", []string{"run", "--cap-add=CAP_SYS_ADMIN", "img"}, `docker argument "--cap-add=CAP_SYS_ADMIN" is not allowed: it gives the container (nearly) every capability of root on the host`},
		{"docker --cap-add NET_ADMIN", "docker", []string{"run", "--cap-add=NET_ADMIN", "img"}, ""},
		{"docker value hides an option", "docker", []string{"run", "--unknown-flag", "--privileged", "img"}, `docker argument "--privileged" is not allowed: it gives the container full access to the host`},
		{"docker after valued option", "docker", []string{"run", "--network", "host", "--privileged", "img"}, `docker argument "--privileged" is not allowed: it gives the container full access to the host`},
		{"docker global options", "docker", []string{"--context", "x", "run", "--privileged", "img"}, `docker argument "--privileged" is not allowed: it gives the container full access to the host`},
		{"docker container run", "docker", []string{"container", "run", "--pid=host", "img"}, `docker argument "--pid=host" is not allowed: it shares the host's process namespace with the container`},
		{"docker create", "docker", []string{"create", "--privileged", "img"}, `docker argument "--privileged" is not allowed: it gives the container full access to the host`},
		{"docker container's own args", "docker", []string{"run", "-i", "img", "--privileged", "-v", "/:/x"}, ""},
		{"docker other subcommand", "docker", []string{"mcp", "gateway", "run"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCommand(tt.command, tt.args, allowed)
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
			var na *CommandNotAllowedError
			var ua *UnsafeArgumentError
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
			`testdata/claude.json:1:34: mcpServers.a.command: command "python" is not allowed: this file is not trusted, and an untrusted file may run only npx, uvx, docker; if you wrote or reviewed it, run: switchboard config trust <testdata>/claude.json`,
		},
		{
			"testdata/s.yaml", "security:\n  allowed_commands: [python]\nservers:\n  - name: a\n    command: python\n    args: [-c, ok]\n",
			``,
		},
	}
	for _, tt := range tests {
		_, err := Parse(tt.file, []byte(tt.src), testOpts)
		got := ""
		if err != nil {
			got = strings.ReplaceAll(err.Error(), abs(t, "testdata"), "<testdata>")
		}
		if got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// Docker launches built from the docker: form pass the allowlist.
func TestDockerFormIsAllowed(t *testing.T) {
	src := "servers:\n  - name: a\n    docker: {image: mcp/x, container_name: x, command: [--privileged], ports: {\"80\": 8080}}\n    env: {T: v}\n"
	cfg, err := Parse("t.yaml", []byte(src), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := "run --rm -i --name x -p 127.0.0.1:8080:80 -e T mcp/x --privileged"
	if got := strings.Join(cfg.Servers[0].Args, " "); got != want {
		t.Errorf("got args %q, want %q", got, want)
	}
}
