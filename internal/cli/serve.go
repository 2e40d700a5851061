package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// runServe connects every enabled server and keeps it healthy — pings,
// reconnects with backoff, auto-disable — printing each change, until
// interrupted. The aggregated gateway endpoint is served by this command
// once it lands (see docs/cli.md).
func runServe(ctx context.Context, a *app, args []string) error {
	fs := a.flags("serve", false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments")
	}
	cfg, err := a.loadConfig()
	if err != nil {
		return err
	}
	src := cfg.Source
	if src == "" {
		src = "the embedded default (no switchboard.yaml found): the built-in task server, its task API on " + a.emb.settings.BackendURL
	}
	fmt.Fprintf(a.stdout, "switchboard %s: configuration from %s\n", Version, src)
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(a.stdout, "No servers are configured, so there is nothing to supervise yet.")
		fmt.Fprintln(a.stdout, "Add servers to switchboard.yaml (docs/configuration.md) or import your Claude Desktop / Cursor file:")
		fmt.Fprintln(a.stdout, "  switchboard config import ~/.config/Claude/claude_desktop_config.json -o switchboard.yaml")
		return nil
	}
	store, err := a.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	var servers []string
	for _, s := range cfg.Servers {
		servers = append(servers, s.Name)
	}

	var mu sync.Mutex
	last := map[string]string{}
	toolCounts, seenCount := map[string]int{}, map[string]bool{}
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config: cfg,
		Store:  store,
		Logger: a.logger(),
		OnChange: func(s upstream.Snapshot) {
			line := stateLabel(s)
			if n := note(s); n != "" && s.State != upstream.StateConnected {
				line += ": " + firstLine(n, 120)
			}
			if s.Retrying {
				line += fmt.Sprintf(" (retry %d at %s)", s.Attempt, s.NextRetryAt.Format("15:04:05"))
			}
			mu.Lock()
			defer mu.Unlock()
			if last[s.Server] != line {
				last[s.Server] = line
				fmt.Fprintf(a.stdout, "%s: %s\n", s.Server, line)
			}
		},
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.MaxResultBytes = int(cfg.Limits.MaxOutputBytes)
			o.NewTransport = a.emb.transport(server)
		},
		Events: func(server string) upstream.Events {
			return upstream.Events{
				ToolsChanged:     func() { cat.Invalidate(server, catalog.KindTools) },
				PromptsChanged:   func() { cat.Invalidate(server, catalog.KindPrompts) },
				ResourcesChanged: func() { cat.Invalidate(server, catalog.KindResources) },
			}
		},
	})
	if err != nil {
		return err
	}
	cat = catalog.New(catalog.Options{
		Source:  pool,
		Servers: cfg.Servers,
		TTL:     cfg.Defaults.DiscoveryTTL,
		Logger:  a.logger(),
		OnChange: func(server string, kind catalog.Kind) {
			if kind != catalog.KindTools {
				return
			}
			n := len(cat.ServerTools(server))
			mu.Lock()
			defer mu.Unlock()
			if toolCounts[server] != n || !seenCount[server] {
				toolCounts[server], seenCount[server] = n, true
				fmt.Fprintf(a.stdout, "%s: %d tools\n", server, n)
			}
		},
	})
	fmt.Fprintf(a.stdout, "supervising %d server(s); press Ctrl-C to stop\n", len(servers))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = cat.Run(ctx) }()
	wg.Wait()
	fmt.Fprintln(a.stdout, "stopped; every server was closed")
	return nil
}
