package upstream

//lint:file-ignore SA1019 the test exercises roots, deprecated only from protocol 2026-07-28.

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestPassInputRequests: a connection dialled with PassInputRequests
// returns a 2026-07-28 server's input requests as the server sent them
// (the SDK's client does not answer them), and a call made with
// WithInputResponses carries the caller's answers and request state —
// the client's roots, unless the server has roots configured, which then
// replace the client's answer, as when the server asks with a request.
func TestPassInputRequests(t *testing.T) {
	t.Parallel()
	clientRoots := &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///the/client/own", Name: "own"}}}
	for _, tc := range []struct {
		name       string
		configured []string
		want       string
	}{
		{"no roots configured", nil, "own=file:///the/client/own"},
		{"roots configured", configuredRootURIs, wantRoots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gotState string
			s := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
			s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					resp, ok := req.Params.InputResponses["r"]
					if !ok {
						return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}, RequestState: "asked"}, nil
					}
					gotState = req.Params.RequestState
					res, _ := resp.(*mcp.ListRootsResult)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: rootsText(res)}}}, nil
				})
			ct, st := mcp.NewInMemoryTransports()
			ss, err := s.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			srv := config.Server{Name: "fs", Transport: config.TransportStdio, Command: "unused", Roots: tc.configured}
			c, err := Dial(context.Background(), srv, DialOptions{Transport: ct, PassInputRequests: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if v := c.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %s, want 2026-07-28 (the case this test is about)", v)
			}
			ctx := context.Background()
			first, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "roots"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !first.NeedsInput() || first.RequestState != "asked" || len(first.InputRequests) != 1 {
				t.Fatalf("first result: needs input %v, state %q, %d input requests; want the server's (true, \"asked\", 1)",
					first.NeedsInput(), first.RequestState, len(first.InputRequests))
			}
			if _, ok := first.InputRequests["r"].(*mcp.ListRootsParams); !ok {
				t.Fatalf("input request r is a %T, want the server's roots request", first.InputRequests["r"])
			}
			ctx = WithInputResponses(ctx, mcp.InputResponseMap{"r": clientRoots}, first.RequestState)
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "roots"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != tc.want || gotState != "asked" {
				t.Errorf("the server got roots %q, state %q; want %q, \"asked\"", got, gotState, tc.want)
			}
		})
	}
}
