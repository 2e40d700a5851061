package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// serverRow is one line of `switchboard servers`.
type serverRow struct {
	upstream.Snapshot
	Tools     int    `json:"tools"`
	Prompts   int    `json:"prompts"`
	Resources int    `json:"resources"`
	LatencyMS string `json:"latency_ms,omitempty"`
}

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
			return a.printJSON([]serverRow{})
		}
		fmt.Fprintln(a.stdout, "No servers are configured. Add some to switchboard.yaml (see docs/configuration.md), or try one ad hoc:")
		fmt.Fprintln(a.stdout, "  switchboard servers --stdio \"npx -y @modelcontextprotocol/server-everything\"")
		return nil
	}
	s, err := a.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.close()

	rows := make([]serverRow, 0, len(cfg.Servers))
	for _, snap := range s.pool.Snapshots() {
		row := serverRow{Snapshot: snap}
		if c, err := s.client(snap.Server); err == nil {
			pctx, cancel := context.WithTimeout(ctx, cfg.Defaults.Health.PingTimeout)
			if lat, err := c.Ping(pctx); err == nil {
				row.Latency = lat
				row.LatencyMS = fmt.Sprintf("%.1f", float64(lat)/float64(time.Millisecond))
			}
			cancel()
		}
		row.Tools = len(s.cat.ServerTools(snap.Server))
		for _, p := range s.cat.Prompts() {
			if p.Server == snap.Server {
				row.Prompts++
			}
		}
		for _, r := range s.cat.Resources() {
			if r.Server == snap.Server {
				row.Resources++
			}
		}
		rows = append(rows, row)
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
// disable change the state kept between runs; refresh rediscovers the
// server's tools, prompts and resources.
func (a *app) serverAction(ctx context.Context, cfg *config.Config, action, name string) error {
	srv, ok := cfg.Server(name)
	if !ok {
		return upstream.UnknownServer(cfg, name)
	}
	if action == "refresh" {
		s, _, err := a.connectOne(ctx, cfg, name)
		if err != nil {
			return err
		}
		defer s.close()
		if err := s.cat.Refresh(ctx, name); err != nil {
			return err
		}
		a.printCounts(s.cat, name)
		return nil
	}
	store, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	rec, err := store.LoadState(ctx, name)
	if err != nil {
		return err
	}
	switch action {
	case "enable":
		if !srv.Enabled {
			return fault.New(fault.Config, "server %s is disabled in the configuration file %s", name, cfg.Source).
				WithSuggestions(fmt.Sprintf("set enabled: true for %s there", name))
		}
		was := rec.Disabled
		rec = upstream.Record{LastConnectedAt: rec.LastConnectedAt}
		if err := store.SaveState(ctx, name, rec); err != nil {
			return err
		}
		if was {
			fmt.Fprintf(a.stdout, "enabled %s (failure counters reset)\n", name)
		} else {
			fmt.Fprintf(a.stdout, "%s was already enabled (failure counters reset)\n", name)
		}
	case "disable":
		rec.Disabled, rec.AutoDisabled, rec.DisabledAt, rec.Reason = true, false, time.Now().UTC(), "disabled by a user"
		if err := store.SaveState(ctx, name, rec); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "disabled %s; run 'switchboard servers enable %s' to undo\n", name, name)
	}
	return nil
}

// printCounts prints what a refresh found.
func (a *app) printCounts(cat *catalog.Catalog, server string) {
	tools := len(cat.ServerTools(server))
	prompts, resources := 0, 0
	for _, p := range cat.Prompts() {
		if p.Server == server {
			prompts++
		}
	}
	for _, r := range cat.Resources() {
		if r.Server == server {
			resources++
		}
	}
	fmt.Fprintf(a.stdout, "%s: %d tools, %d prompts, %d resources\n", server, tools, prompts, resources)
}
