package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func runServers(ctx context.Context, a *app, args []string) error {
	fs := a.flags("servers", true)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		switch pos[0] {
		case "enable", "disable", "refresh":
			if len(pos) != 2 {
				return usagef("usage: switchboard servers %s NAME", pos[0])
			}
			return a.serverAction(ctx, cfg, pos[0], pos[1])
		default:
			return usagef("unknown servers subcommand %q; want enable, disable or refresh", pos[0])
		}
	}
	if len(cfg.Servers) == 0 {
		if a.json {
			return a.printJSON([]control.ServerInfo{})
		}
		fmt.Fprintln(a.stdout, "No servers are configured. Add some to switchboard.yaml (see docs/configuration.md), or try one ad hoc:")
		fmt.Fprintln(a.stdout, "  switchboard servers --stdio \"npx -y @modelcontextprotocol/server-everything\"")
		return nil
	}
	b, done, err := a.backend(ctx, cfg, scope{connect: true})
	if err != nil {
		return err
	}
	defer done()
	rows, err := b.Servers(ctx)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(rows); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATE\tTOOLS\tLATENCY\tFAILURES\tNOTE")
		for _, r := range rows {
			lat := "-"
			if r.LatencyMS != "" {
				lat = r.LatencyMS + "ms"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", r.Server, r.Transport, stateLabel(r.Snapshot), r.Tools, lat, r.ConsecutiveFailures, firstLine(note(r.Snapshot), 80))
		}
		tw.Flush()
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
