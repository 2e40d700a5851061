package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// String renders the position as file:line:col, leaving out the parts that
// are unknown.
func (p Pos) String() string {
	var parts []string
	if p.File != "" {
		parts = append(parts, p.File)
	}
	if p.Line > 0 {
		parts = append(parts, strconv.Itoa(p.Line))
		if p.Col > 0 {
			parts = append(parts, strconv.Itoa(p.Col))
		}
	}
	return strings.Join(parts, ":")
}

// Problem is one thing wrong with a configuration: where it is, which field
// it concerns, what is wrong and how to fix it.
type Problem struct {
	Pos     Pos
	Field   string // dotted path, e.g. servers.github.url or servers[2].url
	Message string // what is wrong
	Fix     string // how to fix it; may be empty
	Err     error  // the typed cause, for errors.As; never nil for problems this package makes
}

// String renders the problem as one line:
// "file:line:col: field: message; fix".
func (p Problem) String() string {
	var b strings.Builder
	if s := p.Pos.String(); s != "" {
		b.WriteString(s)
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Fix != "" {
		b.WriteString("; ")
		b.WriteString(p.Fix)
	}
	return b.String()
}

// ValidationError reports every problem found in a configuration, sorted by
// position. Its kind is fault.Config.
type ValidationError struct {
	Problems []Problem
}

// Error renders the problems one per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the typed cause of each problem, so that errors.As finds,
// for example, a *MissingFieldError among them.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, 0, len(e.Problems))
	for _, p := range e.Problems {
		if p.Err != nil {
			errs = append(errs, p.Err)
		}
	}
	return errs
}

// FaultKind classifies the error as a configuration problem (fault.Config).
func (e *ValidationError) FaultKind() fault.Kind { return fault.Config }

// MissingFieldError reports a field that a server's transport requires but
// that is absent (seed 004's MissingTransportFieldError).
type MissingFieldError struct {
	Field     string // dotted path, e.g. servers.github.url
	Transport Transport
}

// Error names the field and the transport that needs it.
func (e *MissingFieldError) Error() string {
	return fmt.Sprintf("%s is required by the %s transport", e.Field, e.Transport)
}

// UnresolvedVariableError reports a ${VAR} reference to a variable that is
// not set and has no default (seed 004's UnresolvedEnvVarError).
type UnresolvedVariableError struct {
	Variable string // the variable name, e.g. GITHUB_TOKEN
	Field    string // dotted path of the field that uses it
}

// Error names the variable and the field.
func (e *UnresolvedVariableError) Error() string {
	return fmt.Sprintf("variable %s used in %s is not set", e.Variable, e.Field)
}

// CommandNotAllowedError reports a stdio command that the allowlist does
// not permit.
type CommandNotAllowedError struct {
	Command string
	Allowed []string // the effective allowlist
	Reason  string   // why, e.g. "relative paths are not allowed"
	// File is the absolute path of the client file whose trust would allow
	// the command, and Trust its trust state; "" for the native format,
	// which security.allowed_commands extends instead, and for commands no
	// trust allows (a relative path, a command line).
	File  string
	Trust TrustState
}

// Error names the command and the reason.
func (e *CommandNotAllowedError) Error() string {
	return fmt.Sprintf("command %q is not allowed: %s", e.Command, e.Reason)
}

// UnsafeArgumentError reports an argument that the launch policy refuses
// because it would let a launcher run something else or escape its
// sandbox ("argument smuggling"), such as npx -c or docker run
// --privileged.
type UnsafeArgumentError struct {
	Command string // the launcher, e.g. docker
	Arg     string // the offending argument (with its value, if separate); "" for what is missing
	Index   int    // index of the argument in the command's args; -1 for the arguments as a whole
	Rule    string // the name a trusted file allows it by (launch.allow), e.g. docker.privileged
	Reason  string // what the argument does
	Fix     string // how to do without it
}

// Error names the launcher, the argument and what it does.
func (e *UnsafeArgumentError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s arguments are refused: %s", e.Command, e.Reason)
	}
	return fmt.Sprintf("%s argument %q is refused: %s", e.Command, e.Arg, e.Reason)
}

// UnsafeEnvError reports a variable of a launcher's environment that the
// launch policy refuses, such as LD_PRELOAD or NODE_OPTIONS=--require, or
// inherit_env.
type UnsafeEnvError struct {
	Command string // the launcher, e.g. npx
	Name    string // the variable; "" for inherit_env
	Rule    string // the name a trusted file allows it by, e.g. env.LD_PRELOAD
	Reason  string // what the variable does
	Fix     string // how to do without it
}

// Error names the variable, the launcher and what the variable does.
func (e *UnsafeEnvError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("inherit_env is refused for %s: %s", e.Command, e.Reason)
	}
	return fmt.Sprintf("environment variable %s is refused for %s: %s", e.Name, e.Command, e.Reason)
}

// UnknownFieldError reports a key that is not part of the format.
type UnknownFieldError struct {
	Field      string // dotted path of the unknown key, e.g. servers.github.urll
	Suggestion string // the closest known key, or ""
}

// Error names the field and any suggestion.
func (e *UnknownFieldError) Error() string {
	if e.Suggestion != "" {
		return fmt.Sprintf("unknown field %s (did you mean %q?)", e.Field, e.Suggestion)
	}
	return "unknown field " + e.Field
}

// problems collects problems and warnings while a configuration is read.
type problems struct {
	errs  []Problem
	warns []Problem
}

// add records a problem. A nil err becomes a plain error with the message.
func (ps *problems) add(pos Pos, field, msg, fix string, err error) {
	if err == nil {
		err = errors.New(msg)
	}
	ps.errs = append(ps.errs, Problem{Pos: pos, Field: field, Message: msg, Fix: fix, Err: err})
}

// warn records a non-fatal note.
func (ps *problems) warn(pos Pos, field, msg, fix string) {
	ps.warns = append(ps.warns, Problem{Pos: pos, Field: field, Message: msg, Fix: fix, Err: errors.New(msg)})
}

// MissingPathError reports a server's env file, working directory or
// root that does not exist. Loading keeps the server, unable to start, in its
// Server.CannotStart (the upstream supervisor shows it as cannot_start);
// `config import` imports the server as written and warns (ImportReport),
// for the user to create it.
type MissingPathError struct {
	Server string // the server's name
	Field  string // dotted path of the field, e.g. servers.api.env_file
	What   string // "env file" or "directory"
	Path   string // absolute, as looked for
	Err    error  // the cause (fs.ErrNotExist)
}

// Error names the server, what is missing and where it was looked for.
func (e *MissingPathError) Error() string {
	return fmt.Sprintf("%s %s of server %s does not exist", e.What, e.Path, e.Server)
}

// Unwrap returns the cause.
func (e *MissingPathError) Unwrap() error { return e.Err }
