package cli

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// shells are the shells `switchboard completion` writes a script for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

// newCompletionCmd is `switchboard completion SHELL`.
func newCompletionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Write the shell completion script for bash, zsh, fish or PowerShell",
		Long: `Write the shell completion script to stdout. It completes commands, flags and their
values: server names, tool names (from the running daemon when there is one, else by
connecting the server), view names, hook names, event names and file paths.

Load it in the current shell, or install it where your shell looks for completions.`,
		Example: `  # bash, this shell only (with or without the bash-completion package):
  source <(switchboard completion bash)
  # bash, every new shell (with the bash-completion package; else source it in ~/.bashrc):
  switchboard completion bash > /etc/bash_completion.d/switchboard
  # zsh:
  switchboard completion zsh > "${fpath[1]}/_switchboard"
  # fish:
  switchboard completion fish > ~/.config/fish/completions/switchboard.fish
  # PowerShell:
  switchboard completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: shells,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("give one shell: %s", orList(shells))
			}
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return writeBashCompletion(a.stdout, root)
			case "zsh":
				return root.GenZshCompletion(a.stdout)
			case "fish":
				return root.GenFishCompletion(a.stdout, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(a.stdout)
			}
			return invalidChoice("shell", args[0], shells)
		},
	}
}

// withDesc is a completion with its description, when it has one.
func withDesc(name, desc string) cobra.Completion {
	if desc = firstLine(desc, 60); desc == "" {
		return name
	}
	return cobra.CompletionWithDesc(name, desc)
}

// completeFunc completes a positional argument or a flag's value.
type completeFunc = cobra.CompletionFunc

// fixedCompletion completes one of values.
func fixedCompletion(values ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFiles completes file names, those with one of exts when given.
func completeFiles(exts ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(exts) == 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// onlyFirst completes the first positional argument with f, and no other.
func onlyFirst(f completeFunc) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(cmd, args, toComplete)
	}
}

// completeDirs completes directory names.
func completeDirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// completionTimeout bounds how long a completion may connect a server to
// learn its tools.
const completionTimeout = 10 * time.Second

// completionConfig loads the configuration for a completion, or nil.
func (a *app) completionConfig() *config.Config {
	a.noPrompt = true // a completion never asks
	cfg, err := a.loadConfig()
	if err != nil {
		return nil
	}
	return cfg
}

// serverCompletions are the configured servers, with their descriptions.
func (a *app) serverCompletions() []cobra.Completion {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil
	}
	var out []cobra.Completion
	for _, s := range cfg.Servers {
		out = append(out, withDesc(s.Name, s.Description))
	}
	return out
}

// completeServer completes a SERVER argument (none with --stdio/--url).
func (a *app) completeServer(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if a.adhoc() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.serverCompletions(), cobra.ShellCompDirectiveNoFileComp
}

// completeNetworkServer completes the name of a server that can sign in:
// one reached over the network (http, sse, websocket), not a stdio or
// built-in one, which auth login refuses.
func (a *app) completeNetworkServer(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil || a.adhoc() {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range cfg.Servers {
		switch s.Transport {
		case config.TransportHTTP, config.TransportSSE, config.TransportWebSocket:
			out = append(out, withDesc(s.Name, s.Description))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeServerList completes a comma-separated list of servers.
func (a *app) completeServerList(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done = toComplete[:i+1]
	}
	var out []cobra.Completion
	for _, s := range a.serverCompletions() {
		out = append(out, done+s)
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeServerThenTool completes `SERVER TOOL`: a server first, then
// one of its tools. With --stdio/--url the first argument is the tool.
func (a *app) completeServerThenTool(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeServerThen(cmd, args, a.toolCompletions)
}

// completeServerThenURI completes read's SERVER, then the URIs of that
// server's resources (with --stdio or --url, the URIs at once), named by
// their titles.
func (a *app) completeServerThenURI(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeServerThen(cmd, args, a.uriCompletions)
}

// completeServerThen completes a server name, then what of the server
// names lists (the ad hoc server's at once with --stdio or --url).
func (a *app) completeServerThen(cmd *cobra.Command, args []string, names func(ctx context.Context, server string) []cobra.Completion) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch {
	case a.adhoc() && len(args) == 0:
		return names(cmd.Context(), ""), cobra.ShellCompDirectiveNoFileComp
	case !a.adhoc() && len(args) == 0:
		return a.serverCompletions(), cobra.ShellCompDirectiveNoFileComp
	case !a.adhoc() && len(args) == 1:
		return names(cmd.Context(), args[0]), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// uriCompletions are the URIs of server's resources (the ad hoc server's
// when ""), from the daemon or by connecting the server, as
// toolCompletions. Templates are left out: they are not URIs to read.
func (a *app) uriCompletions(ctx context.Context, server string) []cobra.Completion {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil
	}
	if server == "" && a.adhoc() {
		server = cfg.Servers[0].Name
	}
	if _, ok := cfg.Server(server); !ok {
		return nil
	}
	var out []cobra.Completion
	a.withCompletionBackend(ctx, cfg, server, func(ctx context.Context, b control.Backend) {
		list, err := b.Resources(ctx, server)
		if err != nil {
			return
		}
		for _, r := range list.Resources {
			out = append(out, withDesc(r.URI, cmp.Or(r.Title, r.Name, r.Description)))
		}
	})
	return out
}

// completeToolFlag completes the --tool flag of a filter: the tools of the
// --server given, else of every server.
func (a *app) completeToolFlag(server *string) completeFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return a.toolCompletions(cmd.Context(), *server), cobra.ShellCompDirectiveNoFileComp
	}
}

// toolCompletions are the tools of server (every server when ""): from the
// daemon when one serves this configuration, else by connecting the
// server, within completionTimeout.
func (a *app) toolCompletions(ctx context.Context, server string) []cobra.Completion {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil
	}
	if server == "" && a.adhoc() {
		server = cfg.Servers[0].Name
	}
	if server != "" {
		if _, ok := cfg.Server(server); !ok {
			return nil
		}
	}
	var out []cobra.Completion
	a.withCompletionBackend(ctx, cfg, server, func(ctx context.Context, b control.Backend) {
		list, err := b.Tools(ctx, server)
		if err != nil {
			return
		}
		for _, t := range list.Tools {
			out = append(out, withDesc(t.Name, t.Description))
		}
	})
	return out
}

// withCompletionBackend calls fn with the backend that answers for server
// ("" for every server): the daemon's when one serves this configuration,
// else one connected to that server, all within completionTimeout. fn is
// not called when neither can be had: a completion offers nothing then.
func (a *app) withCompletionBackend(ctx context.Context, cfg *config.Config, server string, fn func(context.Context, control.Backend)) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	var only []string
	if server != "" {
		only = []string{server}
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true, only: only})
	if err != nil {
		return
	}
	defer done()
	fn(ctx, b)
}

// completeViews completes a gateway view name.
func (a *app) completeViews(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, v := range cfg.Gateway.Views {
		out = append(out, v.Name)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeHooks completes a hook name.
func (a *app) completeHooks(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, h := range cfg.Hooks.List {
		out = append(out, withDesc(h.Name, "on "+h.On))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeEvents completes an event name: the on: of each hook that names
// one event (not a pattern).
func (a *app) completeEvents(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := a.completionConfig()
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, h := range cfg.Hooks.List {
		if !strings.ContainsAny(h.On, "*?[") && !contains(out, h.On) {
			out = append(out, h.On)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// noFilesUnlessAsked makes the shell offer file names only where a file
// belongs. Without a completion of its own, cobra lets the shell complete
// any argument or flag value with file names: `hooks log <TAB>` and
// `call … --timeout <TAB>` would list the folder. So every command that
// has no completion for its arguments, and every flag taking a value that
// has none for it (a duration, a number, a URL, a name), completes
// nothing; arguments and flags that take a file or a folder register
// completeFiles or completeDirs.
func noFilesUnlessAsked(root *cobra.Command) {
	none := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.HasSubCommands() && c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 {
			c.ValidArgsFunction = none
		}
		flags := func(f *pflag.Flag) {
			if f.NoOptDefVal != "" { // a boolean: no value to complete
				return
			}
			if _, ok := c.GetFlagCompletionFunc(f.Name); !ok {
				_ = c.RegisterFlagCompletionFunc(f.Name, none)
			}
		}
		c.PersistentFlags().VisitAll(flags)
		c.LocalFlags().VisitAll(flags)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// plainUsages takes pflag's backquotes out of every flag's usage, for a
// shell's completion request: in --help they name the flag's value
// ("write logs at this `level`" prints --log-level level), but bash, zsh,
// fish and PowerShell show the usage as the flag's description, where
// they would show as they are.
func plainUsages(root *cobra.Command) {
	strip := func(f *pflag.Flag) { f.Usage = strings.ReplaceAll(f.Usage, "`", "") }
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(strip)
		c.PersistentFlags().VisitAll(strip)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
