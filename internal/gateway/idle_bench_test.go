package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkIdleSessions measures what an idle client session costs: n
// streamable-HTTP sessions are opened (initialize, then
// notifications/initialized; no event stream, as most clients leave them
// between calls), and the live heap and goroutines they add are reported
// per session (bytes/session counts live heap and goroutine stacks;
// heap-bytes/session the heap alone). "gateway" is a gateway wired as the daemon wires it; "sdk"
// is a bare go-sdk server with no tools on the SDK's own handler, the
// floor the SDK sets. Run it with -benchtime=1x: each run opens n
// sessions once.
//
//	go test -run '^$' -bench BenchmarkIdleSessions -benchtime=1x ./internal/gateway
func BenchmarkIdleSessions(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("gateway/%d", n), func(b *testing.B) {
			r := newRig(b, nil, "gateway:\n  max_sessions: 0\n  max_sessions_per_user: 0\n")
			for range b.N {
				measureIdle(b, r.srv.URL+"/mcp", n)
			}
		})
		b.Run(fmt.Sprintf("sdk/%d", n), func(b *testing.B) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			b.Cleanup(hs.Close)
			for range b.N {
				measureIdle(b, hs.URL, n)
			}
		})
	}
}

// measureIdle opens n sessions on url and reports the heap and goroutines
// they hold, per session; it closes them afterwards.
func measureIdle(b *testing.B, url string, n int) {
	b.Helper()
	heap0, stack0 := live()
	g0 := runtime.NumGoroutine()
	ids := make([]string, 0, n)
	for range n {
		ids = append(ids, openIdle(b, url))
	}
	heap1, stack1 := live()
	g1 := runtime.NumGoroutine()
	b.ReportMetric(float64(heap1-heap0+stack1-stack0)/float64(n), "bytes/session")
	b.ReportMetric(float64(heap1-heap0)/float64(n), "heap-bytes/session")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/session")
	for _, id := range ids {
		req, _ := http.NewRequest(http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// live returns the bytes of live heap objects after a collection, and of
// goroutine stacks.
func live() (heap, stacks int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse)
}

// openIdle opens one session on url and returns its id.
func openIdle(b *testing.B, url string) string {
	b.Helper()
	post := func(body, id string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`, "")
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		b.Fatalf("initialize: got %d, session %q", resp.StatusCode, id)
	}
	if resp := post(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, id); resp.StatusCode != http.StatusAccepted {
		b.Fatalf("notifications/initialized: got %d", resp.StatusCode)
	}
	return id
}
