package upstream

//lint:file-ignore SA1019 the test exercises roots, deprecated only from protocol 2026-07-28.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

var (
	configuredRootURIs = []string{"file:///srv/docs", "file:///home/me/src/shop"}
	wantRoots          = "docs=file:///srv/docs shop=file:///home/me/src/shop" // sorted
	// callerRoots is a roots handler a caller gives; configured roots win.
	callerRoots = ClientRequests{ListRoots: func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///somewhere/else"}}}, nil
	}}
)

func rootsText(res *mcp.ListRootsResult) string {
	var out []string
	for _, r := range res.Roots {
		out = append(out, r.Name+"="+r.URI)
	}
	slices.Sort(out) // a set: the SDK's own root set is kept in URI order
	return strings.Join(out, " ")
}

// TestConfiguredRootsDuringACall: a streamable-HTTP server that asks for
// roots while it serves a call (on the call's own stream, the lean path)
// gets the configured ones, with or without a caller's handler.
func TestConfiguredRootsDuringACall(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: rootsText(res)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer hs.Close()
	for _, requests := range []ClientRequests{{}, callerRoots} {
		srv := config.Server{Name: "fs", Transport: config.TransportHTTP, URL: hs.URL, TerminateOnClose: true, Roots: configuredRootURIs}
		c, err := Dial(context.Background(), srv, DialOptions{Requests: requests})
		if err != nil {
			t.Fatal(err)
		}
		if c.fast == nil {
			t.Fatal("no fast path on a streamable-HTTP session")
		}
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "roots"}, nil)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != wantRoots {
			t.Errorf("roots the server got (caller handler %v): %q, want %q", requests.ListRoots != nil, got, wantRoots)
		}
	}
}

// TestConfiguredRootsMultiRoundTrip: a server of protocol 2026-07-28
// asks for roots in a call's result (multi round-trip requests), which
// the SDK answers from the client's own root set: the configured roots.
func TestConfiguredRootsMultiRoundTrip(t *testing.T) {
	t.Parallel()
	for _, requests := range []ClientRequests{{}, callerRoots} {
		s := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				resp, ok := req.Params.InputResponses["roots"]
				if !ok {
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}, RequestState: "asked"}, nil
				}
				res, ok := resp.(*mcp.ListRootsResult)
				if !ok {
					return nil, fmt.Errorf("the roots answer is a %T", resp)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: rootsText(res)}}}, nil
			})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := config.Server{Name: "fs", Transport: config.TransportStdio, Command: "unused", Roots: configuredRootURIs}
		c, err := Dial(context.Background(), srv, DialOptions{Transport: ct, Requests: requests})
		if err != nil {
			t.Fatal(err)
		}
		if v := c.session.InitializeResult().ProtocolVersion; v < "2026-07-28" {
			t.Logf("negotiated %s; this test is about 2026-07-28", v)
		}
		res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "roots"}, nil)
		c.Close()
		ss.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != wantRoots {
			t.Errorf("roots (caller handler %v): got %q, want %q", requests.ListRoots != nil, got, wantRoots)
		}
	}
}

// TestConfiguredRootsWithTheFilesystemServer: the reference filesystem
// server (npm peer) replaces the folders it was started with by the roots
// its client gives: with roots configured, it works in exactly those.
func TestConfiguredRootsWithTheFilesystemServer(t *testing.T) {
	t.Parallel()
	started, given := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(given, "note.txt"), []byte("from the root"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, args := testpeer.FilesystemCommand(t, started)
	srv := config.Server{Name: "fs", Transport: config.TransportStdio, Command: bin, Args: args,
		Roots: []string{(&url.URL{Scheme: "file", Path: filepath.ToSlash(given)}).String()}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Dial(ctx, srv, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server asks for roots after initialize: wait until it has them.
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if strings.Contains(text, given) && !strings.Contains(text, started) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("allowed directories: got %q, want only the configured root %s", text, given)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(given, "note.txt")}}, nil)
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "from the root" {
		t.Errorf("reading a file in the root: got %+v %v", res, err)
	}
	res, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"path": started}}, nil)
	if err != nil || !res.IsError {
		t.Errorf("listing the folder the server was started with: got %+v %v, want access denied", res, err)
	}
}
