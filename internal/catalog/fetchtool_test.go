package catalog_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TestFetchToolFetchesOnlyAListNotFetchedSinceTheConnection: a call made
// the moment a server connected finds its tool although discovery has not
// listed it yet (FetchTool lists first), while a miss in a list fetched on
// the current connection costs the server no list request; a reconnection
// makes the list due again.
func TestFetchToolFetchesOnlyAListNotFetchedSinceTheConnection(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s"}, nil)
	s.AddTool(&mcp.Tool{Name: "one", InputSchema: objSchema(nil)}, noop)
	var lists atomic.Int32
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	src := &memSource{}
	src.connect(t, "s", s)
	cat := catalog.New(catalog.Options{Source: src, Servers: []config.Server{srvConfig("s")}})
	ctx := context.Background()
	cat.Connected("s") // the discovery this queues is not run: Run is not running

	if _, err := cat.Tool("s", "one"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("Tool before any list: got %v, want not found", err)
	}
	if tl, err := cat.FetchTool(ctx, "s", "one"); err != nil || tl.Def.Name != "one" {
		t.Fatalf("FetchTool(one) before discovery: got %+v, %v; want the tool", tl.Def, err)
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("tools/list requests: got %d, want 1", n)
	}
	for range 3 {
		if _, err := cat.FetchTool(ctx, "s", "nope"); fault.KindOf(err) != fault.NotFound {
			t.Fatalf("FetchTool(nope): got %v, want not found", err)
		}
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("tools/list requests after misses in a current list: got %d, want still 1", n)
	}

	s.AddTool(&mcp.Tool{Name: "two", InputSchema: objSchema(nil)}, noop)
	cat.Connected("s") // as after a reconnection
	if tl, err := cat.FetchTool(ctx, "s", "two"); err != nil || tl.Def.Name != "two" {
		t.Fatalf("FetchTool(two) after a reconnection: got %+v, %v; want the tool", tl.Def, err)
	}
	if n := lists.Load(); n != 2 {
		t.Fatalf("tools/list requests: got %d, want 2", n)
	}

	cat.Drop("s") // its configuration changed: nothing held
	if tl, err := cat.FetchTool(ctx, "s", "one"); err != nil || tl.Def.Name != "one" {
		t.Fatalf("FetchTool(one) after Drop: got %+v, %v; want the tool", tl.Def, err)
	}
	if n := lists.Load(); n != 3 {
		t.Fatalf("tools/list requests: got %d, want 3", n)
	}
}
