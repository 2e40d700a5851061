package toolcall_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// An Engine makes every tool call: it finds the tool in the catalog, sends the call to
// the server's connection in the pool (within the limits, retries and timeouts of the
// configuration) and records it. Here the server is a real MCP server over streamable
// HTTP.
func ExampleEngine_Call() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + in.Name}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	yaml := fmt.Sprintf("servers:\n  - name: greeter\n    transport: http\n    url: %s\n", hs.URL)
	cfg, err := config.Parse("switchboard.yaml", []byte(yaml), config.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = cat.Run(ctx) }()
	defer wg.Wait()
	defer cancel()
	if _, err := pool.WaitConnected(ctx, "greeter", 10*time.Second); err != nil {
		fmt.Println(err)
		return
	}
	if err := cat.Refresh(ctx, "greeter"); err != nil { // lists the server's tools now
		fmt.Println(err)
		return
	}

	eng, err := toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: cat})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := eng.Call(ctx, toolcall.Request{Server: "greeter", Tool: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// success hello, Ada
}
