package daemon

//lint:file-ignore SA1019 roots are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// getWatch is an http.RoundTripper that closes open once a GET (the
// go-sdk client's standalone stream) has been answered with an event
// stream.
type getWatch struct {
	base http.RoundTripper
	once sync.Once
	open chan struct{}
}

func (w *getWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		w.once.Do(func() { close(w.open) })
	}
	return resp, err
}

// askingUpstream is a go-sdk server that, as each session starts (its
// client's notifications/initialized), asks that client for its roots
// outside any call, and reports what it got. Its tool "echo" answers,
// "grow" adds a tool (a list change to every session), and "later" asks
// for the roots again once it has returned.
func askingUpstream() (*mcp.Server, chan string) {
	got := make(chan string, 8)
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				res, err := req.Session.ListRoots(ctx, nil)
				if err != nil {
					got <- "error: " + err.Error()
					return
				}
				var uris []string
				for _, r := range res.Roots {
					uris = append(uris, r.URI)
				}
				got <- strings.Join(uris, ",")
			}()
		},
	})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echoed"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "grow", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv.AddTool(&mcp.Tool{Name: "grown", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grew"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "later", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ss := req.Session
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				res, err := ss.ListRoots(ctx, nil)
				if err != nil {
					got <- "later error: " + err.Error()
					return
				}
				var uris []string
				for _, r := range res.Roots {
					uris = append(uris, r.URI)
				}
				got <- "later " + strings.Join(uris, ",")
			}()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil
		})
	return srv, got
}

// TestFastPathOwnedSessionAsksOnTheStandaloneStream: what a per_client
// server sends a go-sdk client outside any call reaches the client on its
// standalone stream (the go-sdk's client opens it before its first
// request) with fast_path on as with it off, on a prefixed view and on a
// view that is the server: the roots request the server sends as the
// client's own upstream session starts, during the client's first request
// (a tools/call, on the lean path with fast_path on); the list change the
// server then makes; and a roots request it sends after a call returned.
func TestFastPathOwnedSessionAsksOnTheStandaloneStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fast  bool
		never bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		fast := tc.fast
		path, prefix := "/mcp", "asker__"
		if tc.never {
			path, prefix = "/mcp/asker", ""
		}
		t.Run(fmt.Sprintf("fast_path=%v,view=%s", fast, path), func(t *testing.T) {
			t.Parallel()
			up, got := askingUpstream()
			srv := httpUpstream("asker", serveHTTP(t, up, nil))
			srv.Session = config.SessionPerClient
			cfg := testConfig(srv)
			cfg.Gateway.DisableFastPath = !fast
			cfg.Gateway.Views = []config.View{{Name: "asker", Servers: []string{"asker"}, Prefix: config.PrefixNever}}
			r := start(t, cfg, debugLogOnFailure(t))
			next := func(what string) string {
				t.Helper()
				select {
				case roots := <-got:
					return roots
				case <-time.After(30 * time.Second):
					t.Fatalf("%s: the server's roots request got no answer within 30s", what)
					return ""
				}
			}
			next("the shared session's start") // the gateway's answer: none
			// Another client lists the tool first (which opens its own
			// upstream session, asked for its roots too), so that the
			// view has it when this test's client calls it first thing.
			probe := r.connect(t, "/mcp", nil, nil)
			waitTools(t, probe, "asker__echo", has("asker__echo"))
			if roots := next("the probe's session's start"); roots != "" {
				t.Fatalf("the probe's own session was given roots %q, want none", roots)
			}

			changed := make(chan struct{}, 8)
			c := mcp.NewClient(&mcp.Implementation{Name: "fp17-client", Version: "1"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			c.AddRoots(&mcp.Root{URI: "file:///fp17/mine"})
			w := &getWatch{base: http.DefaultTransport, open: make(chan struct{})}
			tr := &mcp.StreamableClientTransport{Endpoint: r.url + path, MaxRetries: -1, HTTPClient: &http.Client{Transport: w}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			t.Cleanup(func() { cs.Close() })
			select {
			case <-w.open:
			case <-ctx.Done():
				t.Fatal("the client's standalone stream did not open within 30s")
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: prefix + "echo", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("calling %secho: %v, %v", prefix, res, err)
			}
			if roots := next("the client's session's start"); roots != "file:///fp17/mine" {
				t.Errorf("the server asked for the client's roots as its session started and got %q, want file:///fp17/mine", roots)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: prefix + "grow", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("calling %sgrow: %v", prefix, err)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("the client was not told of its session's list change within 30s")
			}
			for i := 0; i < 3; i++ {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: prefix + "later", Arguments: map[string]any{}}); err != nil {
					t.Fatalf("calling %slater: %v", prefix, err)
				}
				if roots := next("after a call"); roots != "later file:///fp17/mine" {
					t.Errorf("the server asked for the client's roots after a call and got %q, want later file:///fp17/mine", roots)
				}
			}
		})
	}
}
