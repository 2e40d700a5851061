package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// Command groups of the root help.
const (
	groupServers  = "servers"
	groupOperate  = "operate"
	groupAutomate = "automate"
)

// logLevels are the values --log-level takes.
var logLevels = []string{"debug", "info", "warn", "error"}

// newRoot builds the command tree, bound to a.
func newRoot(a *app) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "switchboard",
		Short: "Connect MCP servers to the people, programs and agents that use them",
		Long: `switchboard connects MCP servers to the people, programs and agents that use them:
one configuration, one gateway endpoint for every MCP client, and commands to list,
call and automate the servers' tools from a terminal.

Without a configuration file it runs the built-in task server (and, inside a git
work tree, the built-in project server). Docs: docs/cli.md, docs/configuration.md.`,
		Example: `  switchboard serve
  switchboard servers
  switchboard call tasks create_task title="Buy milk"
  switchboard help call`,
		Args:               cobra.ArbitraryArgs,
		SilenceErrors:      true,
		SilenceUsage:       true,
		DisableSuggestions: true, // unknownCommand suggests, with the project's edit distance
		PersistentPreRunE:  a.before,
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				return a.version()
			}
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			_ = cmd.Help()
			return &exitError{ExitUsage}
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true // newCompletionCmd has examples
	root.Flags().BoolVar(&showVersion, "version", false, "print the version (as the version command does)")

	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "configuration `file` (default: ./switchboard.yaml, then the user config dir, else the embedded default)")
	pf.BoolVar(&a.json, "json", false, "print JSON for scripts (the same as --output json)")
	pf.StringVar(&a.output, "output", "", "output `format`: table (for a person), json or yaml (default table)")
	pf.StringVar(&a.logLevel, "log-level", "", "write logs to stderr at this `level`: debug, info, warn, error (default: none; serve and builtin: warn)")
	pf.StringVar(&a.stateDir, "state-dir", "", "state `directory` (default $SWITCHBOARD_STATE_DIR, else $XDG_STATE_HOME/switchboard, else ~/.local/state/switchboard)")
	_ = root.RegisterFlagCompletionFunc("config", completeFiles("yaml", "yml", "json"))
	_ = root.RegisterFlagCompletionFunc("output", fixedCompletion(outputFormats...))
	_ = root.RegisterFlagCompletionFunc("log-level", fixedCompletion(logLevels...))
	_ = root.RegisterFlagCompletionFunc("state-dir", completeDirs)
	root.SetFlagErrorFunc(a.flagError)

	root.AddGroup(
		&cobra.Group{ID: groupServers, Title: "Use the servers:"},
		&cobra.Group{ID: groupOperate, Title: "Run and operate:"},
		&cobra.Group{ID: groupAutomate, Title: "Automate:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add(groupServers, newServersCmd(a), newToolsCmd(a), newToolCmd(a), newCallCmd(a), newTaskCmd(a),
		newPromptsCmd(a), newPromptCmd(a), newResourcesCmd(a), newReadCmd(a))
	add(groupOperate, newServeCmd(a), newReloadCmd(a), newStopCmd(a), newResumeCmd(a),
		newHistoryCmd(a), newAuditCmd(a), newConfigCmd(a), newClientCmd(a), newAuthCmd(a))
	add(groupAutomate, newHooksCmd(a), newDocCmd(a), newAgentCmd(a), newBuiltinCmd(a))
	root.AddCommand(newVersionCmd(a), newCompletionCmd(a))
	helpText := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		width, ok := a.widthOf(out)
		if !ok {
			helpText(c, args)
			return
		}
		var b bytes.Buffer
		c.SetOut(&b)
		helpText(c, args)
		c.SetOut(out)
		_, _ = io.WriteString(out, wrapFlagUsages(b.String(), width))
	})
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultHelpCmd()
	forEachCommand(root, func(c *cobra.Command) {
		c.InitDefaultHelpFlag() // so that `help CMD` lists it as `CMD --help` does
		if c.Args == nil {
			c.Args = cobra.ArbitraryArgs // each command checks its own, with its own words
		}
	})
	return root
}

// before runs ahead of every command: it records the command's name for
// messages and checks the global flags.
func (a *app) before(cmd *cobra.Command, _ []string) error {
	a.cmd = commandName(cmd)
	switch a.output {
	case "":
		if a.json {
			a.output = outputJSON
		}
	case outputJSON, outputYAML:
		if a.json && a.output != outputJSON {
			return usagef("give --json or --output %s, not both", a.output)
		}
		a.json = true
	case outputTable:
		if a.json {
			return usagef("give --json or --output table, not both")
		}
	default:
		return invalidChoice("--output", a.output, outputFormats)
	}
	if a.logLevel != "" && !contains(logLevels, a.logLevel) {
		return invalidChoice("--log-level", a.logLevel, logLevels)
	}
	// Relative paths are relative to the command's working directory.
	a.configPath, a.stateDir = a.inWorkDir(a.configPath), a.inWorkDir(a.stateDir)
	return nil
}

// invalidChoice is the usage error of a flag given a value not in choices.
func invalidChoice(flag, value string, choices []string) error {
	msg := fmt.Sprintf("invalid %s %q: want %s", flag, value, orList(choices))
	if s := suggest.Closest(value, choices, 1); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return &usageError{msg}
}

// orList renders choices as "a, b or c".
func orList(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// commandName is cmd's path after "switchboard".
func commandName(cmd *cobra.Command) string {
	path := cmd.CommandPath()
	if i := strings.IndexByte(path, ' '); i >= 0 {
		return path[i+1:]
	}
	return ""
}

// forEachCommand calls fn for cmd and every command below it.
func forEachCommand(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		forEachCommand(c, fn)
	}
}

// unknownCommand is the usage error for a command (or subcommand) name
// that parent does not have, with the closest names.
func unknownCommand(parent *cobra.Command, name string) error {
	var names []string
	for _, c := range parent.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
		}
	}
	what, help := "command", "switchboard help"
	if parent.HasParent() {
		what, help = parent.Name()+" subcommand", "switchboard help "+commandName(parent)
	}
	msg := fmt.Sprintf("unknown %s %q", what, name)
	// A word that means the same (SuggestFor: config check for validate)
	// before one spelt alike.
	var meant string
	for _, c := range parent.Commands() {
		if slices.Contains(c.SuggestFor, name) {
			meant = c.Name()
		}
	}
	if meant != "" {
		msg += fmt.Sprintf("; did you mean %q?", meant)
	} else if s := suggest.Closest(name, names, 1); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	} else if parent.HasParent() {
		msg += "; want " + orList(names)
	} else {
		msg += fmt.Sprintf("; run '%s' for the list", help)
	}
	return &usageError{msg}
}

// subcommandRequired is the RunE of a command that only groups
// subcommands: it names the missing or unknown subcommand.
func subcommandRequired(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(cmd, args[0])
	}
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	return usagef("missing subcommand: want %s; run 'switchboard help %s' for more", orList(names), commandName(cmd))
}

// flagError turns a flag parsing error into a usage error that names the
// flag and the form it wants, or the closest flag for an unknown one.
func (a *app) flagError(cmd *cobra.Command, err error) error {
	a.cmd = commandName(cmd)
	var (
		notExist *pflag.NotExistError
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		written := "--" + name
		if group := notExist.GetSpecifiedShortnames(); group != "" {
			written = "-" + group
			if len(group) > 1 {
				name = group // most likely a long flag written with one dash
			}
		}
		msg := fmt.Sprintf("unknown flag %s", written)
		if s := suggest.Closest(name, flagNames(cmd), 1); len(s) > 0 {
			return usagef("%s; did you mean --%s?", msg, s[0])
		}
		return usagef("%s; run 'switchboard help %s' for its flags", msg, commandName(cmd))
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		if reason, ok := errors.AsType[flagReason](err); ok {
			return usagef("invalid --%s %q: %s; want %s", f.Name, invalid.GetValue(), reason, flagWant(f))
		}
		return usagef("invalid --%s %q: want %s", f.Name, invalid.GetValue(), flagWant(f))
	case errors.As(err, &required):
		f := required.GetFlag()
		return usagef("--%s needs a value: %s", f.Name, flagWant(f))
	}
	return &usageError{err.Error()}
}

// flagNames lists the long names of the flags cmd takes.
func flagNames(cmd *cobra.Command) []string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !contains(names, f.Name) {
			names = append(names, f.Name)
		}
	})
	return names
}

// wanter is a flag value that says what form it wants.
type wanter interface{ want() string }

// flagWant says what form a flag's value takes.
func flagWant(f *pflag.Flag) string {
	if w, ok := f.Value.(wanter); ok {
		return w.want()
	}
	switch f.Value.Type() {
	case "duration":
		return "a duration like 30s, 5m or 1h30m"
	case "int", "int64", "int32":
		return "a whole number"
	case "float64", "float32":
		return "a number, such as 0.5"
	case "bool":
		return "true or false"
	}
	name, _ := pflag.UnquoteUsage(f)
	if name == "" {
		name = "value"
	}
	return "a " + name
}

// normalizeArgs rewrites a command line into the order and spelling cobra
// parses: the command path first, so that flags may come before a
// subcommand (`config --config FILE show`), and single-dash long flags
// (`-json`, which Go's flag package took) with two dashes. Which flags
// take a value comes from the command tree itself.
func normalizeArgs(root *cobra.Command, args []string) []string {
	if len(args) > 0 && strings.HasPrefix(args[0], "__complete") {
		return args // the shell's completion request: cobra parses it itself
	}
	root.InitDefaultHelpCmd()
	var path, rest []string
	cmd, descending := root, true
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			rest = append(rest, args[i:]...)
			return append(path, rest...)
		case len(arg) > 1 && arg[0] == '-':
			known := knownFlags(cmd, descending)
			arg = longForm(arg, known)
			rest = append(rest, arg)
			if takesValue(arg, known) && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
		case descending:
			if child := findChild(cmd, arg); child != nil {
				path = append(path, arg)
				cmd = child
				continue
			}
			descending = false
			rest = append(rest, arg)
		default:
			rest = append(rest, arg)
		}
	}
	return append(path, rest...)
}

// findChild returns the subcommand of cmd called name, or nil.
func findChild(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// knownFlags returns the flags cmd takes, by long name and by shorthand;
// with below, those of the commands below it too (a flag may come before
// the subcommand it belongs to).
func knownFlags(cmd *cobra.Command, below bool) map[string]*pflag.Flag {
	known := map[string]*pflag.Flag{}
	addSet := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if _, ok := known["--"+f.Name]; !ok {
				known["--"+f.Name] = f
			}
			if f.Shorthand != "" {
				known["-"+f.Shorthand] = f
			}
		})
	}
	addSet(cmd.Flags())
	addSet(cmd.InheritedFlags())
	if below {
		forEachCommand(cmd, func(c *cobra.Command) { addSet(c.Flags()) })
	}
	return known
}

// longForm returns a single-dash long flag (-json, -config=x) with two
// dashes when it names a known long flag; anything else as it is.
func longForm(arg string, known map[string]*pflag.Flag) string {
	if strings.HasPrefix(arg, "--") {
		return arg
	}
	name, _, _ := strings.Cut(arg[1:], "=")
	if len(name) > 1 && known["--"+name] != nil {
		return "-" + arg
	}
	return arg
}

// takesValue reports whether the flag arg, written without "=", takes
// the next argument as its value.
func takesValue(arg string, known map[string]*pflag.Flag) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	var f *pflag.Flag
	if strings.HasPrefix(arg, "--") {
		f = known[arg]
	} else if len(arg) == 2 {
		f = known[arg]
	}
	return f != nil && f.NoOptDefVal == ""
}

// newHelpCmd is `switchboard help [COMMAND]`.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND [SUBCOMMAND]]",
		Short: "Show the full help of a command",
		Long:  "Show the full help of a command: what it does, its flags with their defaults, and examples.",
		Example: `  switchboard help call
  switchboard help hooks fire`,
		Args: cobra.ArbitraryArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			parent, rest, err := cmd.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, c := range parent.Commands() {
				if c.IsAvailableCommand() {
					out = append(out, withDesc(c.Name(), c.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil {
				return &usageError{err.Error()}
			}
			if len(rest) > 0 {
				return unknownCommand(target, rest[0])
			}
			return target.Help()
		},
	}
}

// CommandTree returns the command tree, for tools that document it (the
// man pages of `make man`); its commands print nothing when run.
func CommandTree() *cobra.Command {
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard})
	root.DisableAutoGenTag = true
	return root
}

// wrapFlagUsages wraps the flags' descriptions in a command's help to
// width, each continuation line under the description's column (as
// kubectl and gh do): pflag writes each flag on one line, which a narrow
// terminal would break anywhere. Other lines are left as they are.
func wrapFlagUsages(help string, width int) string {
	lines := strings.Split(help, "\n")
	var out []string
	col := 0
	for _, line := range lines {
		switch {
		case line == "Flags:" || line == "Global Flags:":
			col = -1 // found on the section's first flag
		case strings.TrimSpace(line) == "":
			col = 0
		case col != 0:
			if col < 0 {
				col = usageColumn(line)
			}
			if col > 0 && utf8.RuneCountInString(line) > width && width-col >= 20 {
				wrapped := wrapText(string([]rune(line)[col:]), width-col)
				line = string([]rune(line)[:col]) + strings.Join(wrapped, "\n"+strings.Repeat(" ", col))
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// usageColumn is where a pflag flag line's description starts: after the
// first run of two or more spaces that follows the flag's name; 0 when
// the line has none.
func usageColumn(line string) int {
	r := []rune(line)
	i := 0
	for i < len(r) && r[i] == ' ' {
		i++
	}
	for ; i+1 < len(r); i++ {
		if r[i] == ' ' && r[i+1] == ' ' {
			for i < len(r) && r[i] == ' ' {
				i++
			}
			if i < len(r) {
				return i
			}
			return 0
		}
	}
	return 0
}
