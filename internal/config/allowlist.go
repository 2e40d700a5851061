package config

import (
	"path/filepath"
	"slices"
	"strings"
)

// LaunchPolicy is what a configuration file may start as a stdio server.
// Every check that applies to all files lives here, so that the policy
// can be tightened in one place: the command allowlist, and the launch
// rules for npx, uvx and docker (launchpolicy.go).
type LaunchPolicy struct {
	// Allowed is the allowlist: bare command names, and absolute paths
	// compared after cleaning.
	Allowed []string
	// Trusted widens the allowlist to any bare name or absolute path: the
	// file is the user's own (trusted by hash, see Trust). The launch
	// rules still apply.
	Trusted bool
	// Allow names the refused constructs the launch may use anyway (see
	// AllowNames): what a trusted file's server lists under launch.allow.
	Allow []string
	// Dir is the configuration's folder: a docker container may be given
	// the files inside it (read-only), and none outside. "" gives none.
	Dir string
	// WorkDir is where relative host paths start (the server's cwd); ""
	// means the process's working directory.
	WorkDir string
}

// CheckCommand reports whether a stdio server may run command with args
// under the allowlist allowed (an untrusted file's policy).
func CheckCommand(command string, args []string, allowed []string) error {
	return LaunchPolicy{Allowed: allowed}.Check(command, args)
}

// Check reports whether a stdio server may run command with args: the
// first problem, or nil. See CheckServer.
func (p LaunchPolicy) Check(command string, args []string) error {
	if errs := p.CheckServer(Server{Command: command, Args: args}); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// CheckServer reports every reason a stdio server may not be started as
// configured.
//
// Whatever the trust, the command must be one program (a bare name found
// on PATH or an absolute path; never a relative path or a command line,
// since nothing runs through a shell). Unless the policy is trusted, it
// must also be a bare name in Allowed, or an absolute path listed there.
// Then, for npx, uvx and docker, the launch rules: the arguments, the
// environment and inherit_env must use nothing the rules refuse, unless
// Allow names it. The errors are *CommandNotAllowedError,
// *UnsafeArgumentError and *UnsafeEnvError.
func (p LaunchPolicy) CheckServer(srv Server) []error {
	if err := p.checkCommand(srv.Command); err != nil {
		return []error{err}
	}
	launcher := launcherName(srv.Command)
	c := &checker{p: &p, launcher: launcher}
	if srv.Cwd != "" {
		p.WorkDir = srv.Cwd
	}
	switch launcher {
	case launcherNpx:
		c.npx(srv.Args)
	case launcherUvx:
		c.uvx(srv.Args)
	case launcherDocker:
		c.docker(srv.Args)
	default:
		return nil
	}
	c.env(srv.Env, srv.InheritEnv)
	var errs []error
	for _, r := range c.out {
		why, fix := r.rule.reason()
		if r.detail != "" {
			why = r.detail
		}
		if r.rule.kind == ruleEnv || r.rule.kind == ruleField {
			e := &UnsafeEnvError{Command: launcher, Name: r.arg, Rule: r.name, Reason: why, Fix: fix}
			if r.rule.kind == ruleField {
				e.Name = ""
			}
			errs = append(errs, e)
			continue
		}
		errs = append(errs, &UnsafeArgumentError{Command: launcher, Arg: r.arg, Index: r.index, Rule: r.name, Reason: why, Fix: fix})
	}
	return errs
}

// checkCommand applies the allowlist.
func (p LaunchPolicy) checkCommand(command string) error {
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
		if !slices.ContainsFunc(allowed, func(a string) bool { return isPath(a) && filepath.Clean(a) == clean }) {
			return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "absolute paths must be listed under security.allowed_commands"}
		}
	case !contains(allowed, command):
		return &CommandNotAllowedError{Command: command, Allowed: allowed, Reason: "it is not in the allowlist (" + strings.Join(allowed, ", ") + ")"}
	}
	return nil
}

// allows reports whether the policy allows a refused construct by name
// (names compare in any case: env.ld_preload is env.LD_PRELOAD).
func (p *LaunchPolicy) allows(name string) bool {
	return slices.ContainsFunc(p.Allow, func(a string) bool { return strings.EqualFold(a, name) })
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
