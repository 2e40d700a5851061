package upstream_test

//lint:file-ignore SA1019 elicitation, sampling and roots are deprecated only from protocol 2026-07-28; servers use them today.

import (
	"context"
	"encoding/json"
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

// TestRequestErrorsHaveACode: whatever error answers a server's
// elicitation, sampling or roots request, the server gets a JSON-RPC
// error with a code, the same over streamable HTTP (the lean call path)
// and SSE (the SDK's client, which writes a plain error with code 0): a
// JSON-RPC error, also wrapped (as the go-sdk's ServerSession wraps its
// client's), as it is — code, message and data; a sampling request
// Switchboard declines (a person said no, no terminal, --sampling
// decline: an authorization error from whoever answers) the
// specification's "User rejected sampling request", code -1, with
// Switchboard's message; any other failure (a model's, the client's
// connection closed, the call's time up) an internal error, -32603, with
// Switchboard's words.
func TestRequestErrorsHaveACode(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	tell := func(err error) (*mcp.CallToolResult, error) {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return nil, fmt.Errorf("want a JSON-RPC error, got %v", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s %s", we.Code, we.Message, we.Data)}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "elicit", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)})
			return tell(err)
		})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.ListRoots(ctx, nil)
			return tell(err)
		})
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			return tell(err)
		})
	clients := &jsonrpc.Error{Code: -32042, Message: "not now", Data: json.RawMessage(`{"why":"busy"}`)}
	answers := []struct {
		name  string
		err   error
		want  string
		tools []string // all three when empty
	}{
		{"sampling declined", fault.New(fault.Authorization, "switchboard declined asker's request for a completion: the person declined it"),
			"-1 switchboard declined asker's request for a completion: the person declined it ", []string{"sample"}},
		{"a model that failed", errors.New("the model failed"), fmt.Sprintf("%d the model failed ", jsonrpc.CodeInternalError), []string{"sample"}},
		{"the client's own error, as the SDK wraps it", fmt.Errorf("calling %q: %w", "x", clients), `-32042 not now {"why":"busy"}`, nil},
		{"the client's connection closed", fmt.Errorf("%w: calling %q: EOF", mcp.ErrConnectionClosed, "x"),
			fmt.Sprintf(`%d connection closed: calling "x": EOF `, jsonrpc.CodeInternalError), nil},
		{"the call's time up", fmt.Errorf("asking the client: %w", context.DeadlineExceeded),
			fmt.Sprintf("%d asking the client: context deadline exceeded ", jsonrpc.CodeInternalError), nil},
	}
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
			for _, answer := range answers {
				c, err := upstream.Dial(context.Background(), config.Server{Name: "asker", Transport: tc.transport, URL: hs.URL + tc.path, TerminateOnClose: true},
					upstream.DialOptions{Requests: upstream.ClientRequests{
						Elicit: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
							return nil, answer.err
						},
						ListRoots: func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
							return nil, answer.err
						},
						CreateMessage: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
							return nil, answer.err
						},
					}})
				if err != nil {
					t.Fatal(err)
				}
				tools := answer.tools
				if len(tools) == 0 {
					tools = []string{"elicit", "roots", "sample"}
				}
				for _, tool := range tools {
					res, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: tool}, nil)
					if err != nil || res.IsError {
						t.Fatalf("%s, %s: got %+v %v", answer.name, tool, res, err)
					}
					if got := res.Content[0].(*mcp.TextContent).Text; got != answer.want {
						t.Errorf("%s, %s: the server got the error %q, want %q", answer.name, tool, got, answer.want)
					}
				}
				c.Close()
			}
		})
	}
}
