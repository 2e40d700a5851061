package catalog_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// everythingServer returns server-everything configured over a transport.
func everythingServer(t *testing.T, transport config.Transport) config.Server {
	srv := config.Server{
		Name: "everything", Transport: transport, Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true, TerminateOnClose: true,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second,
	}
	switch transport {
	case config.TransportStdio:
		srv.Command, srv.Args = testpeer.EverythingCommand(t)
	case config.TransportSSE:
		srv.URL = testpeer.StartEverything(t, "sse")
	case config.TransportHTTP:
		srv.URL = testpeer.StartEverything(t, "streamableHttp")
	}
	return srv
}

// startCatalog connects a pool of the given servers in supervised mode,
// with the catalog following connects and list_changed, for the test.
func startCatalog(t *testing.T, servers ...config.Server) (*upstream.Pool, *catalog.Catalog) {
	t.Helper()
	cfg := &config.Config{Servers: servers, Defaults: config.Defaults{Health: config.Health{PingInterval: time.Hour}}}
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
		Events: func(server string) upstream.Events {
			return upstream.Events{
				ToolsChanged:     func() { cat.Invalidate(server, catalog.KindTools) },
				PromptsChanged:   func() { cat.Invalidate(server, catalog.KindPrompts) },
				ResourcesChanged: func() { cat.Invalidate(server, catalog.KindResources) },
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = cat.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return pool, cat
}

// waitTool waits until the catalog holds the named tool.
func waitTool(t *testing.T, cat *catalog.Catalog, server, name string, d time.Duration) catalog.Tool {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		ch := cat.Changed()
		if tl, err := cat.Tool(server, name); err == nil {
			return tl
		}
		select {
		case <-ch:
		case <-deadline.C:
			var names []string
			for _, tl := range cat.ServerTools(server) {
				names = append(names, tl.Def.Name)
			}
			t.Fatalf("tool %s/%s did not appear within %s; have %v; discovery errors: %v", server, name, d, names, cat.Errors(server))
		}
	}
}

// waitCatalog waits until cond holds, re-checking at every catalog change.
func waitCatalog(t *testing.T, cat *catalog.Catalog, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		ch := cat.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %s discovered within %s; discovery errors: %v", what, d, cat.Errors("everything"))
		}
	}
}

func TestServerEverything(t *testing.T) {
	for _, transport := range []config.Transport{config.TransportStdio, config.TransportSSE, config.TransportHTTP} {
		t.Run(string(transport), func(t *testing.T) {
			pool, cat := startCatalog(t, everythingServer(t, transport))
			c, err := pool.WaitConnected(context.Background(), "everything", 30*time.Second)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			ctx := context.Background()

			// Tools that appear after initialize, announced by list_changed.
			late := waitTool(t, cat, "everything", "simulate-research-query", 15*time.Second)
			if late.Exposed != "everything__simulate-research-query" {
				t.Errorf("exposed name: got %q, want %q", late.Exposed, "everything__simulate-research-query")
			}
			for _, name := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
				if tl := waitTool(t, cat, "everything", name, 5*time.Second); tl.Schema == nil {
					t.Errorf("%s: schema did not compile: %s", name, tl.SchemaError)
				}
			}
			waitCatalog(t, cat, 10*time.Second, "prompts", func() bool { return len(cat.Prompts()) > 0 })
			waitCatalog(t, cat, 10*time.Second, "resources", func() bool {
				return len(cat.Resources()) > 0 && len(cat.ResourceTemplates()) > 0
			})

			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello peer"}}, nil)
			if err != nil || res.IsError {
				t.Fatalf("echo: %v %+v", err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "hello peer") {
				t.Errorf("echo: got %q, want it to contain %q", got, "hello peer")
			}

			tool, _ := cat.Tool("everything", "get-sum")
			args := map[string]any{"a": 2, "b": 40}
			res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "get-sum", Arguments: args}, nil)
			if err != nil || res.IsError {
				t.Fatalf("get-sum: %v %+v", err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, "42") {
				t.Errorf("get-sum: got %q, want it to contain 42", got)
			}
			if err := tool.ValidateArgs(map[string]any{"a": "two"}); err == nil {
				t.Error("get-sum schema accepted a string for a number")
			}

			var mu sync.Mutex
			var progress []float64
			res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "trigger-long-running-operation",
				Arguments: map[string]any{"duration": 1, "steps": 4}},
				func(p *mcp.ProgressNotificationParams) {
					mu.Lock()
					progress = append(progress, p.Progress)
					mu.Unlock()
				})
			if err != nil || res.IsError {
				t.Fatalf("trigger-long-running-operation: %v %+v", err, res)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(progress) < 2 {
				t.Errorf("progress notifications: got %v, want several", progress)
			}
		})
	}
}
