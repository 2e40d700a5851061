package catalog_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// TestSetServers checks what SetServers keeps, drops and renames, and that
// it announces the change once, without a Run loop fetching anything.
func TestSetServers(t *testing.T) {
	src := &memSource{}
	for _, name := range []string{"a.b", "a_b", "keep", "edit"} {
		s := mcp.NewServer(&mcp.Implementation{Name: name}, nil)
		s.AddTool(&mcp.Tool{Name: "t", InputSchema: objSchema(nil)}, noop)
		src.connect(t, name, s)
	}
	var mu sync.Mutex
	changes := map[string]int{}
	servers := []config.Server{srvConfig("a.b"), srvConfig("a_b"), srvConfig("keep"), srvConfig("edit")}
	cat := catalog.New(catalog.Options{Source: src, Servers: servers, OnChange: func(server string, _ catalog.Kind) {
		mu.Lock()
		changes[server]++
		mu.Unlock()
	}})
	ctx := context.Background()
	if err := cat.RefreshAll(ctx); err != nil {
		t.Fatalf("RefreshAll: %v", err)
	}
	if got := len(cat.Collisions()); got != 1 {
		t.Fatalf("collisions before: got %d, want 1 (a.b and a_b both expose a_b__t)", got)
	}
	keptAt := cat.Fetched("keep", catalog.KindTools)
	mu.Lock()
	clear(changes)
	mu.Unlock()

	edited := srvConfig("edit")
	edited.Description = "now described"
	moved := srvConfig("keep")
	moved.Pos = config.Pos{File: "new.yaml", Line: 7} // Pos alone is no change
	ch := cat.Changed()
	cat.SetServers([]config.Server{srvConfig("a.b"), moved, edited, srvConfig("new")})

	select {
	case <-ch:
	default:
		t.Fatal("Changed() was not notified by SetServers")
	}
	if got, want := cat.Servers(), []string{"a.b", "keep", "edit", "new"}; !equalStrings(got, want) {
		t.Errorf("Servers: got %v, want %v", got, want)
	}
	if got := cat.ServerTools("a_b"); len(got) != 0 {
		t.Errorf("tools of the removed a_b: got %d, want none", len(got))
	}
	if _, err := cat.Tool("a_b", "t"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("Tool(a_b, t): got %v, want not_found", err)
	}
	// The collision is gone: a.b's tool gets the plain name.
	if got := len(cat.Collisions()); got != 0 {
		t.Errorf("collisions after: got %d, want 0", got)
	}
	if tl, ok := cat.Lookup("a_b__t"); !ok || tl.Server != "a.b" {
		t.Errorf("Lookup(a_b__t): got %+v, %v; want a.b's tool", tl, ok)
	}
	if got := len(cat.ServerTools("keep")); got != 1 || !cat.Fetched("keep", catalog.KindTools).Equal(keptAt) {
		t.Errorf("unchanged keep: got %d tools fetched at %v, want its 1 cached tool from %v", got, cat.Fetched("keep", catalog.KindTools), keptAt)
	}
	if got := len(cat.ServerTools("edit")); got != 0 || !cat.Fetched("edit", catalog.KindTools).IsZero() {
		t.Errorf("changed edit: got %d tools, want its cache dropped", got)
	}
	mu.Lock()
	if changes["a_b"] != 3 || changes["edit"] != 3 || changes["keep"] != 0 || changes["a.b"] != 0 {
		t.Errorf("OnChange calls: got %v, want a_b and edit 3 each (one per list), none for the others", changes)
	}
	mu.Unlock()

	// The connected changed and added servers were queued for a fetch.
	pending := cat.PendingServers()
	if !pending["edit"] || pending["keep"] || pending["a_b"] {
		t.Errorf("pending fetches: got %v, want edit (connected, changed) only", pending)
	}

	// A fetch of the removed server that finishes late is discarded.
	if cat.ApplyTools("a_b", 99, []catalog.Tool{{Server: "a_b", Def: &mcp.Tool{Name: "late"}}}) {
		t.Error("a late result for a removed server was stored")
	}
}

// TestSetServersWithPool runs real stdio servers under a pool and applies a
// new configuration to both, as the daemon does on reload.
func TestSetServersWithPool(t *testing.T) {
	one := testserver.Server(t, "one", "ok")
	two := testserver.Server(t, "two", "ok")
	pool, cat := startCatalog(t, one, two)
	waitTool(t, cat, "one", "echo", 20*time.Second)
	waitTool(t, cat, "two", "echo", 20*time.Second)

	next := *pool.Config()
	next.Servers = []config.Server{one, testserver.Server(t, "three", "ok")}
	ch := cat.Changed()
	cat.SetServers(next.Servers)
	if !isClosed(ch) {
		t.Error("Changed() was not notified by SetServers")
	}
	if got := cat.ServerTools("two"); len(got) != 0 {
		t.Errorf("tools of the removed two: got %d, want none", len(got))
	}
	if _, ok := cat.Lookup("two__echo"); ok {
		t.Error("Lookup(two__echo) still finds the removed server's tool")
	}
	if _, err := cat.Tool("one", "echo"); err != nil {
		t.Errorf("unchanged one lost its tools: %v", err)
	}
	if _, err := pool.Apply(context.Background(), &next); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	// three connects, and its tools arrive through the Connected path.
	waitTool(t, cat, "three", "echo", 20*time.Second)
	if tl, err := cat.Tool("three", "echo"); err != nil || tl.Exposed != "three__echo" {
		t.Errorf("three's echo: got %+v, %v; want exposed as three__echo", tl, err)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
