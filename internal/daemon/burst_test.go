package daemon

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestGatewayBurstQueues: with the default limits (max_concurrent 25,
// queue_wait "timeout"), 64 clients calling at once through the gateway
// all succeed — the calls over the limit wait for a slot — and the server
// never sees more than 25 at once.
func TestGatewayBurstQueues(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	if cfg.Limits != config.Default().Limits || cfg.Limits.MaxConcurrent != 25 {
		t.Fatalf("the test needs the default limits, got %+v", cfg.Limits)
	}
	r := start(t, cfg)
	// 64 callers at once are well over the 25 slots; two calls each
	// keep the queue full for a second round (the count of rounds is
	// not the point, and each call costs CPU under -race).
	const callers, each = 64, 2
	sessions := make([]*mcp.ClientSession, 4)
	for i := range sessions {
		sessions[i] = r.connect(t, "/mcp", nil, nil)
	}
	waitTools(t, sessions[0], "alpha's tools", has("alpha__hold", "alpha__maxseen"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range callers {
		cs := sessions[i%len(sessions)]
		wg.Go(func() {
			for range each {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__hold", Arguments: map[string]any{"ms": 50}})
				if err != nil || res.IsError {
					mu.Lock()
					if err != nil {
						failures = append(failures, err.Error())
					} else {
						failures = append(failures, textOf(res))
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d calls failed, want none; the first: %s", len(failures), callers*each, failures[0])
	}
	if n, err := strconv.Atoi(textOf(call(t, sessions[0], "alpha__maxseen", map[string]any{}))); err != nil || n > 25 || n < 2 {
		t.Errorf("the server saw %d calls at once (%v), want between 2 and 25", n, err)
	}
	r.waitRecords(t, store.CallFilter{Source: "gateway", Tool: "hold", Limit: 1000}, func(recs []store.CallRecord) bool { return len(recs) == callers*each })
}

// TestGatewayQueueFull: a call that finds the queue full is told so
// through the gateway, with the key to raise.
func TestGatewayQueueFull(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Limits.MaxConcurrent, cfg.Limits.MaxQueue = 1, 1
	r := start(t, cfg)
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools", has("alpha__hold"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	for range 2 { // one runs, one waits
		wg.Go(func() {
			_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__hold", Arguments: map[string]any{"ms": 5000}})
		})
	}
	eventually(t, "one call running and one waiting", func() bool {
		st := r.d.Engine().Stats()
		return st.InFlight == 1 && st.Waiting == 1
	})
	res := call(t, cs, "alpha__echo", map[string]any{"message": "one too many"})
	if typ := errorType(t, res); typ != "limit_exceeded_error" || !strings.Contains(textOf(res), "limits.max_queue") {
		t.Errorf("a call over a full queue: got %s, want a limit_exceeded_error naming limits.max_queue", textOf(res))
	}
	cancel()
}
