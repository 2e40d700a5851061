package upstream

//lint:file-ignore SA1019 the test exercises sampling and roots, deprecated only from protocol 2026-07-28.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// fastServer is a streamable-HTTP server whose tools exercise what a
// server may send on a call's own event stream.
func fastServer(t *testing.T, jsonResponse bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var cancelled atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "fast", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}},
				StructuredContent: map[string]any{"ok": true}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				return nil, err
			}
			text := res.Content.(*mcp.TextContent).Text + " " + roots.Roots[0].URI
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3})
				if err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				cancelled.Add(1)
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return &mcp.CallToolResult{}, nil
			}
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
	t.Cleanup(hs.Close)
	return hs, &cancelled
}

// callerKey marks a call's context in tests.
type callerKey struct{}

func TestFastCall(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		name := "event-stream"
		if jsonResponse {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			hs, cancelled := fastServer(t, jsonResponse)
			srv := config.Server{Name: "fast", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
			var sampled atomic.Int32
			var sampledFor atomic.Value
			c, err := Dial(context.Background(), srv, DialOptions{Requests: ClientRequests{
				CreateMessage: func(ctx context.Context, _ *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					sampled.Add(1)
					sampledFor.Store(ctx.Value(callerKey{}))
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
				},
				ListRoots: func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
					return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work"}}}, nil
				},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.fast == nil {
				t.Fatal("a streamable-HTTP session did not get the fast path")
			}
			ctx := context.Background()
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": 1}}, nil)
			if err != nil || res.Content[0].(*mcp.TextContent).Text != `{"a":1}` || res.StructuredContent == nil {
				t.Errorf("echo: got %+v %v", res, err)
			}
			if res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "fail"}, nil); err != nil || !res.IsError {
				t.Errorf("a tool error: got %+v %v, want isError", res, err)
			}
			if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}, nil); err == nil || fault.KindOf(err) == "" {
				t.Errorf("an unknown tool: got %v, want a typed error", err)
			}
			if !jsonResponse {
				// Requests the server sends on the call's own stream are
				// answered, with the call's context (which tells the
				// gateway whose call it is).
				cctx := context.WithValue(ctx, callerKey{}, "the caller")
				res, err := c.CallTool(cctx, &mcp.CallToolParams{Name: "sample"}, nil)
				if err != nil || res.Content[0].(*mcp.TextContent).Text != "sampled file:///work" || sampled.Load() != 1 {
					t.Errorf("sample: got %+v %v (sampled %d)", res, err, sampled.Load())
				}
				if got := sampledFor.Load(); got != "the caller" {
					t.Errorf("sampling was answered with the context of %v, want the call's", got)
				}
				// Progress reaches the caller's handler, in order, before
				// the call returns, on the fast path too. (A go-sdk server
				// answering with JSON sends progress on the standalone
				// stream, if one is open.)
				var progress []float64
				fastBefore := c.fast.next.Load()
				res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "progress"}, func(p *mcp.ProgressNotificationParams) {
					progress = append(progress, p.Progress)
				})
				if err != nil || res.Content[0].(*mcp.TextContent).Text != "done" {
					t.Errorf("progress: got %+v %v", res, err)
				}
				if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 {
					t.Errorf("progress: got notifications %v before the result, want [1 2 3]", progress)
				}
				if c.fast.next.Load() != fastBefore+1 {
					t.Error("a call with a progress token did not take the fast path")
				}
			}

			// Cancelling the caller cancels the server's handler.
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			if _, err := c.CallTool(cctx, &mcp.CallToolParams{Name: "slow"}, nil); !errors.Is(err, context.DeadlineExceeded) && fault.KindOf(err) != fault.Timeout {
				t.Errorf("slow with a deadline: got %v, want a timeout", err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for cancelled.Load() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the server never saw the call cancelled")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestFastCallFallsBackWhenTheSessionIsGone(t *testing.T) {
	t.Parallel()
	hs, _ := fastServer(t, false)
	srv := config.Server{Name: "fast", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.fast.session = "gone" // the server answers 404 before doing anything
	res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"b": 2}}, nil)
	if err != nil || res.Content[0].(*mcp.TextContent).Text != `{"b":2}` {
		t.Errorf("echo after the fast path's 404: got %+v %v, want the SDK's path to have run it", res, err)
	}
}

// TestDecodeResult checks that the standard-library decoding of a result
// agrees with the SDK's, and that anything but text goes to the SDK.
func TestDecodeResult(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a","_meta":{"k":1},"annotations":{"audience":["user"],"priority":0.5}},{"type":"text","text":""}],"isError":true,"_meta":{"x":"y"},"structuredContent":{"n":1,"l":[1,"a",null]}}`,
		`{"content":[]}`,
		`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"b"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"x://y","text":"t"}}]}`,
		`{"content":[{"type":"text","text":"late"}],"resultType":"complete"}`,
	} {
		got, err := decodeResult(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("decodeResult(%s): %v", raw, err)
		}
		var want mcp.CallToolResult
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(&want)
		if string(gj) != string(wj) {
			t.Errorf("decodeResult(%s):\n got %s\nwant %s", raw, gj, wj)
		}
	}
	if _, err := decodeResult(json.RawMessage(`{"content":[{"type":"text","text":1}]}`)); err == nil {
		t.Error("a malformed result decoded without error")
	}
}
