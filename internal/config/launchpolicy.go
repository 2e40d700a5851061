package config

import (
	"slices"
	"strings"
	"sync"
)

// The launch policy: what a configuration file may make npx, uvx and docker
// do. It is one table, launchRules; the checker (launchcheck.go) parses a
// launcher's arguments as the launcher does and walks the table, and
// docs/configuration.md shows the same table (a test keeps them equal).
//
// The principle: what the file names is what runs. An npx or uvx server
// runs one named package from the public registry; a docker server runs one
// image in an ordinary container. Anything that runs other code (a shell,
// an interpreter, a package from elsewhere, a library preloaded through the
// environment) or loosens the container is refused, whoever wrote the file.
// A file the user trusts may allow a refused construct by naming it, per
// server: launch: {allow: [docker.privileged, env.LD_PRELOAD]}.

// The launchers the policy knows.
const (
	launcherNpx    = "npx"
	launcherUvx    = "uvx"
	launcherDocker = "docker"
)

// launchers lists them in documentation order.
var launchers = []string{launcherNpx, launcherUvx, launcherDocker}

// ruleKind says what part of a launch a rule is about.
type ruleKind int

const (
	ruleOption     ruleKind = iota // an option of the launcher (for docker: of run)
	ruleGlobal                     // docker: an option before the subcommand
	ruleSubcommand                 // docker: the subcommand
	rulePackage                    // the package (npx), tool (uvx) or image (docker) to run
	ruleUnknown                    // any option the table does not list
	ruleEnv                        // a variable of the server's env (or env_file)
	ruleField                      // a server field (inherit_env)
)

// launchRule is one row of the launch policy.
type launchRule struct {
	// launchers are the launchers the rule is about.
	launchers []string
	kind      ruleKind
	// id names a refused construct: a trusted file allows it with
	// launch.allow. "" marks a row of what is allowed. Environment rules
	// are allowed per variable, as env.NAME.
	id string
	// opts are the option spellings (a trailing "=" marks an option that
	// takes a value), or for environment rules the variable names (a
	// trailing "*" matches any name with that beginning, in any case).
	opts []string
	// values says, for the documentation, which values or uses the rule is
	// about when not every use ("host", "a path outside the file's
	// folder"). For a package rule it is the whole description.
	values string
	// why is the reason, in one line; fix is how to do without it.
	why, fix string
	// refuses reports whether a use is refused, with the reason when it
	// depends on the value (it then replaces why); nil refuses (or, in an
	// allowed row, allows) every use.
	refuses func(u ruleUse) (bool, string)
}

// ruleUse is one use of a construct that a rule's refuses looks at.
type ruleUse struct {
	opt      string // the option as the table spells it (-v, --volume), or ""
	value    string // the option's value, the package spec, the variable's value
	hasValue bool   // an option: a value was given (a boolean option with =)
	p        *LaunchPolicy
}

// The rule table. Options a launcher has but that are not listed at all are
// refused by its ruleUnknown row: a launcher's new option is not assumed
// safe.
var launchRules = []*launchRule{
	// npx (npm exec). npm strips any number of leading dashes and expands
	// single-letter clusters (-yc is -y -c), so options are matched by
	// name whatever their dashes.
	{launchers: []string{launcherNpx}, kind: ruleOption,
		opts: []string{"-y", "--yes", "--no", "--no-install", "-q", "--quiet", "--silent", "-s", "-d", "-dd", "-ddd",
			"--verbose", "--loglevel=", "--prefer-offline", "--prefer-online", "--offline", "--ignore-scripts",
			"--no-audit", "--no-fund", "--no-update-notifier", "--no-progress", "--color", "--no-color", "--legacy-peer-deps"},
		why: "they change prompts, logging and cache freshness, not what runs"},
	{launchers: []string{launcherNpx}, kind: rulePackage,
		values: "a package from the registry: `name`, `@scope/name`, with `@version`, `@range` or `@tag`",
		why:    "the file names the code that runs"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.call", opts: []string{"-c=", "--call="},
		why: "it runs a shell command instead of a package",
		fix: "remove it and give the package to run, e.g. args: [-y, @scope/server]"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.shell", opts: []string{"--shell=", "--script-shell=", "--shell-auto-fallback"},
		why: "it runs commands through a shell of the file's choosing",
		fix: "remove it"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.node-options", opts: []string{"--node-options="},
		values: "other than the harmless ones (see `NODE_OPTIONS` below)",
		why:    "Node.js options such as --require load any file before the package",
		fix:    "remove it, or keep to --max-old-space-size, --no-warnings and the like",
		refuses: func(u ruleUse) (bool, string) {
			return !u.hasValue || !safeNodeOptions(u.value), ""
		}},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.node-arg", opts: []string{"-n=", "--node-arg="},
		why: "older npx passes it to Node.js, where --require loads any file",
		fix: "remove it"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.package", opts: []string{"-p=", "--package="},
		why: "with it, the command after the options may be any program on PATH, run through a shell",
		fix: "name the package as the first argument instead: args: [-y, package]"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.registry", opts: []string{"--registry=", "--@*:registry="},
		why: "the package comes from a registry the file names, so a well-known name can carry any code",
		fix: "remove it; set a registry you use in your own ~/.npmrc"},
	{launchers: []string{launcherNpx}, kind: ruleOption, id: "npx.config", opts: []string{"--userconfig=", "--globalconfig=", "--prefix=", "-C=", "--cache="},
		why: "npm reads its settings (a shell, Node.js options) or cached packages from a place the file names",
		fix: "remove it"},
	{launchers: []string{launcherNpx}, kind: ruleUnknown, id: "npx.option", values: "any other option",
		why: "npm reads over a hundred settings from its options, some of which run code; only those above are known to be safe",
		fix: "remove it"},
	{launchers: []string{launcherNpx}, kind: rulePackage, id: "npx.package-source",
		values: "a package that is a git or GitHub spec, a URL, a tarball or a local path",
		why:    "it runs code from outside the registry, such as the repository the file came from",
		fix:    "name a published package (args: [-y, name@version])",
		refuses: func(u ruleUse) (bool, string) {
			return u.hasValue && !npmRegistrySpec(u.value), ""
		}},
	{launchers: []string{launcherNpx}, kind: rulePackage, id: "npx.runner",
		values: "a package whose command runs code its arguments give: " + strings.Join(npxRunners, ", "),
		why:    "it runs whatever its arguments say (a short list of the best known, not a boundary)",
		fix:    "name the server's own package",
		refuses: func(u ruleUse) (bool, string) {
			return u.hasValue && slices.Contains(npxRunners, strings.ToLower(npmSpecName(u.value))), ""
		}},

	// uvx (uv tool run): clap options, matched exactly.
	{launchers: []string{launcherUvx}, kind: ruleOption,
		opts: []string{"-q", "--quiet", "-v", "--verbose", "--isolated", "--refresh", "--refresh-package=", "--reinstall",
			"--reinstall-package=", "-U", "--upgrade", "-P=", "--upgrade-package=", "--offline", "-n", "--no-cache",
			"--no-progress", "--color=", "--native-tls", "--no-config", "--no-env-file", "--prerelease=", "--resolution=",
			"--exclude-newer=", "-p=", "--python=", "--python-preference=", "--no-python-downloads", "--managed-python",
			"--no-managed-python", "--no-build", "--no-binary", "--no-sources", "--show-resolution",
			"--no-index", "--link-mode=", "--compile-bytecode", "-h", "--help", "-V", "--version"},
		why: "they change caching, resolution and output, not what runs (--python only as a version)"},
	{launchers: []string{launcherUvx}, kind: rulePackage,
		values: "a tool from the index: `name`, `name[extra]`, with `@version` or `@latest`",
		why:    "the file names the code that runs"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.from", opts: []string{"--from="},
		why: "with it, uvx runs any program on PATH by the command's name (sh, for one) when the package has none",
		fix: "name the tool as the command: args: [name@version]"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.with", opts: []string{"-w=", "--with=", "--with-editable=", "--with-requirements="},
		why: "it adds packages beside the named one, and their code runs too (a .pth file runs at start-up)",
		fix: "remove it"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.index",
		opts: []string{"-i=", "--index-url=", "--extra-index-url=", "--index=", "--default-index=", "-f=", "--find-links=", "--allow-insecure-host=", "--trusted-host="},
		why:  "the package comes from an index the file names, so a well-known name can carry any code",
		fix:  "remove it; set an index you use in your own uv.toml"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.requirements",
		opts: []string{"-c=", "--constraints=", "--constraint=", "--overrides=", "--override=", "-b=", "--build-constraints=", "--build-constraint="},
		why:  "it reads from a file which versions, and from where, to install",
		fix:  "remove it; pin the version in the tool: name@version"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.python", opts: []string{"-p=", "--python="},
		values: "that is a path or a program name, not a version",
		why:    "uv runs the interpreter the file names, which may be any program (/bin/sh)",
		fix:    "give a version: --python 3.12",
		refuses: func(u ruleUse) (bool, string) {
			return !pythonVersionRequest(u.value), ""
		}},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.python-mirror",
		opts: []string{"--python-install-mirror=", "--pypy-install-mirror=", "--python-downloads-json-url="},
		why:  "Python itself is downloaded from where the file says",
		fix:  "remove it"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.env-file", opts: []string{"--env-file="},
		why: "it sets environment variables from a file, around the environment rules",
		fix: "use the server's env or env_file instead"},
	{launchers: []string{launcherUvx}, kind: ruleOption, id: "uvx.config", opts: []string{"--config-file=", "--directory=", "--project=", "--cache-dir="},
		why: "uv reads its settings (index, Python) or cached packages from a place the file names",
		fix: "remove it"},
	{launchers: []string{launcherUvx}, kind: ruleUnknown, id: "uvx.option", values: "any other option",
		why: "only the options above are known to be safe",
		fix: "remove it"},
	{launchers: []string{launcherUvx}, kind: rulePackage, id: "uvx.package-source",
		values: "a tool that is a git URL, a URL, a path or a requirement with a source",
		why:    "it runs code from outside the index, such as the repository the file came from",
		fix:    "name a published tool (args: [name@version])",
		refuses: func(u ruleUse) (bool, string) {
			return !uvToolSpec(u.opt, u.value), ""
		}},
	{launchers: []string{launcherUvx}, kind: rulePackage, id: "uvx.interpreter",
		values: "a Python interpreter as the tool (`python`, `python3.12`, `pypy`, `cpython@3.12`)",
		why:    "an interpreter runs any code its arguments give (-c)",
		fix:    "name the server's own tool",
		refuses: func(u ruleUse) (bool, string) {
			return pythonTool(u.value), ""
		}},
	{launchers: []string{launcherUvx}, kind: rulePackage, id: "uvx.runner",
		values: "a tool that runs code its arguments give: " + strings.Join(uvxRunners, ", "),
		why:    "it runs whatever its arguments say (a short list of the best known, not a boundary)",
		fix:    "name the server's own tool",
		refuses: func(u ruleUse) (bool, string) {
			return slices.Contains(uvxRunners, normalizePyName(uvToolName(u.value))), ""
		}},

	// docker: the global options, the subcommand, then run's options
	// (pflag: --name=value, --name value, -abc clusters, -v=value).
	{launchers: []string{launcherDocker}, kind: ruleGlobal,
		opts: []string{"-D", "--debug", "-l=", "--log-level=", "--tls", "--tlsverify", "--tlscacert=", "--tlscert=", "--tlskey="},
		why:  "they change logging and TLS to the local daemon"},
	{launchers: []string{launcherDocker}, kind: ruleSubcommand,
		values: "`run`, `container run`, and `mcp gateway run` with nothing after it",
		why:    "they start a new container from an image"},
	{launchers: []string{launcherDocker}, kind: ruleOption,
		opts: []string{"-a=", "--attach=", "--add-host=", "--blkio-weight=", "--blkio-weight-device=", "--cap-drop=",
			"--cpu-count=", "--cpu-percent=", "--cpu-period=", "--cpu-quota=", "--cpu-rt-period=", "--cpu-rt-runtime=",
			"-c=", "--cpu-shares=", "--cpus=", "--cpuset-cpus=", "--cpuset-mems=", "--detach-keys=", "--device-read-bps=",
			"--device-read-iops=", "--device-write-bps=", "--device-write-iops=", "--disable-content-trust", "--dns=",
			"--dns-opt=", "--dns-option=", "--dns-search=", "--domainname=", "-e=", "--env=", "--expose=", "--group-add=",
			"--health-cmd=", "--health-interval=", "--health-retries=", "--health-start-interval=", "--health-start-period=",
			"--health-timeout=", "--help", "-h=", "--hostname=", "--init", "-i", "--interactive", "--io-maxbandwidth=",
			"--io-maxiops=", "--ip=", "--ip6=", "--isolation=", "--kernel-memory=", "-l=", "--label=", "--label-file=",
			"--link=", "--link-local-ip=", "--log-driver=", "--log-opt=", "--mac-address=", "-m=", "--memory=",
			"--memory-reservation=", "--memory-swap=", "--memory-swappiness=", "--name=", "--network-alias=", "--net-alias=",
			"--no-healthcheck", "--oom-kill-disable", "--oom-score-adj=", "--pids-limit=", "--platform=", "--pull=", "-q",
			"--quiet", "--read-only", "--rm", "--shm-size=", "--sig-proxy", "--stop-signal=", "--stop-timeout=",
			"--storage-opt=", "--sysctl=", "--tmpfs=", "-t", "--tty", "--ulimit=", "-u=", "--user=", "--volume-driver=",
			"-w=", "--workdir=",
			// Allowed with the values the rules below do not refuse.
			"--network=", "--net=", "--pid=", "--ipc=", "--uts=", "--userns=", "--cgroupns=", "--security-opt=",
			"-v=", "--volume=", "--mount=", "--env-file=", "-p=", "--publish=", "--restart=", "--privileged",
			"-d", "--detach", "-P", "--publish-all", "--use-api-socket"},
		why: "they shape an ordinary container (the last ones only with the values the rows below allow)"},
	{launchers: []string{launcherDocker}, kind: rulePackage,
		values: "any image",
		why:    "it runs in the container"},
	{launchers: []string{launcherDocker}, kind: ruleSubcommand, id: "docker.subcommand",
		values: "any other: `exec`, `compose`, `start`, `build`, `container create`, ...",
		why:    "only run starts a new container from an image; the others run commands in existing containers or read what to run from elsewhere",
		fix:    "use docker run with the image"},
	{launchers: []string{launcherDocker}, kind: ruleGlobal, id: "docker.host", opts: []string{"-H=", "--host=", "-c=", "--context="},
		values: "(`--host` and `--context` after `run` too)",
		why:    "the container, and the server's environment, go to a Docker daemon the file names",
		fix:    "remove it; choose the daemon with your own docker context"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.host", opts: []string{"--host=", "--context="}},
	{launchers: []string{launcherDocker}, kind: ruleGlobal, id: "docker.config", opts: []string{"--config="},
		values: "(after `run` too)",
		why:    "the Docker CLI reads its settings there, including programs it runs for credentials",
		fix:    "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.config", opts: []string{"--config="}},
	{launchers: []string{launcherDocker}, kind: ruleUnknown, id: "docker.option", values: "any other option",
		why: "only the options above are known to be safe (Docker adds options, and some loosen the container)",
		fix: "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.privileged", opts: []string{"--privileged"},
		values: "(unless `=false`)",
		why:    "it gives the container every device and capability of the host",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return boolOn(u), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.cap-add", opts: []string{"--cap-add="},
		why: "capabilities beyond Docker's defaults let a container escape (SYS_ADMIN, SYS_MODULE, DAC_READ_SEARCH)",
		fix: "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.device", opts: []string{"--device=", "--device-cgroup-rule=", "--gpus="},
		why: "it gives the container the host's devices",
		fix: "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.security-opt", opts: []string{"--security-opt="},
		values: "other than `no-new-privileges`",
		why:    "it turns off or replaces the container's confinement (seccomp=unconfined, apparmor=unconfined, label=disable)",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !noNewPrivileges(u.value), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.network-host", opts: []string{"--network=", "--net="},
		values: "with `host` (also as `name=host`)",
		why:    "the container shares the host's network, where it reaches every local service",
		fix:    "remove it; publish the ports the server needs on 127.0.0.1",
		refuses: func(u ruleUse) (bool, string) {
			n, ok := dockerNetworkName(u.value)
			return !ok || strings.EqualFold(n, "host"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.network-container", opts: []string{"--network=", "--net="},
		values: "with `container:NAME`",
		why:    "the container joins another container's network, which may be the host's",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			n, _ := dockerNetworkName(u.value)
			return strings.Contains(n, ":"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.pid", opts: []string{"--pid="},
		values: "with `host` or `container:NAME`",
		why:    "the container sees and can signal the host's (or another container's) processes",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !oneOf(u.value, "", "private"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.ipc", opts: []string{"--ipc="},
		values: "with `host` or `container:NAME`",
		why:    "the container shares the host's (or another container's) shared memory",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !oneOf(u.value, "", "none", "private", "shareable"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.uts", opts: []string{"--uts="},
		values: "with `host`",
		why:    "the container shares the host's hostname and may change it",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !oneOf(u.value, "", "private"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.userns", opts: []string{"--userns="},
		values: "with `host`",
		why:    "it turns off user-namespace remapping, so root in the container is root on the host",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !oneOf(u.value, ""), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.cgroupns", opts: []string{"--cgroupns="},
		values: "with `host`",
		why:    "the container sees the host's control groups",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			return !oneOf(u.value, "", "private"), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.mount-root", opts: []string{"-v=", "--volume=", "--mount="},
		values: "whose host path is `/`",
		why:    "it mounts the host's root filesystem into the container",
		fix:    "mount a folder inside the configuration's folder, read-only",
		refuses: func(u ruleUse) (bool, string) {
			m, ok := u.p.dockerMount(u)
			return ok && m.bind && m.host == "/", ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.docker-socket", opts: []string{"-v=", "--volume=", "--mount=", "--use-api-socket"},
		values: "with a container runtime's socket, or anything under `/run` or `/var/run` (`--use-api-socket` always)",
		why:    "whoever holds the Docker socket controls the host",
		fix:    "remove it",
		refuses: func(u ruleUse) (bool, string) {
			if u.opt == "--use-api-socket" {
				return boolOn(u), ""
			}
			m, ok := u.p.dockerMount(u)
			return ok && m.bind && m.host != "/" && runtimeSocket(m.host), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.bind-mount", opts: []string{"-v=", "--volume=", "--mount="},
		values: "of a host path outside the configuration's folder, or writable inside it",
		why:    "outside, the container reads or changes your files; writable inside, it can plant commands your tools run (.git/hooks)",
		fix:    "mount a folder inside the configuration's folder read-only (:ro), or use a named volume",
		refuses: func(u ruleUse) (bool, string) {
			m, ok := u.p.dockerMount(u)
			if !ok {
				return true, m.detail
			}
			if !m.bind || m.host == "/" || runtimeSocket(m.host) {
				return false, ""
			}
			inside := u.p.inside(m.host)
			return !inside || !m.readOnly, m.where(inside)
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.volume-options", opts: []string{"--mount="},
		values: "with `volume-opt`",
		why:    "volume options can bind any host path (o=bind,device=/)",
		fix:    "remove the volume-opt fields",
		refuses: func(u ruleUse) (bool, string) {
			m, _ := u.p.dockerMount(u)
			return m.volumeOpt, ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.volumes-from", opts: []string{"--volumes-from="},
		why: "it mounts every volume of another container, which may hold the host's files or the Docker socket",
		fix: "mount what the server needs itself"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.env-file", opts: []string{"--env-file="},
		values: "outside the configuration's folder",
		why:    "it copies a file of yours (tokens, keys) into the container",
		fix:    "pass variables with the server's env and -e NAME",
		refuses: func(u ruleUse) (bool, string) {
			return !u.p.inside(u.p.hostPath(u.value)), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.entrypoint", opts: []string{"--entrypoint="},
		why: "it runs another program than the image's own",
		fix: "remove it; pass arguments after the image"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.publish", opts: []string{"-p=", "--publish=", "-P", "--publish-all"},
		values: "on any address but loopback",
		why:    "it opens a port on every network interface, for anyone on the network",
		fix:    "publish on 127.0.0.1: -p 127.0.0.1:8080:80",
		refuses: func(u ruleUse) (bool, string) {
			if u.opt == "-P" || u.opt == "--publish-all" {
				return boolOn(u), ""
			}
			return !loopbackPublish(u.value), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.persist", opts: []string{"-d", "--detach", "--restart="},
		values: "(`--restart` unless `no`)",
		why:    "the container keeps running after the server stops",
		fix:    "remove it; a server's container lives as long as the server",
		refuses: func(u ruleUse) (bool, string) {
			if u.opt == "--restart" {
				return !oneOf(u.value, "no"), ""
			}
			return boolOn(u), ""
		}},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.runtime", opts: []string{"--runtime=", "--annotation=", "--cgroup-parent="},
		why: "it chooses or configures the low-level runtime, whose settings can weaken isolation",
		fix: "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleOption, id: "docker.host-file", opts: []string{"--cidfile="},
		why: "it writes a file on the host",
		fix: "remove it"},

	// The server's environment: variables that make a launcher (or the
	// interpreter it starts) load other code. Names are matched in any
	// case; npm reads npm_config_* in any case.
	{launchers: launchers, kind: ruleEnv, id: "env.loader", opts: []string{"LD_*", "DYLD_*"},
		why: "the dynamic loader loads the library it names into the launcher",
		fix: "remove it"},
	{launchers: launchers, kind: ruleEnv, id: "env.shell", opts: []string{"BASH_ENV", "ENV", "BASH_FUNC_*", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "ZDOTDIR"},
		why: "a shell the launcher starts runs the code it names",
		fix: "remove it"},
	{launchers: launchers, kind: ruleEnv, id: "env.programs",
		opts: []string{"PATH", "SHELL", "EDITOR", "VISUAL", "PAGER", "BROWSER", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
			"GIT_EXEC_PATH", "GIT_CONFIG*", "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"},
		why: "it chooses the programs the launcher runs (node for npx, credential helpers for docker, git)",
		fix: "remove it; Switchboard passes your PATH"},
	{launchers: launchers, kind: ruleEnv, id: "env.config", opts: []string{"HOME", "XDG_*"},
		why: "the launcher reads its settings (~/.npmrc, uv.toml, ~/.docker/config.json) from there",
		fix: "remove it; Switchboard passes your HOME"},
	{launchers: launchers, kind: ruleEnv, id: "env.tls", opts: []string{"NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "SSL_CERT_FILE", "SSL_CERT_DIR"},
		why: "it changes which servers the launcher trusts, so a package can be swapped on the way",
		fix: "remove it"},
	{launchers: []string{launcherNpx, launcherUvx}, kind: ruleEnv, id: "env.node", opts: []string{"NODE_OPTIONS"},
		values: "other than `--max-old-space-size=N`, `--no-warnings` and other harmless options",
		why:    "Node.js options such as --require load any file",
		fix:    "remove it, or keep to --max-old-space-size, --no-warnings and the like",
		refuses: func(u ruleUse) (bool, string) {
			return !safeNodeOptions(u.value), ""
		}},
	{launchers: []string{launcherNpx, launcherUvx}, kind: ruleEnv, id: "env.node-path", opts: []string{"NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "NPM_CONFIG_*"},
		why: "Node.js or npm loads modules, or takes settings (a shell, a registry), from it",
		fix: "remove it"},
	{launchers: []string{launcherNpx, launcherUvx}, kind: ruleEnv, id: "env.python",
		opts: []string{"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONWARNINGS", "PYTHONBREAKPOINT",
			"PYTHONPYCACHEPREFIX", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR", "PYTHONINSPECT", "VIRTUAL_ENV"},
		why: "Python imports or runs code from where it says",
		fix: "remove it"},
	{launchers: []string{launcherUvx}, kind: ruleEnv, id: "env.uv", opts: []string{"UV_*"},
		why: "uv takes its settings from them (the index, the interpreter, an env file)",
		fix: "remove it"},
	{launchers: []string{launcherNpx, launcherUvx}, kind: ruleEnv, id: "env.runtimes",
		opts: []string{"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"},
		why:  "Perl, Ruby or Java (which install scripts may run) loads the code it names",
		fix:  "remove it"},
	{launchers: []string{launcherDocker}, kind: ruleEnv, id: "env.docker",
		opts: []string{"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_TLS"},
		why:  "the Docker CLI sends the container to another daemon, or reads its settings from elsewhere",
		fix:  "remove it; pass variables for the container under another name"},
	{launchers: launchers, kind: ruleField, id: "env.inherit", opts: []string{"inherit_env"},
		values: "set to `true`",
		why:    "it passes your whole environment, tokens included, to the launcher (and docker -e NAME into the container)",
		fix:    "remove it; name the variables the server needs under env"},
}

// npxRunners are npm packages whose command runs code its arguments give.
var npxRunners = []string{"node", "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno", "corepack",
	"tsx", "ts-node", "zx", "cross-env", "concurrently", "npm-run-all", "nodemon"}

// uvxRunners are Python tools that run code their arguments give.
var uvxRunners = []string{"pip", "uv", "pipx", "ipython", "xonsh", "hy"}

// allowName is the name a trusted file allows a rule's use by: the rule's
// id, or env.NAME for a variable.
func (r *launchRule) allowName(name string) string {
	if r.kind == ruleEnv {
		return "env." + name
	}
	return r.id
}

// optionIndex maps a launcher's option spellings, per scope, to the rules
// that name them.
type optionIndex struct {
	takesValue map[string]bool
	rules      map[string][]*launchRule
	globs      []string // spellings with a *, in table order
}

// optionIndexes is built from launchRules, on first use: launcher and scope ("" for a
// launcher's options, "global" for docker's) to its index.
var optionIndexes = sync.OnceValue(func() map[string]*optionIndex {
	out := map[string]*optionIndex{}
	for _, r := range launchRules {
		if r.kind != ruleOption && r.kind != ruleGlobal {
			continue
		}
		for _, l := range r.launchers {
			key := l
			if r.kind == ruleGlobal {
				key += " global"
			}
			ix := out[key]
			if ix == nil {
				ix = &optionIndex{takesValue: map[string]bool{}, rules: map[string][]*launchRule{}}
				out[key] = ix
			}
			for _, o := range r.opts {
				name, valued := strings.CutSuffix(o, "=")
				if _, seen := ix.rules[name]; !seen && strings.Contains(name, "*") {
					ix.globs = append(ix.globs, name)
				}
				ix.takesValue[name] = valued
				ix.rules[name] = append(ix.rules[name], r)
			}
		}
	}
	return out
})

// lookup returns an option's rules and whether it takes a value; ok is
// false for an option the table does not list.
func (ix *optionIndex) lookup(name string) (rules []*launchRule, valued, ok bool) {
	if rs, found := ix.rules[name]; found {
		return rs, ix.takesValue[name], true
	}
	for _, g := range ix.globs {
		if globMatch(g, name) {
			return ix.rules[g], ix.takesValue[g], true
		}
	}
	return nil, false, false
}

// rulesOf returns the rules of a launcher of one kind, in table order.
func rulesOf(launcher string, kind ruleKind) []*launchRule {
	var out []*launchRule
	for _, r := range launchRules {
		if r.kind == kind && slices.Contains(r.launchers, launcher) {
			out = append(out, r)
		}
	}
	return out
}

// ruleByID returns the first rule with the id.
func ruleByID(id string) *launchRule {
	for _, r := range launchRules {
		if r.id == id {
			return r
		}
	}
	return nil
}

// reason returns a rule's why and fix, taken from the first row with its
// id when the row itself has none (a rule split over scopes).
func (r *launchRule) reason() (string, string) {
	if r.why != "" {
		return r.why, r.fix
	}
	if first := ruleByID(r.id); first != nil {
		return first.why, first.fix
	}
	return "", ""
}

// envRule returns the environment rule that covers a variable for a
// launcher, or nil.
func envRule(launcher, name string) *launchRule {
	for _, r := range launchRules {
		if r.kind != ruleEnv || !slices.Contains(r.launchers, launcher) {
			continue
		}
		for _, o := range r.opts {
			if globMatch(strings.ToUpper(o), strings.ToUpper(name)) {
				return r
			}
		}
	}
	return nil
}

// globMatch matches a name against a pattern whose only wildcard is *
// (any run of characters).
func globMatch(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(name, p) && len(name) >= len(p)
		}
		j := strings.Index(name, p)
		if j < 0 {
			return false
		}
		name = name[j+len(p):]
	}
	return true
}

// AllowNames lists the names launch.allow accepts: every refused
// construct's id, and env.NAME for the variables the environment rules
// cover (a name ending in * stands for any variable with that beginning).
func AllowNames() []string {
	var out []string
	for _, r := range launchRules {
		switch {
		case r.id == "":
		case r.kind == ruleEnv:
			for _, o := range r.opts {
				out = append(out, "env."+o)
			}
		default:
			out = append(out, r.id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// validAllowName reports whether launch.allow may name n.
func validAllowName(n string) bool {
	if n == "" {
		return false
	}
	if r := ruleByID(n); r != nil && r.kind != ruleEnv {
		return true
	}
	if name, ok := strings.CutPrefix(n, "env."); ok {
		for _, l := range launchers {
			if name != "" && !strings.Contains(name, "*") && envRule(l, name) != nil {
				return true
			}
		}
	}
	return false
}
