package catalog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// memSource connects in-process go-sdk servers over in-memory transports.
type memSource struct {
	mu      sync.Mutex
	clients map[string]*upstream.Client
}

var _ catalog.Source = (*memSource)(nil)

func (m *memSource) Client(server string) (*upstream.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[server]; ok {
		return c, nil
	}
	return nil, fault.New(fault.Connection, "server %s is not connected", server)
}

func srvConfig(name string) config.Server {
	return config.Server{Name: name, Enabled: true, LoadTools: true, LoadPrompts: true, LoadResources: true}
}

// connect serves s in-process and adds its client to the source.
func (m *memSource) connect(t *testing.T, name string, s *mcp.Server) {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := upstream.Dial(context.Background(), srvConfig(name), upstream.DialOptions{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); ss.Close(); cancel() })
	m.mu.Lock()
	if m.clients == nil {
		m.clients = map[string]*upstream.Client{}
	}
	m.clients[name] = c
	m.mu.Unlock()
}

func noop(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

func objSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}

func TestDiscoveryNamesAndSchemas(t *testing.T) {
	a := mcp.NewServer(&mcp.Implementation{Name: "a"}, nil)
	a.AddTool(&mcp.Tool{Name: "search", InputSchema: objSchema(map[string]any{"q": map[string]any{"type": "string"}}, "q")}, noop)
	a.AddTool(&mcp.Tool{Name: "broken", InputSchema: objSchema(map[string]any{"x": map[string]any{"type": "nonsense"}})}, noop)
	a.AddTool(&mcp.Tool{Name: "sneaky", InputSchema: map[string]any{"type": "object", "$ref": "file:///etc/passwd"}}, noop)
	a.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	// Server "a.b" sanitises to "a_b", and "a_b" exists too: a collision.
	b := mcp.NewServer(&mcp.Implementation{Name: "b"}, nil)
	b.AddTool(&mcp.Tool{Name: "x.y", InputSchema: objSchema(nil)}, noop)
	b.AddTool(&mcp.Tool{Name: "x_y", InputSchema: objSchema(nil)}, noop)

	src := &memSource{}
	src.connect(t, "a", a)
	src.connect(t, "b", b)
	cat := catalog.New(catalog.Options{Source: src, Servers: []config.Server{srvConfig("a"), srvConfig("b"), srvConfig("down")}})
	if err := cat.RefreshAll(context.Background()); err != nil {
		t.Fatalf("RefreshAll: %v", err)
	}

	var got []string
	for _, tl := range cat.Tools() {
		got = append(got, tl.Exposed)
	}
	// Servers in configuration order, tools in the order each server lists
	// them (the go-sdk lists by name); x.y collides with x_y and is hashed.
	want := "a__broken a__search a__sneaky b__x_y_f3c83064 b__x_y"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("exposed names: got %q, want %q", s, want)
	}
	if cols := cat.Collisions(); len(cols) != 1 || cols[0].Name != "b__x_y" {
		t.Errorf("collisions: got %+v, want one on b__x_y", cols)
	}
	if tl, ok := cat.Lookup("b__x_y"); !ok || tl.Def.Name != "x_y" {
		t.Errorf("Lookup(b__x_y): got %+v, want the tool that needed no replacement", tl.Def)
	}

	broken, _ := cat.Tool("a", "broken")
	if broken.Schema != nil || broken.SchemaError == "" {
		t.Errorf("broken schema: got Schema %v, error %q; want flagged", broken.Schema, broken.SchemaError)
	}
	if err := broken.ValidateArgs(map[string]any{"anything": 1}); err != nil {
		t.Errorf("a tool with a broken schema must not be validated, got %v", err)
	}
	sneaky, _ := cat.Tool("a", "sneaky")
	if sneaky.Schema != nil || !strings.Contains(sneaky.SchemaError, "not allowed") {
		t.Errorf("external $ref: got error %q, want it refused", sneaky.SchemaError)
	}

	search, _ := cat.Tool("a", "search")
	err := search.ValidateArgs(map[string]any{"q": 5})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Validation || len(fe.Fields) != 1 || fe.Fields[0].Field != "q" || fe.Fields[0].ReceivedValue != "5" {
		t.Errorf("ValidateArgs: got %#v, want one validation field detail for q", err)
	}
	if err := search.ValidateArgs(map[string]any{}); err == nil || !strings.Contains(err.Error(), "q: required, but missing") {
		t.Errorf("ValidateArgs without q: got %v, want q required", err)
	}

	_, err = cat.Tool("a", "serch")
	if fault.KindOf(err) != fault.NotFound || !strings.Contains(err.Error(), `did you mean "search"`) {
		t.Errorf("Tool(serch): got %v, want not found suggesting search", err)
	}
	if len(cat.Prompts()) != 1 {
		t.Errorf("prompts: got %d, want 1", len(cat.Prompts()))
	}
}

func TestFreshnessDropAndOrdering(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s"}, nil)
	s.AddTool(&mcp.Tool{Name: "one", InputSchema: objSchema(nil)}, noop)
	src := &memSource{}
	src.connect(t, "s", s)
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cat := catalog.New(catalog.Options{Source: src, Servers: []config.Server{srvConfig("s")}, TTL: time.Minute, Now: clock})
	ctx := context.Background()

	cat.EnsureFresh(ctx) // never fetched: fetches
	if n := len(cat.ServerTools("s")); n != 1 {
		t.Fatalf("after EnsureFresh: got %d tools, want 1", n)
	}
	s.AddTool(&mcp.Tool{Name: "two", InputSchema: objSchema(nil)}, noop)
	cat.EnsureFresh(ctx) // still fresh: no fetch
	if n := len(cat.ServerTools("s")); n != 1 {
		t.Errorf("within the TTL: got %d tools, want the cached 1", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	cat.EnsureFresh(ctx) // stale: refetches
	if n := len(cat.ServerTools("s")); n != 2 {
		t.Errorf("after the TTL: got %d tools, want 2", n)
	}

	cat.Drop("s")
	if n := len(cat.ServerTools("s")); n != 0 || !cat.Fetched("s", catalog.KindTools).IsZero() {
		t.Errorf("after Drop: got %d tools, fetched %v; want nothing cached", n, cat.Fetched("s", catalog.KindTools))
	}

	// Run refetches invalidated lists and announces the change.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = cat.Run(runCtx) }()
	ch := cat.Changed()
	cat.Invalidate("s", catalog.KindTools)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not refetch an invalidated list")
	}
	if n := len(cat.ServerTools("s")); n != 2 {
		t.Errorf("after Invalidate: got %d tools, want 2", n)
	}
	cancel()
	<-done
}

// TestLaterFetchWins checks that a fetch that started earlier but finished
// later never overwrites the result of one that started later.
func TestLaterFetchWins(t *testing.T) {
	cat := catalog.New(catalog.Options{Servers: []config.Server{srvConfig("s")}})
	newer := []catalog.Tool{{Server: "s", Def: &mcp.Tool{Name: "new"}}}
	older := []catalog.Tool{{Server: "s", Def: &mcp.Tool{Name: "old"}}}
	if !cat.ApplyTools("s", 2, newer) {
		t.Fatal("apply(seq 2) was refused")
	}
	if cat.ApplyTools("s", 1, older) {
		t.Error("apply(seq 1) after seq 2 was stored")
	}
	if _, err := cat.Tool("s", "new"); err != nil {
		t.Errorf("after a stale result landed: %v; want the newer list kept", err)
	}
	if _, err := cat.Tool("s", "old"); err == nil {
		t.Error("the stale list replaced the newer one")
	}
	// Drop makes results of fetches already under way stale as well.
	cat.MarkStarted("s", catalog.KindTools, 3)
	cat.Drop("s")
	if cat.ApplyTools("s", 3, older) {
		t.Error("a fetch started before Drop was stored after it")
	}
	if !cat.ApplyTools("s", 5, newer) {
		t.Error("a fetch started after Drop was refused")
	}
}
