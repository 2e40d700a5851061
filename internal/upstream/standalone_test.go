package upstream

//lint:file-ignore SA1019 the test exercises roots and logging notifications, deprecated only from protocol 2026-07-28.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// TestStreamableOutsideACall: a streamable-HTTP server's messages outside
// any call — a list change, a resource update, a log message and a roots
// request — reach the client over the standalone event stream, and the
// client's requests carry the negotiated protocol version.
func TestStreamableOutsideACall(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "pushy", Version: "1"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	s.AddResource(&mcp.Resource{URI: "demo://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "demo://doc", Text: "x"}}}, nil
	})
	var (
		mu       sync.Mutex
		versions = map[string]bool{}
	)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
			mu.Lock()
			versions[r.Header.Get("Mcp-Protocol-Version")] = true
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	got := make(chan string, 16)
	events := Events{
		ToolsChanged:    func() { got <- "tools changed" },
		ResourceUpdated: func(_ context.Context, uri string) { got <- "updated " + uri },
		Log:             func(_ context.Context, p *mcp.LoggingMessageParams) { got <- "log " + p.Logger },
	}
	requests := ClientRequests{ListRoots: func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work", Name: "work"}}}, nil
	}}
	srv := config.Server{Name: "pushy", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{Events: events, Requests: requests})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://doc"}); err != nil {
		t.Fatal(err)
	}
	if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	var ss *mcp.ServerSession
	for sess := range s.Sessions() {
		ss = sess
	}
	if ss == nil {
		t.Fatal("the server has no session")
	}

	// The standalone stream is opened right after initialize; wait until
	// the server can use it (a list change sent before would be dropped).
	want := []string{"tools changed", "updated demo://doc", "log pushy"}
	deadline := time.Now().Add(5 * time.Second)
	var seen []string
	for _, w := range want {
		for {
			switch w {
			case "tools changed":
				s.AddTool(&mcp.Tool{Name: "late" + time.Now().Format("150405.000000"), InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{}, nil
					})
			case "updated demo://doc":
				_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "demo://doc"})
			case "log pushy":
				_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "pushy", Data: "hello"})
			}
			select {
			case g := <-got:
				seen = append(seen, g)
			case <-time.After(100 * time.Millisecond):
			}
			if slices.Contains(seen, w) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q from outside a call within 5s (got %q): the standalone event stream is not open", w, seen)
			}
		}
	}

	roots, err := ss.ListRoots(ctx, nil)
	if err != nil {
		t.Fatalf("a roots request outside a call: %v", err)
	}
	if len(roots.Roots) != 1 || roots.Roots[0].URI != "file:///work" {
		t.Errorf("roots: got %+v, want the client's file:///work", roots.Roots)
	}

	mu.Lock()
	defer mu.Unlock()
	if versions[""] || len(versions) == 0 {
		t.Errorf("Mcp-Protocol-Version headers on the session's requests: got %v, want the negotiated version on every one", versions)
	}
}

// TestStreamableProgressOrderWithoutFastPath: a stateless streamable-HTTP
// server (no session, so no fast path) sends progress ahead of its
// result; every notification is delivered before CallTool returns.
func TestStreamableProgressOrderWithoutFastPath(t *testing.T) {
	t.Parallel()
	const steps = 20
	s := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "steps", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range steps {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: steps,
				}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()
	srv := config.Server{Name: "steps", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.fast != nil {
		t.Fatal("a stateless session got the fast path; this test is about the SDK's path")
	}
	for round := range 5 {
		var mu sync.Mutex
		n := 0
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "steps"}, func(*mcp.ProgressNotificationParams) {
			mu.Lock()
			n++
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := n
		mu.Unlock()
		if got != steps || res.Content[0].(*mcp.TextContent).Text != "done" {
			t.Fatalf("round %d: got %d progress notifications before the result, want %d", round, got, steps)
		}
	}
}

// TestStreamableServerGone: when a streamable-HTTP server goes away, the
// client notices without a call (its event stream ends), and a call gets
// a connection error that says why, never a protocol error.
func TestStreamableServerGone(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "gone", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv := config.Server{Name: "gone", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop"}, nil); err != nil {
		t.Fatal(err)
	}
	hs.CloseClientConnections()
	hs.Close()

	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Error("the client did not notice within 5s that the server is gone")
	}
	_, err = c.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop"}, nil)
	if k := fault.KindOf(err); k != fault.Connection {
		t.Fatalf("a call to the gone server: got %s (%v), want connection", k, err)
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		t.Logf("message: %s", fe.Message)
		if doing, why, ok := strings.Cut(fe.Message, ": "); !ok || why == "" {
			t.Errorf("message %q says what failed (%q) but not why", fe.Message, doing)
		}
	}
}

// TestStreamableStandaloneStreamResumes: a standalone event stream cut by
// the way (a proxy's idle timeout) is opened again, and the session lives
// on. (Cut a third time without a message in between, the session ends
// and the supervisor dials a new one: the SDK counts such cuts as
// reconnects without progress.)
func TestStreamableStandaloneStreamResumes(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "cut", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	gets := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			mu.Lock()
			gets++
			mu.Unlock()
			ctx, cancel := context.WithTimeout(r.Context(), 300*time.Millisecond)
			defer cancel()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	changed := make(chan struct{}, 16)
	srv := config.Server{Name: "cut", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true}
	c, err := Dial(context.Background(), srv, DialOptions{Events: Events{ToolsChanged: func() { changed <- struct{}{} }}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := gets
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standalone stream was opened %d times in 10s, want it resumed after each cut", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case <-c.Done():
		t.Fatalf("the session ended when its standalone stream was cut: %v", c.Err())
	default:
	}
	if _, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop"}, nil); err != nil {
		t.Fatalf("a call after the stream was cut: %v", err)
	}
}

// TestReadMissingResourceIsNotFound: a server's "resource not found" (code
// -32602 since SEP-2164) is a not_found error that keeps the server's
// words, not a validation error.
func TestReadMissingResourceIsNotFound(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "demo://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "demo://doc", Text: "x"}}}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c, err := Dial(context.Background(), config.Server{Name: "docs", Transport: config.TransportStdio, Command: "unused"}, DialOptions{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.ReadResource(context.Background(), "demo://nope")
	if k := fault.KindOf(err); k != fault.NotFound || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reading a missing resource: got %s %v, want not_found with the server's words", k, err)
	}
}
