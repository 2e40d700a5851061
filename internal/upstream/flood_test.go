//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; servers log today.

package upstream

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting (%s) after %s", what, d)
		}
		<-tick.C
	}
}

// A server that sends progress and log messages faster than its
// notifications are handled (here: the progress callback blocks until
// the server has sent them all, as a client that does not read would)
// does not have them all queued: the SDK is handed a bounded number,
// progress is coalesced to the newest value — the last one arriving
// before the result — and the log messages past the bound are dropped,
// counted, and told in a warning of their own.
func TestFloodIsBounded(t *testing.T) {
	t.Parallel()
	const steps = 10000
	var dropped atomic.Uint64
	var mu sync.Mutex
	var logs []string
	srv := testserver.Server(t, "flood", "ok")
	c, err := Dial(context.Background(), srv, DialOptions{
		DroppedLogs: &dropped,
		Events: Events{Log: func(_ context.Context, p *mcp.LoggingMessageParams) {
			mu.Lock()
			logs = append(logs, fmt.Sprint(p.Data))
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = WithLogLevel(ctx, "info")

	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // before c.Close, which waits for the handler
	var returned atomic.Bool
	var pmu sync.Mutex
	var seen, late []float64
	first := true
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": steps, "logs": true}},
			func(p *mcp.ProgressNotificationParams) {
				if first {
					first = false
					<-release
				}
				pmu.Lock()
				defer pmu.Unlock()
				if returned.Load() {
					late = append(late, p.Progress)
				}
				seen = append(seen, p.Progress)
			})
		returned.Store(true)
		done <- result{res, err}
	}()

	// Every notification has been read from the server, while the
	// handler is stuck on the first.
	waitFor(t, 30*time.Second, "the server's notifications read", func() bool {
		read, _ := c.HeldNotifications()
		return read >= 2*steps
	})
	read, handed := c.HeldNotifications()
	free()
	if limit := int64(2*maxQueuedNotices + maxHeldLogs + 8); handed > limit { // (and a few of the handshake)
		t.Errorf("%d of %d notifications read were handed to the SDK's queue, want at most %d", handed, read, limit)
	}

	r := <-done
	if r.err != nil {
		t.Fatalf("CallTool(progress): %v", r.err)
	}
	if got, want := textOf(t, r.res), fmt.Sprintf("%d steps", steps); got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	pmu.Lock()
	defer pmu.Unlock()
	if len(late) > 0 {
		t.Errorf("progress %v came after the result", late)
	}
	if len(seen) == 0 || seen[len(seen)-1] != steps {
		t.Fatalf("progress seen %d times, last %v; want the last to be %d", len(seen), seen[max(0, len(seen)-3):], steps)
	}
	if len(seen) >= steps {
		t.Errorf("progress seen %d times: not coalesced", len(seen))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("progress out of order at %d: %v then %v", i, seen[i-1], seen[i])
		}
	}

	// Each log message arrived or was counted as dropped; the warning
	// says how many, after the last one that arrived.
	var warning string
	waitFor(t, 30*time.Second, "the dropped log messages' warning", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(logs) > 0 && strings.Contains(logs[len(logs)-1], "dropped")
	})
	mu.Lock()
	got := append([]string(nil), logs...)
	mu.Unlock()
	warning = got[len(got)-1]
	n := dropped.Load()
	if want := fmt.Sprintf("%d log messages of server flood dropped: the client did not keep up", n); warning != want {
		t.Errorf("warning %q, want %q", warning, want)
	}
	if kept := uint64(len(got) - 1); n == 0 || kept+n != steps {
		t.Errorf("%d log messages arrived and %d were dropped, want %d in all (some dropped)", kept, n, steps)
	}
	last := 0
	for _, l := range got[:len(got)-1] {
		i, err := strconv.Atoi(strings.TrimPrefix(l, "log "))
		if err != nil || i <= last {
			t.Fatalf("log message %q after log %d", l, last)
		}
		last = i
	}
}
