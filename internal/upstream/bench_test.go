package upstream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// BenchmarkConnect measures connecting (spawn + MCP handshake) to stdio
// servers one at a time, and 20 at once through a Pool (the path `serve`
// and the CLI take). Its "x-slowest-single" metric is the parallel wall time
// divided by the slowest of 20 single connects measured just before (issue
// goal: <= 1.5). Two server kinds:
//
//   - go: a Go server that starts in ~20 ms of pure CPU. On 2 cores, 20 of
//     them cost 20x that CPU, so no pool can reach 1.5 here; the figure
//     shows process-creation cost, not serialisation.
//   - init-200ms: a server that spends 200 ms initialising without CPU (as
//     npx, uvx or docker servers do while they fetch and boot). This is the
//     case the goal is about: connects must overlap.
func BenchmarkConnect(b *testing.B) {
	kinds := []struct {
		name string
		srv  config.Server
	}{
		{"go", testserver.Server(b, "bench", "ok")},
		{"init-200ms", testserver.Server(b, "bench", "slow-start", testserver.EnvDelay+"=200ms")},
	}
	ctx := context.Background()
	for _, k := range kinds {
		connect := func() time.Duration {
			start := time.Now()
			c, err := Dial(ctx, k.srv, DialOptions{})
			if err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			c.Close()
			return d
		}
		b.Run(k.name+"/single", func(b *testing.B) {
			for b.Loop() {
				connect()
			}
		})
		b.Run(k.name+"/pool-20", func(b *testing.B) {
			var ratios float64
			n := 0
			for b.Loop() {
				b.StopTimer()
				var slowest time.Duration
				for range 20 {
					slowest = max(slowest, connect())
				}
				cfg := &config.Config{}
				for i := range 20 {
					s := k.srv
					s.Name = fmt.Sprintf("s%d", i)
					cfg.Servers = append(cfg.Servers, s)
				}
				pool, err := NewPool(PoolOptions{Config: cfg, Once: true})
				if err != nil {
					b.Fatal(err)
				}
				pctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				b.StartTimer()
				start := time.Now()
				go func() { defer close(done); _ = pool.Run(pctx) }()
				for _, name := range pool.Names() {
					if _, err := pool.WaitConnected(ctx, name, time.Minute); err != nil {
						b.Fatal(err)
					}
				}
				wall := time.Since(start)
				b.StopTimer()
				cancel()
				<-done
				b.StartTimer()
				ratios += float64(wall) / float64(slowest)
				n++
			}
			b.ReportMetric(ratios/float64(n), "x-slowest-single")
		})
	}
}

// BenchmarkCallTool measures tools/call round trips to a Go stdio server
// with 1 and 16 concurrent callers (issue goal: 5,000 calls/s or more at 16
// on 2 cores).
func BenchmarkCallTool(b *testing.B) {
	c, err := Dial(context.Background(), testserver.Server(b, "bench", "ok"), DialOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
	for _, callers := range []int{1, 16} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			ctx := context.Background()
			start := time.Now()
			var wg sync.WaitGroup
			work := make(chan struct{})
			for range callers {
				wg.Go(func() {
					for range work {
						if _, err := c.CallTool(ctx, params, nil); err != nil {
							b.Error(err)
						}
					}
				})
			}
			for b.Loop() {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
