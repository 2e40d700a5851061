package cli

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// newServersCmd is `switchboard servers`, with enable, disable and
// refresh.
func newServersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "servers [NAME]",
		Short: "List servers with state, tools, latency and failures",
		Long: `List the configured servers (or the one called NAME) with their transport, state
(connected, error, disabled, auto-disabled, ...), number of tools, latency of one ping,
consecutive failures and a note with the last error or why the server is disabled. Exits 1
if any enabled server listed is not connected. With a daemon running for the same
configuration it answers from the daemon; otherwise it connects the servers once.`,
		Example: `  switchboard servers
  switchboard servers github
  switchboard servers --json
  switchboard servers --stdio "npx -y @modelcontextprotocol/server-everything"
  switchboard servers disable github`,
		ValidArgsFunction: onlyFirst(a.completeServer),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				// servers SUBCOMMAND NAME, the subcommand mistyped.
				return unknownCommand(cmd, args[0])
			case len(args) == 1 && findChild(cmd, args[0]) == nil && !a.adhoc():
				// A server's name (the row of one server), else a
				// mistyped subcommand.
				cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				if _, ok := cfg.Server(args[0]); ok {
					return a.servers(cmd.Context(), args[0])
				}
				return unknownServerOrCommand(cmd, cfg, args[0])
			case len(args) == 1:
				return unknownCommand(cmd, args[0])
			}
			return a.servers(cmd.Context(), "")
		},
	}
	a.adhocFlags(cmd)
	for _, act := range []struct{ name, short, long string }{
		{"enable", "Enable a server again and reset its failure counters",
			"Clear a user or auto disable and reset the failure counters. Kept in the state directory; with a daemon running it takes effect there at once. A server with enabled: false in the configuration can only be enabled there."},
		{"disable", "Keep a server disconnected until it is enabled",
			"Keep a server disconnected until 'switchboard servers enable NAME'. Kept in the state directory; with a daemon running it takes effect there at once."},
		{"refresh", "Rediscover a server's tools, prompts and resources",
			"Rediscover a server's tools, prompts and resources and print the counts."},
	} {
		action := act.name
		cmd.AddCommand(&cobra.Command{
			Use:               action + " NAME",
			Short:             act.short,
			Long:              act.long,
			Example:           fmt.Sprintf("  switchboard servers %s github\n  switchboard servers %s github --json", action, action),
			ValidArgsFunction: onlyFirst(a.completeServer),
			RunE: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return usagef("usage: switchboard servers %s NAME", action)
				}
				cfg, err := a.loadConfig()
				if err != nil {
					return err
				}
				return a.serverAction(cmd.Context(), cfg, action, args[0])
			},
		})
	}
	return cmd
}

// unknownServerOrCommand is the usage error for `servers NAME` when NAME
// is neither a subcommand nor a configured server: the closest of both.
func unknownServerOrCommand(cmd *cobra.Command, cfg *config.Config, name string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	var servers []string
	for _, srv := range cfg.Servers {
		servers = append(servers, srv.Name)
	}
	msg := fmt.Sprintf("no server named %q is configured, nor is it a servers subcommand", name)
	if s := suggest.Closest(name, append(servers, names...), 1); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	} else {
		msg += fmt.Sprintf("; want a server (%s) or %s", strings.Join(servers, ", "), orList(names))
	}
	return &usageError{msg}
}

// servers prints the servers' table: every server, or only the one
// called only.
func (a *app) servers(ctx context.Context, only string) error {
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if len(cfg.Servers) == 0 {
		if a.json {
			return a.printJSON([]control.ServerInfo{})
		}
		fmt.Fprintln(a.stdout, "No servers are configured. Add some to switchboard.yaml (see docs/configuration.md), or try one ad hoc:")
		fmt.Fprintln(a.stdout, "  switchboard servers --stdio \"npx -y @modelcontextprotocol/server-everything\"")
		return nil
	}
	sc := scope{connect: true}
	if only != "" {
		sc.only = []string{only}
	}
	b, done, err := a.backend(ctx, cfg, sc)
	if err != nil {
		return err
	}
	defer done()
	rows, err := b.Servers(ctx)
	if err != nil {
		return err
	}
	if only != "" {
		rows = slices.DeleteFunc(rows, func(r control.ServerInfo) bool { return r.Server != only })
	}
	if a.json {
		out := make([]serverRow, len(rows))
		for i, r := range rows {
			out[i] = serverRow{ServerInfo: r}
			if !listsNothing(r.Snapshot) {
				out[i].Tools, out[i].Prompts, out[i].Resources = &r.Tools, &r.Prompts, &r.Resources
			} else {
				out[i].LatencyMS, out[i].Latency = "", 0
			}
		}
		if err := a.printJSON(out); err != nil {
			return err
		}
	} else {
		// The note is whole (the command to run may end it); a terminal
		// narrower than the table cuts it there.
		t := a.newTable("NAME", "TRANSPORT", "STATE", "TOOLS", "LATENCY", "FAILURES", "NOTE").keepWhole(0)
		for _, r := range rows {
			tools, lat := fmt.Sprint(r.Tools), "-"
			if r.LatencyMS != "" {
				lat = r.LatencyMS + "ms"
			}
			if listsNothing(r.Snapshot) {
				tools, lat = "-", "-"
			}
			t.row(r.Server, r.Transport, stateLabel(r.Snapshot), tools, lat, fmt.Sprint(r.ConsecutiveFailures), firstLine(note(r.Snapshot), math.MaxInt))
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	// A history that cannot be written is a failure of the daemon's own:
	// said here too, where an operator looks first.
	if st, err := b.Status(ctx); err == nil {
		if o := st.HistoryUnavailable; o != nil {
			waiting := fmt.Sprintf("%d call records wait", o.Waiting)
			if o.Waiting == 1 {
				waiting = "1 call record waits"
			}
			fmt.Fprintf(a.stderr, "warning: the daemon (pid %d) cannot write its history since %s (%s): %s for it: %s\n",
				st.PID, o.Since.Local().Format("15:04:05"), time.Since(o.Since).Round(time.Second), waiting, o.Error)
		}
		if st.HistoryWriteFailures > 0 {
			fmt.Fprintf(a.stderr, "warning: the daemon (pid %d) could not write %d call records to its history (its disk full, its database down?); its log says why (\"writing call history failed\")\n",
				st.PID, st.HistoryWriteFailures)
		}
	}
	failed := 0
	for _, r := range rows {
		if r.Enabled && r.State != upstream.StateConnected {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{ExitFailure}
	}
	return nil
}

// serverRow is a row of `servers --json`: the counts are null for a
// server that lists nothing (listsNothing), not the ones it had before.
type serverRow struct {
	control.ServerInfo
	Tools     *int `json:"tools"`
	Prompts   *int `json:"prompts"`
	Resources *int `json:"resources"`
}

// listsNothing reports whether a server is disabled (by a user, the
// configuration or its failures): it lists nothing, whatever the
// catalog still holds of it, and is not pinged.
func listsNothing(s upstream.Snapshot) bool { return !s.Enabled || s.AutoDisabled }

func stateLabel(s upstream.Snapshot) string {
	switch {
	case s.AutoDisabled:
		return "auto-disabled"
	case !s.Enabled:
		return "disabled"
	}
	return string(s.State)
}

func note(s upstream.Snapshot) string {
	switch {
	case s.AutoDisabled:
		return fmt.Sprintf("%s at %s: %s", s.DisabledReason, s.AutoDisabledAt.Format(time.RFC3339), s.LastError)
	case !s.Enabled:
		return s.DisabledReason
	case s.State == upstream.StateCannotStart:
		// It stays so until the user acts: what to do belongs with why.
		return strings.Join(append([]string{s.LastError}, s.Suggestions...), "; ")
	case s.LastError != "":
		return s.LastError
	}
	return ""
}

// serverAction runs `servers enable|disable|refresh NAME`. Enable and
// disable change the state kept between runs (and, in a daemon, the live
// server); refresh rediscovers the server's tools, prompts and resources.
func (a *app) serverAction(ctx context.Context, cfg *config.Config, action, name string) error {
	if _, ok := cfg.Server(name); !ok {
		return upstream.UnknownServer(cfg, name)
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: action == "refresh", only: []string{name}})
	if err != nil {
		return err
	}
	defer done()
	res, err := b.ServerAction(ctx, action, name)
	if err != nil {
		return err
	}
	if event := map[string]string{"enable": audit.ServerEnabled, "disable": audit.ServerDisabled}[action]; event != "" {
		if err := a.auditLocalEvent(b, audit.Event{Event: event, Outcome: audit.OK, Target: audit.Target{Server: name}}, action+"d "+name); err != nil {
			return err
		}
	}
	if a.json {
		return a.printJSON(res)
	}
	switch action {
	case "refresh":
		fmt.Fprintf(a.stdout, "%s: %d tools, %d prompts, %d resources\n", name, res.Tools, res.Prompts, res.Resources)
	case "enable":
		if res.Changed {
			fmt.Fprintf(a.stdout, "enabled %s (failure counters reset)\n", name)
		} else {
			fmt.Fprintf(a.stdout, "%s was already enabled (failure counters reset)\n", name)
		}
	case "disable":
		fmt.Fprintf(a.stdout, "disabled %s; run 'switchboard servers enable %s' to undo\n", name, name)
	}
	return nil
}
