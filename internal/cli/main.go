// Package cli is the switchboard command line: a cobra command tree with
// one file per command, all reached through [Main], which the binary calls
// with its arguments.
//
// Commands print results to stdout and one actionable line per error to
// stderr, take --json for output a script reads, and exit 0 (ok), 1
// (failure), 2 (usage) or 130 (interrupted).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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

// usageError is a mistake in how a command was invoked; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// exitError carries a specific exit code without further output.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, invocation{args: args, stdin: os.Stdin, stdout: stdout, stderr: stderr, env: os.LookupEnv})
}

// run runs the command line in inv and returns the exit code.
func run(ctx context.Context, inv invocation) int {
	a := &app{stdout: inv.stdout, stderr: inv.stderr, stdin: inv.stdin, env: inv.env, dir: inv.dir}
	root := newRoot(a)
	// Never nil: cobra would read os.Args instead.
	if len(inv.args) > 0 && strings.HasPrefix(inv.args[0], cobra.ShellCompRequestCmd) {
		plainUsages(root)
		noFilesUnlessAsked(root)
	}
	args := normalizeArgs(root, inv.args)
	a.askedJSON = asksForJSON(args)
	root.SetArgs(append([]string{}, args...))
	root.SetOut(inv.stdout)
	root.SetErr(inv.stderr)
	err := root.ExecuteContext(ctx)
	if a.emb != nil {
		a.emb.stop()
	}
	return a.exit(ctx, err)
}

// asksForJSON reports whether a command line (its flags in their long
// form, see normalizeArgs) asks for output for scripts: --json, or
// --output json or yaml, before any "--".
func asksForJSON(args []string) bool {
	for i, arg := range args {
		switch {
		case arg == "--":
			return false
		case arg == "--json" || arg == "--json=true":
			return true
		case arg == "--output" && i+1 < len(args):
			if v := args[i+1]; v == outputJSON || v == outputYAML {
				return true
			}
		case arg == "--output="+outputJSON || arg == "--output="+outputYAML:
			return true
		}
	}
	return false
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
	// A flag whose value is wrong stops the parse there, before a
	// --json after it is read: the line asked for JSON all the same.
	a.json = a.json || a.askedJSON
	var ue *usageError
	if errors.As(err, &ue) {
		if a.json {
			a.printError(fault.New(fault.Validation, "%s", ue.msg))
		} else {
			fmt.Fprintf(a.stderr, "%s: %s\n", a.prefix(), ue.msg)
		}
		return ExitUsage
	}
	var un *unavailableError
	if errors.As(err, &un) {
		if a.json {
			a.printError(un.fault())
		} else {
			for _, u := range un.lines {
				first, rest, _ := strings.Cut(u, "\n")
				fmt.Fprintf(a.stderr, "%s: %s\n", a.prefix(), oneLine(errors.New(first)))
				for _, l := range strings.Split(rest, "\n") {
					if l != "" && !alreadySaid(first, l) {
						fmt.Fprintln(a.stderr, l)
					}
				}
			}
		}
		return ExitFailure
	}
	interrupted := ctx.Err() != nil && fault.KindOf(err) == fault.Cancelled
	if ctx.Err() != nil && !interrupted && errors.Is(err, context.Canceled) {
		// Ctrl-C while something that classifies its own failures (the
		// store's opening and schema migration, say) waited on ctx: an
		// interruption, not that step's failure, and none of its hints.
		msg := "interrupted"
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Message != "" {
			msg += " while " + fe.Message
		}
		fmt.Fprintf(a.stderr, "%s: %s\n", a.prefix(), msg)
		return ExitInterrupted
	}
	switch {
	case interrupted:
		fmt.Fprintf(a.stderr, "%s: %s\n", a.prefix(), interruptedLine(err))
		for _, s := range fault.As(err).Suggestions {
			fmt.Fprintf(a.stderr, "  hint: %s\n", s)
		}
	case a.json:
		a.printError(jsonError(err))
	default:
		fmt.Fprintf(a.stderr, "%s: %s\n", a.prefix(), oneLine(err))
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

// interruptedLine says what a Ctrl-C stopped, in the words of the
// outermost classified error ("call to alpha/slow was cancelled"), without
// the context's own "context canceled", which tells a person nothing.
func interruptedLine(err error) string {
	msg := fault.As(err).Message
	switch {
	case msg == "" || msg == context.Canceled.Error():
		return "interrupted"
	case strings.Contains(msg, "interrupted"):
		return msg
	}
	return "interrupted: " + msg
}

// alreadySaid reports whether msg already says what the line "  hint: run:
// CMD" suggests (a sign-in error ends "run `CMD`"), so that it is not said
// twice on a terminal; --json keeps it among the suggestions.
func alreadySaid(msg, line string) bool {
	hint, ok := strings.CutPrefix(strings.TrimSpace(line), "hint: ")
	if !ok {
		return false
	}
	return strings.Contains(msg, strings.TrimPrefix(hint, "run: "))
}

// prefix starts an error line: "switchboard CMD".
func (a *app) prefix() string {
	if a.cmd == "" {
		return "switchboard"
	}
	return "switchboard " + a.cmd
}

// printError writes the structured error of a --json command to stderr,
// as {"error": {...}} on one line.
func (a *app) printError(fe *fault.Error) {
	_ = writeJSON(a.stderr, map[string]any{"error": fe}, false)
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
	if len(problemLines(fe)) > 0 {
		msg = fe.Message // the problems are in details.problems
	}
	out.Message = msg
	return &out
}

// unavailableError reports the servers in a listing's scope that are not
// connected, a line each; the listing itself was printed.
type unavailableError struct {
	lines []string
	// servers is the command that shows the servers' states: with the ad
	// hoc server's --stdio or --url, which it names.
	servers string
}

func (e *unavailableError) Error() string { return strings.Join(e.lines, "; ") }

// fault returns the one structured error --json prints for them all: the
// servers' messages, and what to try for each (a line's "  hint: " lines).
func (e *unavailableError) fault() *fault.Error {
	var msgs, tries []string
	for _, l := range e.lines {
		first, rest, _ := strings.Cut(l, "\n")
		msgs = append(msgs, first)
		for _, t := range strings.Split(rest, "\n") {
			if t = strings.TrimPrefix(strings.TrimSpace(t), "hint: "); t != "" && !slices.Contains(tries, t) {
				tries = append(tries, t)
			}
		}
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = fmt.Sprintf("%d servers are unavailable: %s", len(msgs), strings.Join(msgs, "; "))
	}
	return fault.New(fault.Connection, "%s", msg).WithDetail("unavailable", msgs).
		WithSuggestions(tries...).
		WithSuggestions(fmt.Sprintf("run '%s' to see each server's state and last error", e.servers))
}

// reportUnavailable returns the error that says why servers in scope are
// not connected (printed a line each, or as one --json error) and makes the
// exit code 1; nil when every one is connected.
func (a *app) reportUnavailable(lines []string) error {
	if len(lines) > 0 {
		servers := "switchboard servers"
		if a.adhoc() {
			servers += " " + a.adhocTarget()
		}
		return &unavailableError{lines: lines, servers: servers}
	}
	return nil
}

// oneLine renders an error for a terminal: config problems keep one line
// each; anything else is folded to one line.
func oneLine(err error) string {
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		return "invalid configuration:\n" + ve.Error()
	}
	if fe := fault.As(err); fe != nil {
		if lines := problemLines(fe); len(lines) > 0 {
			// A configuration the daemon refused (reload): one line each.
			return fe.Message + ":\n" + strings.Join(lines, "\n")
		}
	}
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | ")
}

// problemLines returns the configuration problems an error from the daemon
// lists in details.problems (a refused reload), one line each; nil when
// there are none.
func problemLines(fe *fault.Error) []string {
	var lines []string
	switch v := fe.Details["problems"].(type) {
	case []string:
		lines = v
	case []any:
		for _, p := range v {
			if s, ok := p.(string); ok {
				lines = append(lines, s)
			}
		}
	}
	return lines
}
