// Package cli is the switchboard command line: one file per command, all
// reached through [Main], which the binary calls with its arguments.
//
// Commands print results to stdout and one actionable line per error to
// stderr, take --json for output a script reads, and exit 0 (ok), 1
// (failure), 2 (usage) or 130 (interrupted).
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// Version is the version printed by `switchboard version`; set at build time
// with -ldflags "-X github.com/switchboard-mcp/switchboard/internal/cli.Version=v1.2.3".
var Version = "dev"

// command is one subcommand.
type command struct {
	name    string
	args    string // usage synopsis after the name
	summary string
	run     func(ctx context.Context, a *app, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"serve", "", "connect every configured server and keep it healthy", runServe},
		{"servers", "[enable|disable|refresh NAME]", "list servers with state, tools, latency and failures", runServers},
		{"tools", "[SERVER]", "list tools", runTools},
		{"tool", "SERVER TOOL", "show one tool's parameters", runTool},
		{"call", "SERVER TOOL [key=value ...]", "call a tool", runCall},
		{"prompts", "[SERVER]", "list prompts", runPrompts},
		{"prompt", "SERVER NAME [key=value ...]", "render a prompt", runPrompt},
		{"resources", "[SERVER]", "list resources and resource templates", runResources},
		{"read", "SERVER URI", "read a resource", runRead},
		{"history", "[show ID]", "list recorded calls, or show one", runHistory},
		{"stop", "", "stop all calls: new ones fail, those in flight are cancelled", runStop},
		{"resume", "", "allow calls again after stop", runResume},
		{"reload", "", "make the running daemon reload its configuration", runReload},
		{"hooks", "list|log|fire|trust|install-git", "list, fire, trust and inspect event hooks", runHooks},
		{"doc", "run|list FILE.md", "run the tool calls written in a Markdown document", runDoc},
		{"agent", "[PROMPT]", "let an LLM use the tools, within limits", runAgent},
		{"config", "validate|show|import", "check, show or convert configuration", runConfig},
		{"builtin", "task-api|tasks", "run a built-in server: the task REST backend, the task MCP server", runBuiltin},
		{"version", "", "print the version", runVersion},
	}
}

// usageError is a mistake in how a command was invoked; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries a specific exit code without further output.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				fmt.Fprintf(stdout, "usage: switchboard %s %s\n\n%s\n\nRun 'switchboard %s -h' for its flags.\n", c.name, c.args, c.summary, c.name)
				return ExitOK
			}
		}
		printUsage(stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "switchboard: unknown command %q; run 'switchboard help' for the list\n", args[0])
		return ExitUsage
	}
	a := &app{stdout: stdout, stderr: stderr, cmd: c.name}
	err := c.run(ctx, a, args[1:])
	if a.emb != nil {
		a.emb.stop()
	}
	return a.exit(ctx, err)
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "switchboard connects MCP servers to the people, programs and agents that use them.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: switchboard COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %-32s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "common flags: --config FILE, --stdio \"CMD ARGS\" or --url URL (ad hoc server), --json")
	fmt.Fprintln(w, "docs: docs/cli.md, docs/configuration.md")
}

// exit reports err on stderr and maps it to an exit code.
func (a *app) exit(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if a.json {
			a.printError(fault.New(fault.Validation, "%s", ue.msg))
		} else {
			fmt.Fprintf(a.stderr, "switchboard %s: %s\n", a.cmd, ue.msg)
		}
		return ExitUsage
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var un *unavailableError
	if errors.As(err, &un) {
		if a.json {
			a.printError(un.fault())
		} else {
			for _, u := range un.lines {
				fmt.Fprintf(a.stderr, "switchboard %s: %s\n", a.cmd, oneLine(errors.New(u)))
			}
		}
		return ExitFailure
	}
	interrupted := ctx.Err() != nil && fault.KindOf(err) == fault.Cancelled
	if a.json && !interrupted {
		a.printError(jsonError(err))
	} else {
		fmt.Fprintf(a.stderr, "switchboard %s: %s\n", a.cmd, oneLine(err))
		if fe := fault.As(err); fe != nil {
			for _, s := range fe.Suggestions {
				if strings.Contains(fe.Message, fmt.Sprintf("%q", s)) {
					continue // the message already says it ("did you mean ...")
				}
				fmt.Fprintf(a.stderr, "  hint: %s\n", s)
			}
		}
	}
	if interrupted {
		return ExitInterrupted
	}
	return ExitFailure
}

// printError writes the structured error of a --json command to stderr,
// as {"error": {...}} on one line.
func (a *app) printError(fe *fault.Error) {
	enc := json.NewEncoder(a.stderr)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"error": fe})
}

// jsonError returns err as the structured error a --json command prints.
// Its message is the whole one-line message a terminal shows — the
// context the command added and the cause (a server's own words, a "no
// such file") — without the per-field problems, which are in
// details.fields.
func jsonError(err error) *fault.Error {
	fe := fault.As(err)
	out := *fe
	noFields := out
	noFields.Fields = nil
	msg := strings.Replace(err.Error(), fe.Error(), noFields.Error(), 1)
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", " | ")
	}
	out.Message = msg
	return &out
}

// unavailableError reports the servers in a listing's scope that are not
// connected, a line each; the listing itself was printed.
type unavailableError struct{ lines []string }

func (e *unavailableError) Error() string { return strings.Join(e.lines, "; ") }

// fault returns the one structured error --json prints for them all.
func (e *unavailableError) fault() *fault.Error {
	msg := e.lines[0]
	if len(e.lines) > 1 {
		msg = fmt.Sprintf("%d servers are unavailable: %s", len(e.lines), strings.Join(e.lines, "; "))
	}
	return fault.New(fault.Connection, "%s", msg).WithDetail("unavailable", e.lines).
		WithSuggestions("run 'switchboard servers' to see each server's state and last error")
}

// oneLine renders an error for a terminal: config problems keep one line
// each; anything else is folded to one line.
func oneLine(err error) string {
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		return "invalid configuration:\n" + ve.Error()
	}
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | ")
}

// app is the state shared by a command's run.
type app struct {
	stdout, stderr io.Writer
	cmd            string

	// common flags
	configPath string
	stdio      string
	url        string
	json       bool
	logLevel   string
	stateDir   string

	// emb is the running embedded default, when no file was found.
	emb *embedded

	// agentOpenLine says the agent's streamed text has not ended its line.
	agentOpenLine bool
}

// flags returns a flag set with the common flags registered.
func (a *app) flags(name string, adhoc bool) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	fs.StringVar(&a.configPath, "config", "", "configuration `file` (default: ./switchboard.yaml, then the user config dir)")
	fs.BoolVar(&a.json, "json", false, "print JSON for scripts")
	fs.StringVar(&a.logLevel, "log-level", "warn", "log `level` on stderr: debug, info, warn, error")
	fs.StringVar(&a.stateDir, "state-dir", "", "state `directory` (default $SWITCHBOARD_STATE_DIR, else the user state dir)")
	if adhoc {
		fs.StringVar(&a.stdio, "stdio", "", "use one ad hoc stdio server: `\"CMD ARGS\"` (not held to the allowlist)")
		fs.StringVar(&a.url, "url", "", "use one ad hoc network server at `URL` (http(s)://… streamable HTTP, …/sse SSE, ws(s):// WebSocket)")
	}
	return fs
}

// parse parses flags that may appear before, between or after positional
// arguments; "--" ends flag parsing.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// valueFlags are the flags, common or of some subcommand, that take a
// value as the next argument when written without "=".
var valueFlags = map[string]bool{
	"config": true, "log-level": true, "state-dir": true, "stdio": true, "url": true,
	"o": true, "limit": true, "only": true, "concurrency": true, "timeout": true,
	"server": true, "tool": true, "status": true, "source": true, "identity": true,
	"since": true, "before": true, "args": true, "out-dir": true, "max-duration": true,
	"max-cost": true, "event": true, "hook": true, "command": true,
}

// subcommand splits `COMMAND [flags] SUB [flags] [args]`: it returns the
// first positional argument (the subcommand) and the other arguments in
// order, so that flags may come before the subcommand as anywhere else.
// ok is false when there is no positional argument.
func subcommand(args []string) (sub string, rest []string, ok bool) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		if len(arg) > 1 && arg[0] == '-' {
			name := strings.TrimLeft(arg, "-")
			if !strings.Contains(name, "=") && valueFlags[name] {
				i++ // its value
			}
			continue
		}
		rest = append(append(rest, args[:i]...), args[i+1:]...)
		return arg, rest, true
	}
	return "", args, false
}

// adhoc reports whether --stdio or --url replaces the configuration.
func (a *app) adhoc() bool { return a.stdio != "" || a.url != "" }

// logger returns the stderr logger at the chosen level.
func (a *app) logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(a.logLevel)); err != nil {
		lvl = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
}

// loadConfig loads the configuration: the ad hoc server, the --config
// file, the file found in the usual places, or the embedded default (the
// built-in servers, started for the length of the command).
func (a *app) loadConfig() (*config.Config, error) {
	if a.stdio != "" && a.url != "" {
		return nil, usagef("give --stdio or --url, not both")
	}
	if a.adhoc() {
		cfg := config.Default()
		srv, err := config.AdHoc(a.stdio, a.url, cfg.Defaults)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		cfg.Servers = []config.Server{srv}
		return cfg, nil
	}
	path := a.configPath
	if path == "" {
		p, err := config.Find()
		if err != nil {
			return nil, err
		}
		path = p
	}
	if path == "" {
		if a.emb == nil {
			e, err := a.startEmbedded(context.Background())
			if err != nil {
				return nil, err
			}
			a.emb = e
		}
		return a.emb.cfg, nil
	}
	cfg, err := config.Load(path, config.Options{})
	var unset *config.UnresolvedVariableError
	if err != nil && errors.As(err, &unset) {
		// A daemon that serves this file has the variables it refers to
		// (token_env, ${VAR}) in its own environment, and the command will
		// ask the daemon: the caller's shell need not have them. The file
		// is read again with a stand-in for each unset variable, only to
		// know its servers and views; nothing runs on the stand-ins.
		if c, _ := a.daemonFor(context.Background(), path, false); c != nil {
			c.Close()
			standIn := func(name string) (string, bool) {
				if v, ok := os.LookupEnv(name); ok {
					return v, true
				}
				return unsetStandIn, true
			}
			if cfg2, err2 := config.Load(path, config.Options{LookupEnv: standIn}); err2 == nil {
				return cfg2, nil
			}
		}
	}
	return cfg, err
}

// unsetStandIn stands for a variable the caller's shell does not set while
// the daemon that serves the file does (see loadConfig).
const unsetStandIn = "set-in-the-daemon-environment"

// stateDirectory returns where Switchboard keeps state between runs.
func (a *app) stateDirectory() (string, error) {
	if a.stateDir != "" {
		return a.stateDir, nil
	}
	if d := os.Getenv("SWITCHBOARD_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return d + "/switchboard", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w; set SWITCHBOARD_STATE_DIR", err)
	}
	return home + "/.local/state/switchboard", nil
}

// printJSON writes v as indented JSON to stdout.
func (a *app) printJSON(v any) error { return a.printJSONTo(a.stdout, v) }

func runVersion(_ context.Context, a *app, args []string) error {
	fs := a.flags("version", false)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]string{"version": Version})
	}
	fmt.Fprintf(a.stdout, "switchboard %s\n", Version)
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printJSONTo writes v as indented JSON to w.
func (a *app) printJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
