//lint:file-ignore SA1019 the test's server logs, deprecated only from protocol 2026-07-28; clients and servers use it today.

package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestLogsOutsideRequestsAreTold: on the SDK's call path, a log message
// a go-sdk server sends on its standalone stream reaches Events.Log with
// SentOutsideRequests, also after the client resumed that stream from its
// last event id; one sent on a call's stream does not, also after the
// client resumed the call's stream (a GET with Last-Event-ID as well).
func TestLogsOutsideRequestsAreTold(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "logs", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "call, before"}); err != nil {
				return nil, err
			}
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			// Replayed when the client resumes the call's stream.
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "call, after"}); err != nil {
				return nil, err
			}
			// The standalone stream is refused until the client has
			// resumed it (resumeRecorder ends the first at once).
			for req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: "standalone"}) != nil {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(10 * time.Millisecond):
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	rr := &resumeRecorder{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})}
	hs := httptest.NewServer(rr)
	defer hs.Close()

	var mu sync.Mutex
	got := map[string]bool{}
	srv := config.Server{Name: "logs", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{
		LeanCalls: func() bool { return false },
		Events: Events{Log: func(ctx context.Context, p *mcp.LoggingMessageParams) {
			mu.Lock()
			got[fmt.Sprint(p.Data)] = SentOutsideRequests(ctx)
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Session().SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "log", Arguments: map[string]any{}}, nil); err != nil {
		t.Fatalf("log: %v", err)
	}
	want := map[string]bool{"call, before": false, "call, after": false, "standalone": true}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		diff := cmp.Diff(want, got)
		mu.Unlock()
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("each log message's SentOutsideRequests (-want +got):\n%s", diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	var call, standalone int
	for _, g := range rr.resumes {
		if g.lastEventID == standaloneEventID {
			standalone++
		} else {
			call++
		}
	}
	if call == 0 || standalone == 0 {
		t.Errorf("resumed the call's stream %d times and the standalone stream %d times, want both", call, standalone)
	}
}
