package toolcall_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// oneUpstream serves a single in-process client.
type oneUpstream struct {
	name string
	c    *upstream.Client
}

func (o oneUpstream) Client(server string) (*upstream.Client, error) {
	if server != o.name {
		return nil, fault.New(fault.NotFound, "no server %s", server)
	}
	return o.c, nil
}

func (o oneUpstream) WaitConnected(_ context.Context, server string, _ time.Duration) (*upstream.Client, error) {
	return o.Client(server)
}

// BenchmarkEngineOverhead compares calling echo on an in-memory go-sdk
// server directly with calling it through the engine (validation, limits,
// recording into SQLite through the batching Recorder). The engine's own
// cost is the difference of the two ns/op (issue goal: under 50 µs).
func BenchmarkEngineOverhead(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Message string `json:"message"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	scfg := config.Server{Name: "mem", Enabled: true, LoadTools: true, RequestTimeout: 30 * time.Second}
	c, err := upstream.Dial(ctx, scfg, upstream.DialOptions{Transport: ct})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ups := oneUpstream{"mem", c}
	cat := catalog.New(catalog.Options{Source: ups, Servers: []config.Server{scfg}})
	if err := cat.Refresh(ctx, "mem"); err != nil {
		b.Fatal(err)
	}
	db, err := store.OpenSQLite(ctx, filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rec := store.NewRecorder(db, store.RecorderOptions{Keep: -1})
	recCtx, stopRec := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = rec.Run(recCtx) })
	defer func() { stopRec(); wg.Wait() }()
	cfg := &config.Config{Servers: []config.Server{scfg}, Limits: config.Limits{MaxConcurrent: 25, SessionLimit: -1, MaxOutputBytes: 1 << 20}}
	eng, err := toolcall.New(toolcall.Options{Config: cfg, Upstreams: ups, Catalog: cat, Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"message": "hello"}

	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Call(ctx, toolcall.Request{Server: "mem", Tool: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := rec.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rec.Dropped()), "dropped")
		_ = start
	})
}
