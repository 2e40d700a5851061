package catalog_test

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
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// searchServer serves one MCP server over streamable HTTP with a "search" tool whose
// arguments must hold a query.
func searchServer(name string) *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	type args struct {
		Query string `json:"query"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Searches " + name + "."},
		func(context.Context, *mcp.CallToolRequest, args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// A Catalog is the merged view of every server's tools: each tool gets an exposed name
// unique across servers, and its arguments are checked against its schema before a
// call is sent.
func ExampleCatalog_Tools() {
	docs, wiki := searchServer("docs"), searchServer("wiki")
	defer docs.Close()
	defer wiki.Close()
	yaml := fmt.Sprintf("servers:\n  - {name: docs, transport: http, url: %s}\n  - {name: wiki, transport: http, url: %s}\n",
		docs.URL, wiki.URL)
	cfg, err := config.Parse("switchboard.yaml", []byte(yaml), config.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pool, err := upstream.NewPool(upstream.PoolOptions{Config: cfg})
	if err != nil {
		fmt.Println(err)
		return
	}
	cat := catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	defer wg.Wait()
	defer cancel()
	for _, s := range cfg.Servers {
		if _, err := pool.WaitConnected(ctx, s.Name, 10*time.Second); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := cat.RefreshAll(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range cat.Tools() {
		fmt.Println(t.Server, t.Def.Name, "exposed as", t.Exposed)
	}
	tool, err := cat.Tool("docs", "search")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tool.ValidateArgs(map[string]any{"query": "mcp"}) == nil)
	fmt.Println(tool.ValidateArgs(map[string]any{"query": 42}) != nil)
	// Output:
	// docs search exposed as docs__search
	// wiki search exposed as wiki__search
	// true
	// true
}
