package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// FuzzLaunchPolicy feeds the launch policy argument vectors and checks:
//
//   - it never panics, and every refusal names an argument of the launch,
//     a name launch.allow accepts, and a one-line reason;
//   - allowing by name what it refused allows the launch: the names are
//     what widens it;
//   - what it accepts is safe by a reading of its own: for docker, pflag —
//     docker's own parser — with docker's option definitions (testdata)
//     finds no refused construct; for npx and uvx every option before the
//     package is one of the few known to be safe and the package comes
//     from the registry;
//   - a refused construct, written in any spelling the launcher accepts
//     (--net=host, --net host, --network=HOST, -itv /:/x, -v=/:/x,
//     ---call=x, -yc, --node-opt, -qp/bin/sh, LD_PRELOAD in any case, ...)
//     among allowed options, is refused.
//
// The input picks a launcher, a generated construct and spelling (choice),
// and a raw vector (arguments separated by NUL).
func FuzzLaunchPolicy(f *testing.F) {
	dir := f.TempDir()
	oracle := newDockerOracle(f, dir)
	for _, s := range launchSeeds {
		f.Add(s.launcher, s.choice, strings.Join(s.args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, which uint8, choice uint16, raw string) {
		launcher := launchers[int(which)%len(launchers)]
		var args []string
		if raw != "" {
			args = strings.Split(raw, "\x00")
		}
		p := LaunchPolicy{Allowed: DefaultAllowedCommands, Dir: dir, WorkDir: dir}
		srv := Server{Command: launcher, Args: args}
		names := checkRefusals(t, p, srv)
		if len(names) > 0 {
			p2 := p
			p2.Allow = names
			if again := checkRefusals(t, p2, srv); len(again) > 0 {
				t.Fatalf("%s %q: allowing %v still refuses %v", launcher, args, names, again)
			}
		} else {
			var why string
			switch launcher {
			case launcherDocker:
				why = oracle.unsafe(args)
			case launcherNpx:
				why = npxUnsafe(args)
			case launcherUvx:
				why = uvxUnsafe(args)
			}
			if why != "" {
				t.Fatalf("%s %q was accepted, but runs %s", launcher, args, why)
			}
		}

		g := generateLaunch(launcher, choice)
		got := checkRefusals(t, p, g.srv)
		if len(got) == 0 {
			t.Fatalf("%s %q env %v (%s) was accepted; want it refused", g.srv.Command, g.srv.Args, g.srv.Env, g.what)
		}
		if g.rule != "" && !slices.ContainsFunc(got, func(n string) bool { return strings.EqualFold(n, g.rule) }) {
			t.Fatalf("%s %q env %v (%s): got refusals %v, want %s among them", g.srv.Command, g.srv.Args, g.srv.Env, g.what, got, g.rule)
		}
		if launcher == launcherDocker && len(g.srv.Env) == 0 {
			if why := oracle.unsafe(g.srv.Args); why == "" {
				t.Fatalf("generated %q (%s) is safe to docker's own parser: the generator is wrong", g.srv.Args, g.what)
			}
		}
	})
}

// checkRefusals runs the policy, checks that its errors are well formed,
// and returns the names that would allow them.
func checkRefusals(t *testing.T, p LaunchPolicy, srv Server) []string {
	t.Helper()
	var names []string
	for _, err := range p.CheckServer(srv) {
		var ua *UnsafeArgumentError
		var ue *UnsafeEnvError
		switch {
		case errors.As(err, &ua):
			if ua.Index < -1 || ua.Index >= len(srv.Args) || ua.Index >= 0 && !strings.HasPrefix(ua.Arg, srv.Args[ua.Index]) {
				t.Fatalf("%q: refusal at %d (%q) is not an argument", srv.Args, ua.Index, ua.Arg)
			}
			if !validAllowName(ua.Rule) || ua.Reason == "" || strings.Contains(ua.Reason, "\n") || ua.Fix == "" {
				t.Fatalf("%q: malformed refusal %+v", srv.Args, ua)
			}
			names = append(names, ua.Rule)
		case errors.As(err, &ue):
			if !validAllowName(ue.Rule) || ue.Reason == "" {
				t.Fatalf("%v: malformed refusal %+v", srv.Env, ue)
			}
			names = append(names, ue.Rule)
		default:
			t.Fatalf("%s %q: got %T %v", srv.Command, srv.Args, err, err)
		}
	}
	return names
}

// npxSafeKeys are npm settings an accepted npx vector may set.
var npxSafeKeys = map[string]bool{
	"y": true, "yes": true, "no": true, "no-install": true, "q": true, "quiet": true, "silent": true, "s": true,
	"d": true, "dd": true, "ddd": true, "verbose": true, "loglevel": true, "prefer-offline": true, "prefer-online": true,
	"offline": true, "ignore-scripts": true, "no-audit": true, "no-fund": true, "no-update-notifier": true,
	"no-progress": true, "color": true, "no-color": true, "legacy-peer-deps": true,
}

// registryPackage is an independent, plain reading of "a package from the
// registry": [@scope/]name[@version], no path, URL, git or file spec, no
// tarball, and not one of the runners.
func registryPackage(spec string) bool {
	rest := spec
	if strings.HasPrefix(rest, "@") {
		scope, name, ok := strings.Cut(rest[1:], "/")
		if !ok || scope == "" {
			return false
		}
		rest = name
	}
	name, _, _ := strings.Cut(rest, "@")
	lower := strings.ToLower(spec)
	switch {
	case name == "" || strings.ContainsAny(rest, `/\:#`) || strings.ContainsAny(spec, `\:#`):
		return false
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~") || strings.HasPrefix(name, "-"):
		return false
	case strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar") || strings.HasSuffix(lower, ".tar.gz"):
		return false
	}
	return !slices.Contains(npxRunners, strings.ToLower(name))
}

// npxUnsafe is an independent reading of npx arguments: what an accepted
// vector runs that the policy refuses, or "".
func npxUnsafe(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		pkg := ""
		switch {
		case a == "--":
			if i+1 == len(args) {
				return ""
			}
			pkg = args[i+1]
		case !strings.HasPrefix(a, "-"):
			pkg = a
		default:
			key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case key == "node-options" && safeNodeOptions(val) && hasVal:
			case npxSafeKeys[key]:
			case key != "" && strings.Trim(key, "yqsd") == "":
			default:
				return "npm setting " + key
			}
			if key == "loglevel" && !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			continue
		}
		if !registryPackage(pkg) {
			return "package " + pkg
		}
		return ""
	}
	return ""
}

var (
	uvxSafeFlags  = map[string]bool{"--quiet": true, "--verbose": true, "--isolated": true, "--refresh": true, "--reinstall": true, "--upgrade": true, "--offline": true, "--no-cache": true, "--no-progress": true, "--native-tls": true, "--no-config": true, "--no-env-file": true, "--no-python-downloads": true, "--managed-python": true, "--no-managed-python": true, "--no-build": true, "--no-binary": true, "--no-sources": true, "--show-resolution": true, "--no-index": true, "--compile-bytecode": true, "--help": true, "--version": true}
	uvxSafeValued = map[string]bool{"--refresh-package": true, "--reinstall-package": true, "--upgrade-package": true, "--color": true, "--prerelease": true, "--resolution": true, "--exclude-newer": true, "--python": true, "--python-preference": true, "--link-mode": true}
	uvxTool       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._, -]*\])?(@[A-Za-z0-9.!+_-]+)?$`)
)

// uvxUnsafe is an independent reading of uvx arguments.
func uvxUnsafe(args []string) string {
	python := func(v string) string {
		if strings.ContainsAny(v, `/\`) || v == "" || !regexp.MustCompile(`(?i)^(cpython|pypy|graalpy|pyodide|python|cp|pp|gp)?[@-]?[0-9<>=!~., ]*[0-9a-z]*$`).MatchString(v) {
			return "interpreter " + v
		}
		return ""
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		tool := ""
		switch {
		case a == "--":
			if i+1 == len(args) {
				return ""
			}
			tool = args[i+1]
		case !strings.HasPrefix(a, "-") || a == "-":
			tool = a
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			switch {
			case uvxSafeFlags[name] && !hasVal:
			case uvxSafeValued[name]:
				if !hasVal {
					if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
						return "" // clap wants a value, and takes none that starts with -: uv refuses it
					}
					i++
					val = args[i]
				}
				if name == "--python" {
					if why := python(val); why != "" {
						return why
					}
				}
			default:
				return "uv option " + name
			}
			continue
		default:
			for j := 1; j < len(a); j++ {
				switch c := a[j]; c {
				case 'q', 'v', 'U', 'n', 'h', 'V':
					continue
				case 'p', 'P':
					val := strings.TrimPrefix(a[j+1:], "=")
					if j+1 == len(a) {
						if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
							return "" // uv refuses it (see above)
						}
						i++
						val = args[i]
					}
					if c == 'p' {
						if why := python(val); why != "" {
							return why
						}
					}
				default:
					return "uv option -" + string(c)
				}
				break
			}
			continue
		}
		name := strings.ToLower(regexp.MustCompile(`[\[@].*$`).ReplaceAllString(tool, ""))
		switch {
		case !uvxTool.MatchString(tool):
			return "tool " + tool + " from outside the index"
		case regexp.MustCompile(`^(python|pythonw|cpython|pypy|graalpy|pyodide)[0-9.]*t?(-[0-9].*)?$`).MatchString(name):
			return "interpreter " + tool
		case slices.Contains(uvxRunners, normalizePyName(name)):
			return "runner " + tool
		}
		return ""
	}
	return ""
}

// generated is a launch with a refused construct in it.
type generated struct {
	srv  Server
	rule string // the rule it must be refused by, or "" for any
	what string
}

// A construct a generator writes: an option and its value, the rule that
// refuses it, and the spellings it has.
type construct struct {
	long, short, value, rule string
	bool                     bool // a flag (--privileged), whose value is true
	foldCase                 bool // the launcher reads the value in any case
}

var dockerConstructs = []construct{
	{long: "net", value: "host", rule: "docker.network-host", foldCase: true},
	{long: "network", value: "host", rule: "docker.network-host", foldCase: true},
	{long: "network", value: "name=host,alias=x", rule: "docker.network-host"},
	{long: "network", value: `"name=host"`, rule: "docker.network-host"},
	{long: "network", value: "container:db", rule: "docker.network-container"},
	{long: "privileged", bool: true, rule: "docker.privileged"},
	{long: "pid", value: "host", rule: "docker.pid", foldCase: true},
	{long: "pid", value: "container:x", rule: "docker.pid"},
	{long: "ipc", value: "host", rule: "docker.ipc", foldCase: true},
	{long: "userns", value: "host", rule: "docker.userns", foldCase: true},
	{long: "uts", value: "host", rule: "docker.uts", foldCase: true},
	{long: "cgroupns", value: "host", rule: "docker.cgroupns", foldCase: true},
	{long: "cap-add", value: "SYS_ADMIN", rule: "docker.cap-add"},
	{long: "device", value: "/dev/sda", rule: "docker.device"},
	{long: "gpus", value: "all", rule: "docker.device"},
	{long: "security-opt", value: "seccomp=unconfined", rule: "docker.security-opt"},
	{long: "security-opt", value: "apparmor:unconfined", rule: "docker.security-opt"},
	{long: "volume", short: "v", value: "/:/host", rule: "docker.mount-root"},
	{long: "volume", short: "v", value: "/./:/host:ro", rule: "docker.mount-root"},
	{long: "volume", short: "v", value: "/var/run/docker.sock:/var/run/docker.sock", rule: "docker.docker-socket"},
	{long: "volume", short: "v", value: "/etc:/etc2:ro", rule: "docker.bind-mount"},
	{long: "volume", short: "v", value: "./data:/data", rule: "docker.bind-mount"},
	{long: "mount", value: `type=bind,"source=/",target=/h`, rule: "docker.mount-root"},
	{long: "mount", value: `"type=bind","src=/run/docker.sock","dst=/s"`, rule: "docker.docker-socket"},
	{long: "mount", value: "type=volume,dst=/h,volume-opt=o=bind,volume-opt=device=/", rule: "docker.volume-options"},
	{long: "volumes-from", value: "other", rule: "docker.volumes-from"},
	{long: "entrypoint", value: "sh", rule: "docker.entrypoint"},
	{long: "env-file", value: "/etc/environment", rule: "docker.env-file"},
	{long: "publish", short: "p", value: "8080:80", rule: "docker.publish"},
	{long: "publish-all", short: "P", bool: true, rule: "docker.publish"},
	{long: "detach", short: "d", bool: true, rule: "docker.persist"},
	{long: "restart", value: "always", rule: "docker.persist"},
	{long: "runtime", value: "x", rule: "docker.runtime"},
	{long: "cidfile", value: "/tmp/cid", rule: "docker.host-file"},
	{long: "use-api-socket", bool: true, rule: "docker.docker-socket"},
}

var npxConstructs = []construct{
	{long: "call", short: "c", value: "id", rule: "npx.call"},
	{long: "node-options", value: "--require=./x.js", rule: "npx.node-options"},
	{long: "node-arg", short: "n", value: "--require=./x.js", rule: "npx.node-arg"},
	{long: "package", short: "p", value: "pkg", rule: "npx.package"},
	{long: "registry", value: "https://r.example.com", rule: "npx.registry"},
	{long: "@s:registry", value: "https://r.example.com", rule: "npx.registry"},
	{long: "script-shell", value: "sh", rule: "npx.shell"},
	{long: "shell", value: "bash", rule: "npx.shell"},
	{long: "userconfig", value: "./npmrc", rule: "npx.config"},
	{long: "prefix", short: "C", value: ".", rule: "npx.config"},
}

var uvxConstructs = []construct{
	{long: "from", value: "git+https://github.com/u/r", rule: "uvx.from"},
	{long: "with", short: "w", value: "evil", rule: "uvx.with"},
	{long: "with-requirements", value: "r.txt", rule: "uvx.with"},
	{long: "python", short: "p", value: "/bin/sh", rule: "uvx.python"},
	{long: "python", short: "p", value: "sh", rule: "uvx.python"},
	{long: "index-url", short: "i", value: "https://evil/simple", rule: "uvx.index"},
	{long: "extra-index-url", value: "https://evil/simple", rule: "uvx.index"},
	{long: "default-index", value: "https://evil", rule: "uvx.index"},
	{long: "find-links", short: "f", value: "./wheels", rule: "uvx.index"},
	{long: "env-file", value: ".env", rule: "uvx.env-file"},
	{long: "config-file", value: "uv.toml", rule: "uvx.config"},
	{long: "cache-dir", value: "./cache", rule: "uvx.config"},
	{long: "overrides", value: "o.txt", rule: "uvx.requirements"},
	{long: "constraints", short: "c", value: "c.txt", rule: "uvx.requirements"},
}

var (
	npxBadPackages = []string{"git+https://github.com/u/r.git", "u/r", "github:u/r", "./x", "../x", "/tmp/x", "~/x", "evil.tgz",
		"x.tar.gz", "file:../x", "https://example.com/p.tgz", "pkg@github:u/r", "pkg@file:../x", "node", "node@20", "NPM", "cross-env"}
	uvxBadTools = []string{"python", "python3", "python3.12", "Python", "cpython@3.12", "pypy", "pypy3.10", "cpython-3.12.0-linux-x86_64-gnu",
		"git+https://github.com/u/r", "./tool", "/tmp/tool", "https://x/t.whl", "t @ https://x/t.whl", "pip", "uv", "IPython"}
	envBad = map[string][]string{
		launcherNpx:    {"LD_PRELOAD", "ld_preload", "Ld_Preload", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "NODE_OPTIONS", "npm_config_registry", "NPM_CONFIG_SCRIPT_SHELL", "PYTHONPATH", "BASH_ENV", "BASH_FUNC_x%%", "PATH", "HOME", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "XDG_CONFIG_HOME", "GIT_SSH_COMMAND"},
		launcherUvx:    {"LD_PRELOAD", "ld_audit", "PYTHONPATH", "PYTHONSTARTUP", "pythonhome", "UV_INDEX_URL", "uv_python", "VIRTUAL_ENV", "HOME", "PATH", "SSL_CERT_FILE"},
		launcherDocker: {"LD_PRELOAD", "DOCKER_HOST", "docker_config", "DOCKER_CONTEXT", "PATH", "HOME", "XDG_RUNTIME_DIR"},
	}
	npxSafeOpts    = [][]string{{"-y"}, {"--yes"}, {"-q"}, {"--prefer-offline"}, {"--loglevel", "warn"}, {"--loglevel=silent"}, {"-yq"}}
	uvxSafeOpts    = [][]string{{"-q"}, {"--isolated"}, {"--python", "3.12"}, {"-p3.11"}, {"--refresh"}, {"-qv"}, {"--color", "never"}}
	dockerSafeOpts = [][]string{{"-i"}, {"--rm"}, {"-t"}, {"--init"}, {"-e", "X=1"}, {"--name", "n"}, {"-it"}, {"--network", "bridge"}, {"-v", "cache:/cache"}}
)

// generateLaunch builds a launch of the launcher with one refused
// construct, spelled and placed as choice says.
func generateLaunch(launcher string, choice uint16) generated {
	pick := func(n int) int {
		v := int(choice) % n
		choice /= uint16(n)
		return v
	}
	var prefix []string
	safe := map[string][][]string{launcherNpx: npxSafeOpts, launcherUvx: uvxSafeOpts, launcherDocker: dockerSafeOpts}[launcher]
	for range pick(3) {
		prefix = append(prefix, safe[pick(len(safe))]...)
	}
	switch pick(4) {
	case 0: // an environment variable
		names := envBad[launcher]
		name := names[pick(len(names))]
		value := "x"
		if strings.EqualFold(name, "NODE_OPTIONS") {
			value = "--require ./x.js"
		}
		args := map[string][]string{launcherNpx: {"-y", "pkg"}, launcherUvx: {"tool"}, launcherDocker: {"run", "-i", "img"}}[launcher]
		return generated{srv: Server{Command: launcher, Args: args, Env: map[string]string{name: value}}, rule: "env." + name, what: "variable " + name}
	case 1: // the package or tool (docker: the subcommand)
		switch launcher {
		case launcherNpx:
			pkg := npxBadPackages[pick(len(npxBadPackages))]
			if pick(2) == 0 {
				prefix = append(prefix, "--")
			}
			return generated{srv: Server{Command: launcher, Args: append(prefix, pkg, "-c", "x")}, what: "package " + pkg}
		case launcherUvx:
			tool := uvxBadTools[pick(len(uvxBadTools))]
			if pick(2) == 0 {
				prefix = append(prefix, "--")
			}
			return generated{srv: Server{Command: launcher, Args: append(prefix, tool, "-c", "x")}, what: "tool " + tool}
		default:
			subs := [][]string{{"exec", "c", "sh"}, {"compose", "run", "s"}, {"container", "create", "img"}, {"start", "c"}, {"build", "."}, {"mcp", "gateway", "run", "--catalog", "c.yaml"}}
			sub := subs[pick(len(subs))]
			return generated{srv: Server{Command: launcher, Args: sub}, rule: "docker.subcommand", what: "subcommand " + sub[0]}
		}
	}
	constructs := map[string][]construct{launcherNpx: npxConstructs, launcherUvx: uvxConstructs, launcherDocker: dockerConstructs}[launcher]
	c := constructs[pick(len(constructs))]
	value := c.value
	if c.foldCase && pick(2) == 0 {
		value = strings.ToUpper(value)
	}
	var spelled []string
	switch launcher {
	case launcherNpx:
		dashes := strings.Repeat("-", 1+pick(3))
		name := c.long
		if c.short != "" && pick(2) == 0 {
			name = c.short
		}
		switch pick(4) {
		case 0:
			spelled = []string{dashes + name + "=" + value}
		case 1:
			spelled = []string{dashes + name, value}
		case 2:
			if len(name) == 1 {
				spelled = []string{"-y" + name, value} // a cluster
			} else if len(name) > 6 && !strings.HasPrefix(name, "@") {
				spelled = []string{"--" + name[:len(name)-2], value} // an abbreviation
			} else {
				spelled = []string{"--" + name, value}
			}
		default:
			spelled = []string{"-" + name, value}
		}
		spelled = append(spelled, "pkg")
	case launcherUvx:
		switch s := pick(5); {
		case s == 0 || c.short == "":
			spelled = []string{"--" + c.long + "=" + value}
			if s%2 == 1 {
				spelled = []string{"--" + c.long, value}
			}
		case s == 1:
			spelled = []string{"-" + c.short + value}
		case s == 2:
			spelled = []string{"-" + c.short + "=" + value}
		case s == 3:
			spelled = []string{"-q" + c.short, value}
		default:
			spelled = []string{"-" + c.short, value}
		}
		spelled = append(spelled, "tool")
	default:
		if pick(2) == 0 {
			prefix = append([]string{"run"}, prefix...)
		} else {
			prefix = append([]string{"container", "run"}, prefix...)
		}
		if pick(2) == 0 {
			prefix = append([]string{"--log-level", "info"}, prefix...)
		}
		switch s := pick(6); {
		case c.bool && c.short != "" && s%2 == 0:
			spelled = []string{"-i" + c.short}
		case c.bool && s%3 == 1:
			spelled = []string{"--" + c.long + "=true"}
		case c.bool:
			spelled = []string{"--" + c.long}
		case s == 0:
			spelled = []string{"--" + c.long + "=" + value}
		case s == 1 || c.short == "":
			spelled = []string{"--" + c.long, value}
		case s == 2:
			spelled = []string{"-" + c.short + value}
		case s == 3:
			spelled = []string{"-" + c.short + "=" + value}
		case s == 4:
			spelled = []string{"-it" + c.short, value}
		default:
			spelled = []string{"-" + c.short, value}
		}
		spelled = append(spelled, "img", "--privileged")
	}
	return generated{srv: Server{Command: launcher, Args: append(prefix, spelled...)}, rule: c.rule, what: fmt.Sprintf("%s %s", c.long, value)}
}

// launchSeeds are FuzzLaunchPolicy's seed corpus: the vectors of the
// policy's tests, spellings that once needed care, and harmless launches.
var launchSeeds = []struct {
	launcher uint8 // index into launchers: 0 npx, 1 uvx, 2 docker
	choice   uint16
	args     []string
}{
	{0, 0, []string{"-y", "@modelcontextprotocol/server-github"}},
	{0, 1, []string{"-yc", "id"}},
	{0, 2, []string{"---call=id"}},
	{0, 3, []string{"--node-opt", "--require=x", "pkg"}},
	{0, 4, []string{"--whatever", "./evil", "pkg"}},
	{0, 5, []string{"--loglevel", "-c", "id", "pkg"}},
	{0, 6, []string{"--", "pkg@>=1 <2", "-c", "x"}},
	{0, 7, []string{"--node-options=--max-old-space-size=4096", "pkg"}},
	{0, 8, []string{"u/r"}},
	{1, 9, []string{"mcp-server-time", "--local-timezone=Europe/Paris"}},
	{1, 10, []string{"--from", "git+https://github.com/u/r", "tool"}},
	{1, 11, []string{"-qp", "/bin/sh", "t"}},
	{1, 12, []string{"python", "-c", "import os"}},
	{1, 13, []string{"--python", "-w", "evil", "t"}},
	{1, 14, []string{"-p=3.12", "mcp[cli]@1.2.0"}},
	{2, 15, []string{"run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"}},
	{2, 16, []string{"run", "--net", "HOST", "img"}},
	{2, 17, []string{"run", "--network", `"name=host",alias=x`, "img"}},
	{2, 18, []string{"run", "--mount", `type=bind,"source=/",target=/h`, "img"}},
	{2, 19, []string{"-H", "tcp://x", "run", "img"}},
	{2, 20, []string{"run", "-itv/run/docker.sock:/s", "img"}},
	{2, 21, []string{"run", "--name", "--privileged", "img"}},
	{2, 22, []string{"run", "--unknown", "x", "--privileged", "img"}},
	{2, 23, []string{"run", "--rm", "--", "img", "--net=host"}},
	{2, 24, []string{"mcp", "gateway", "run"}},
	{2, 25, []string{"run", "-v", "./data:/data:ro", "-p", "127.0.0.1:8080:80", "img"}},
}
