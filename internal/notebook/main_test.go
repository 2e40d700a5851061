package notebook_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// testConfig returns a configuration with the given servers and the
// defaults a test needs.
func testConfig(servers ...config.Server) *config.Config {
	cfg := config.Default()
	cfg.Servers = servers
	cfg.Defaults.RequestTimeout = 10 * time.Second
	cfg.Defaults.Health.PingInterval = time.Hour
	return cfg
}

// newEngine connects to the configuration's servers and returns the
// execution engine; everything stops when the test ends.
func newEngine(t testing.TB, cfg *config.Config) *toolcall.Engine {
	t.Helper()
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = cat.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, s := range cfg.Servers {
		if !s.Enabled {
			continue
		}
		if _, err := pool.WaitConnected(context.Background(), s.Name, 30*time.Second); err != nil {
			t.Fatalf("connecting %s: %v", s.Name, err)
		}
		if err := cat.Refresh(context.Background(), s.Name); err != nil {
			t.Fatalf("discovering %s: %v", s.Name, err)
		}
	}
	eng, err := toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// okServers returns test servers in "ok" mode with the given names.
func okServers(t testing.TB, names ...string) []config.Server {
	out := make([]config.Server, len(names))
	for i, n := range names {
		out[i] = testserver.Server(t, n, "ok")
	}
	return out
}

// copyDoc copies testdata/name into a new temporary folder and returns
// its path there.
func copyDoc(t testing.TB, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, src, 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading the golden file (run go test -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s: got a different document (run go test ./internal/notebook -update and review the diff):\n%s", name, got)
	}
}
