package config

import (
	"path/filepath"
	"strings"
)

// LaunchPolicy is what a configuration file may start as a stdio server.
// Every check that applies to all files lives here, so that the policy
// can be tightened in one place.
type LaunchPolicy struct {
	// Allowed is the allowlist: bare command names, and absolute paths
	// compared after cleaning.
	Allowed []string
	// Trusted widens the allowlist to any bare name or absolute path: the
	// file is the user's own (trusted by hash, see Trust). The checks that
	// apply to every file still do.
	Trusted bool
}

// CheckCommand reports whether a stdio server may run command with args
// under the allowlist allowed (an untrusted file's policy).
func CheckCommand(command string, args []string, allowed []string) error {
	return LaunchPolicy{Allowed: allowed}.Check(command, args)
}

// Check reports whether a stdio server may run command with args.
//
// Whatever the trust, the command must be one program (a bare name found on
// PATH or an absolute path; never a relative path or a command line, since
// nothing runs through a shell), and the arguments must not turn a known
// launcher into something else: npx may not run a shell command (-c,
// --call, --shell, --script-shell) and docker run may not loosen the
// container (--privileged, a bind mount of /, --pid=host, --cap-add=ALL or
// SYS_ADMIN). Unless the policy is trusted, the command must also be a bare
// name in Allowed, or an absolute path listed there. It returns a
// *CommandNotAllowedError or an *UnsafeArgumentError, or nil.
func (p LaunchPolicy) Check(command string, args []string) error {
	allowed := p.Allowed
	switch {
	case command == "":
		return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "the command is empty"}
	case isPath(command) && !filepath.IsAbs(command):
		return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "relative paths are not allowed"}
	case strings.ContainsAny(command, " \t\n") && !isPath(command):
		return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "it is a command line, not one program: nothing runs through a shell"}
	case p.Trusted:
	case isPath(command):
		clean := filepath.Clean(command)
		found := false
		for _, a := range allowed {
			if isPath(a) && filepath.Clean(a) == clean {
				found = true
				break
			}
		}
		if !found {
			return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "absolute paths must be listed under security.allowed_commands"}
		}
	case !contains(allowed, command):
		return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "it is not in the allowlist (" + strings.Join(allowed, ", ") + ")"}
	}
	switch launcherName(command) {
	case "npx":
		return checkNpx(args)
	case "docker":
		return checkDocker(args)
	}
	return nil
}

// launcherName is the program name of a command, without directory or a
// Windows executable extension, in lower case.
func launcherName(command string) string {
	base := command
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.ToLower(base)
	for _, ext := range []string{".exe", ".cmd", ".bat"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// npxBoolFlags are npx options that take no value. Any other option may
// take the next argument as its value, so scanning continues past it: the
// options end only at an argument that cannot be a value.
var npxBoolFlags = map[string]bool{
	"-y": true, "--yes": true, "--no": true, "--no-install": true, "--ignore-existing": true,
	"-q": true, "--quiet": true, "--silent": true, "-s": true, "--prefer-offline": true,
	"--prefer-online": true, "--offline": true, "--verbose": true, "-d": true, "-dd": true, "-ddd": true,
}

// checkNpx rejects npx options that run a shell command instead of a
// package. Arguments after the package belong to the package.
func checkNpx(args []string) error {
	unsafe := func(i int, reason, fix string) error {
		return &UnsafeArgumentError{Command: "npx", Arg: args[i], Index: i, Reason: reason, Fix: fix}
	}
	maybeValue := false
	for i, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if maybeValue {
				maybeValue = false
				continue
			}
			return nil // the package; the rest is its own arguments
		}
		maybeValue = false
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case name == "-c" || name == "--call":
			return unsafe(i, "it runs a shell command", "remove it and give the package to run, e.g. args: [-y, @scope/server]")
		case !strings.HasPrefix(name, "--") && len(name) > 2 && strings.ContainsRune(name[1:], 'c'):
			return unsafe(i, "it includes -c, which runs a shell command", "remove it and give the package to run, e.g. args: [-y, @scope/server]")
		case name == "--shell" || name == "--script-shell" || strings.HasPrefix(name, "--shell-"):
			return unsafe(i, "it runs commands through a shell", "remove it")
		}
		if !hasValue && !npxBoolFlags[name] && !strings.HasPrefix(name, "--no-") {
			maybeValue = true
		}
	}
	return nil
}

// Docker flags, for finding the options of `docker run` and their values.
var (
	dockerGlobalValueFlags = map[string]bool{
		"--config": true, "-c": true, "--context": true, "-H": true, "--host": true,
		"-l": true, "--log-level": true, "--tlscacert": true, "--tlscert": true, "--tlskey": true,
	}
	dockerRunBoolFlags = map[string]bool{
		"-d": true, "--detach": true, "-i": true, "--interactive": true, "-t": true, "--tty": true,
		"--rm": true, "--privileged": true, "--init": true, "-P": true, "--publish-all": true,
		"--read-only": true, "--no-healthcheck": true, "--oom-kill-disable": true, "-q": true,
		"--quiet": true, "--disable-content-trust": true, "--sig-proxy": true, "--help": true,
		"--use-api-socket": true,
	}
	// dockerShort maps the run shorthands that take a value to long names.
	dockerShort = map[byte]string{
		'a': "--attach", 'c': "--cpu-shares", 'e': "--env", 'h': "--hostname", 'l': "--label",
		'm': "--memory", 'p': "--publish", 'u': "--user", 'v': "--volume", 'w': "--workdir",
	}
	dockerShortBool = "dtiPq"
)

// checkDocker rejects `docker run` (or create) options that loosen the
// container's isolation from the host.
func checkDocker(args []string) error {
	// Skip global options to the subcommand.
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		name, _, hasValue := strings.Cut(args[i], "=")
		i++
		if !hasValue && dockerGlobalValueFlags[name] {
			i++
		}
	}
	if i >= len(args) {
		return nil
	}
	switch args[i] {
	case "run", "create":
		i++
	case "container":
		if i+1 < len(args) && (args[i+1] == "run" || args[i+1] == "create") {
			i += 2
		} else {
			return nil
		}
	default:
		return nil
	}
	// Scan the run options up to the image. An option not known to be
	// boolean may take the next argument as its value; that argument is
	// checked both as the value and, if it looks like one, as an option.
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return nil // the image; the rest is the container's command
		}
		name, value, hasValue, takesValue := splitDockerFlag(a)
		if hasValue || !takesValue {
			if err := checkDockerOption(name, value, hasValue, a, i); err != nil {
				return err
			}
			i++
			continue
		}
		if i+1 < len(args) {
			if err := checkDockerOption(name, args[i+1], true, a+" "+args[i+1], i); err != nil {
				return err
			}
			if strings.HasPrefix(args[i+1], "-") {
				i++ // also check it as an option of its own
				continue
			}
		}
		i += 2
	}
	return nil
}

// splitDockerFlag splits one docker run option into its long name and
// attached value, and says whether it takes a value.
func splitDockerFlag(a string) (name, value string, hasValue, takesValue bool) {
	if strings.HasPrefix(a, "--") {
		name, value, hasValue = strings.Cut(a, "=")
		return name, value, hasValue, !dockerRunBoolFlags[name]
	}
	// Shorthands: a cluster of boolean letters, ending in at most one
	// letter that takes a value, attached (-v/:/x, -v=/:/x) or next.
	for j := 1; j < len(a); j++ {
		c := a[j]
		if strings.IndexByte(dockerShortBool, c) >= 0 {
			continue
		}
		long, ok := dockerShort[c]
		if !ok {
			long = "-" + string(c)
		}
		rest := strings.TrimPrefix(a[j+1:], "=")
		if j+1 < len(a) {
			return long, rest, true, true
		}
		return long, "", false, true
	}
	return a, "", false, false
}

// checkDockerOption checks one docker run option and its value.
func checkDockerOption(name, value string, hasValue bool, arg string, index int) error {
	unsafe := func(reason, fix string) error {
		return &UnsafeArgumentError{Command: "docker", Arg: arg, Index: index, Reason: reason, Fix: fix}
	}
	switch name {
	case "--privileged":
		if !hasValue || !strings.EqualFold(value, "false") {
			return unsafe("it gives the container full access to the host", "remove --privileged; add only the capabilities the server needs with --cap-add")
		}
	case "--volume":
		if host, _, ok := strings.Cut(value, ":"); ok && isRoot(host) {
			return unsafe("it mounts the host's root filesystem into the container", "mount a specific directory instead of /")
		}
	case "--mount":
		for _, kv := range strings.Split(value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			k = strings.ToLower(strings.TrimSpace(k))
			if (k == "source" || k == "src") && isRoot(v) {
				return unsafe("it mounts the host's root filesystem into the container", "mount a specific directory instead of /")
			}
		}
	case "--pid":
		if strings.EqualFold(value, "host") {
			return unsafe("it shares the host's process namespace with the container", "remove it")
		}
	case "--cap-add":
		for _, c := range strings.Split(value, ",") {
			c = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
			if c == "ALL" || c == "SYS_ADMIN" {
				return unsafe("it gives the container (nearly) every capability of root on the host", "add only the specific capabilities the server needs")
			}
		}
	}
	return nil
}

// isRoot reports whether a host path is the root directory.
func isRoot(p string) bool {
	p = strings.TrimSpace(p)
	return p != "" && strings.HasPrefix(p, "/") && filepath.Clean(p) == "/"
}
