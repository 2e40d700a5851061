package upstream_test

//lint:file-ignore SA1019 sampling is deprecated only from protocol 2026-07-28; servers use it today.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestSamplingDeclinedIsUserRejected: a sampling request Switchboard
// declines (a person said no, no terminal, --sampling decline: an
// authorization error from whoever answers) reaches the server as the
// specification's "User rejected sampling request", code -1, with
// Switchboard's message; a model's failure stays an internal error. Over
// streamable HTTP (the lean call path) and SSE (the SDK's).
func TestSamplingDeclinedIsUserRejected(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			var we *jsonrpc.Error
			if !errors.As(err, &we) {
				return nil, fmt.Errorf("want a JSON-RPC error, got %v", err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s", we.Code, we.Message)}}}, nil
		})
	for _, tc := range []struct {
		name      string
		transport config.Transport
		path      string
		handler   http.Handler
	}{
		{"streamable http", config.TransportHTTP, "/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)},
		{"sse", config.TransportSSE, "/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(tc.handler)
			t.Cleanup(hs.Close)
			for _, answer := range []struct {
				err  error
				want string
			}{
				{fault.New(fault.Authorization, "switchboard declined asker's request for a completion: the person declined it"),
					"-1 switchboard declined asker's request for a completion: the person declined it"},
				{errors.New("the model failed"), fmt.Sprintf("%d the model failed", jsonrpc.CodeInternalError)},
			} {
				c, err := upstream.Dial(context.Background(), config.Server{Name: "asker", Transport: tc.transport, URL: hs.URL + tc.path, TerminateOnClose: true},
					upstream.DialOptions{Requests: upstream.ClientRequests{
						CreateMessage: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
							return nil, answer.err
						},
					}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "sample"}, nil)
				c.Close()
				if err != nil || res.IsError {
					t.Fatalf("sample: got %+v %v", res, err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != answer.want {
					t.Errorf("the server got the error %q, want %q", got, answer.want)
				}
			}
		})
	}
}
