package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// newReloadCmd is `switchboard reload`.
func newReloadCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Make the running daemon reload its configuration",
		Long: `Make the running daemon reload its configuration file and print what changed: servers
added, removed, changed and unchanged, and any warnings (on stderr). The daemon reads the
file in its own environment, so the variables it refers to need not be set here. With no
daemon for this configuration it validates the file, prints the result and exits 1,
saying that no daemon is running, or which configuration the running one serves.`,
		Example: `  switchboard reload
  switchboard reload --config /etc/switchboard/switchboard.yaml --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("reload takes no arguments")
			}
			return a.reload(cmd.Context())
		},
	}
}

// reload makes the running daemon reload its configuration file. The
// daemon reads and validates the file in its own environment: the caller
// names the file but does not load it, so it needs none of the variables
// (token_env, ${VAR}) the file refers to. With no daemon for this
// configuration it validates the file here, prints the result and fails,
// saying so.
func (a *app) reload(ctx context.Context) error {
	given := a.configPath
	c, st, err := a.fileDaemon(ctx)
	if err != nil {
		return err
	}
	found := ""
	if c == nil && !a.adhoc() {
		if found, err = a.configSource(); err != nil {
			return err
		}
		if found == "" && st.PID != 0 && st.ConfigSource != "" {
			// No file here (nor --config): reload what the running daemon
			// serves, as every command without --config follows it.
			fmt.Fprintf(a.stderr, "note: reloading what the running daemon (pid %d) serves: %s\n", st.PID, st.ConfigSource)
			a.configPath = st.ConfigSource
			if c, st, err = a.fileDaemon(ctx); err != nil {
				return err
			}
		}
	}
	if c == nil {
		if found != "" {
			// Check the file found here (the one the person edited), not
			// the one another daemon serves.
			a.configPath = found
		}
		cfg, err := a.loadConfig()
		if err != nil {
			return err
		}
		src := cfg.Source
		if src == "" {
			src = "the embedded default"
		}
		if a.json {
			if err := a.printJSON(map[string]any{"source": src, "valid": true, "servers": len(cfg.Servers), "reloaded": false}); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(a.stdout, "configuration OK: %s, %d server(s)\n", src, len(cfg.Servers))
		}
		if st.PID != 0 {
			fe := fault.New(fault.Config, "the running daemon (pid %d) serves %s, not %s; nothing was reloaded", st.PID, sourceName(st.ConfigSource), src)
			if st.ConfigSource != "" {
				fe.WithSuggestions("to reload what the daemon serves, run: switchboard reload --config " + shellQuote(st.ConfigSource))
			}
			serve := "switchboard serve"
			if given != "" {
				serve += " --config " + shellQuote(cfg.Source)
			}
			return fe.WithSuggestions(fmt.Sprintf("a daemon serves one configuration for its life: to serve %s, stop the daemon (Ctrl-C where it runs, or kill %d) and run: %s", src, st.PID, serve))
		}
		return fault.New(fault.Config, "no daemon is running, so nothing was reloaded").
			WithSuggestions("start one with 'switchboard serve'")
	}
	defer c.Close()
	rep, err := c.Reload(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	a.printReload(rep)
	return nil
}

// sourceName names a configuration source for a person.
func sourceName(src string) string {
	if src == "" {
		return "the embedded default"
	}
	return src
}

// printReload prints what a reload changed.
func (a *app) printReload(rep control.ReloadReport) {
	fmt.Fprintf(a.stdout, "reloaded %s: %d added, %d removed, %d changed, %d unchanged\n",
		sourceName(rep.Source), len(rep.Added), len(rep.Removed), len(rep.Changed), len(rep.Unchanged))
	for _, l := range []struct {
		what  string
		names []string
	}{{"added", rep.Added}, {"removed", rep.Removed}, {"changed", rep.Changed}, {"also changed", rep.Blocks}} {
		if len(l.names) > 0 {
			fmt.Fprintf(a.stdout, "  %s: %s\n", l.what, strings.Join(l.names, ", "))
		}
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
}
