package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// checkingServer is an in-process go-sdk server over streamable HTTP
// whose tool greet has a typed handler (the SDK checks its arguments
// against the schema), and which counts the tools/call requests it
// receives, by tool name.
func checkingServer(t *testing.T) (url string, seen func(tool string) int) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "checking", Version: "1"}, nil)
	type in struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + a.Name}}}, nil, nil
	})
	var mu sync.Mutex
	calls := map[string]int{}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				mu.Lock()
				calls[r.Params.Name]++
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, func(tool string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[tool]
	}
}

// TestUnvalidatedLeavesChecksToTheServer: with Request.Unvalidated a
// tool the engine does not know and arguments that fail the schema reach
// the server, whose own answer the caller gets; without it the engine
// refuses them itself. Switchboard's own refusals stay.
func TestUnvalidatedLeavesChecksToTheServer(t *testing.T) {
	t.Parallel()
	url, seen := checkingServer(t)
	srv := config.Server{Name: "chk", Transport: config.TransportHTTP, URL: url, Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second}
	f := newFixture(t, []config.Server{srv}, nil)
	ctx := context.Background()

	// serverError is the JSON-RPC error the server answered with, if any.
	serverError := func(err error) *jsonrpc.Error {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return rpc
		}
		return nil
	}

	t.Run("unknown tool", func(t *testing.T) {
		_, err := f.eng.Call(ctx, toolcall.Request{Server: "chk", Tool: "nope", RawArguments: json.RawMessage(`{}`)})
		if fault.KindOf(err) != fault.NotFound || serverError(err) != nil || seen("nope") != 0 {
			t.Fatalf("checked: got %v (the server saw %d calls), want the engine's not_found, the server not asked", err, seen("nope"))
		}
		_, err = f.eng.Call(ctx, toolcall.Request{Server: "chk", Tool: "nope", RawArguments: json.RawMessage(`{}`), Unvalidated: true})
		rpc := serverError(err)
		if rpc == nil || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message != `unknown tool "nope"` {
			t.Fatalf("unvalidated: got %v, want the server's -32602 unknown tool \"nope\"", err)
		}
		if seen("nope") != 1 {
			t.Errorf("the server saw %d calls of nope, want 1", seen("nope"))
		}
	})

	t.Run("arguments that fail the schema", func(t *testing.T) {
		for _, args := range []string{`{"name": 5}`, `[1]`} {
			_, err := f.eng.Call(ctx, toolcall.Request{Server: "chk", Tool: "greet", RawArguments: json.RawMessage(args)})
			if fault.KindOf(err) != fault.Validation {
				t.Fatalf("checked %s: got %v, want the engine's validation error", args, err)
			}
			before := seen("greet")
			res, err := f.eng.Call(ctx, toolcall.Request{Server: "chk", Tool: "greet", RawArguments: json.RawMessage(args), Unvalidated: true})
			if err != nil {
				t.Fatalf("unvalidated %s: %v, want the server's own result", args, err)
			}
			if !res.IsError || !strings.HasPrefix(textOf(res), `validating "arguments": `) {
				t.Errorf("unvalidated %s: got isError=%v %q, want the server's isError result `validating \"arguments\": …`", args, res.IsError, textOf(res))
			}
			if seen("greet") != before+1 {
				t.Errorf("unvalidated %s: the server was not asked", args)
			}
		}
	})

	t.Run("Switchboard's own refusals stay", func(t *testing.T) {
		_, err := f.eng.Call(ctx, toolcall.Request{Server: "nosuch", Tool: "greet", Unvalidated: true})
		if fault.KindOf(err) != fault.NotFound || !strings.Contains(err.Error(), "nosuch") {
			t.Errorf("unknown server: got %v, want not_found naming it", err)
		}
		_, err = f.eng.Call(ctx, toolcall.Request{Server: "chk", Tool: "greet", RawArguments: json.RawMessage(`{"name": "x"}`), Unvalidated: true, Timeout: time.Hour})
		if fault.KindOf(err) != fault.Validation || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("timeout out of range: got %v, want the engine's validation error", err)
		}
	})

	t.Run("recorded with the server's answer", func(t *testing.T) {
		var unknown, invalid bool
		for _, r := range f.rec.all() {
			switch {
			case r.Tool == "nope" && r.Status == string(toolcall.StatusError) && strings.Contains(r.ErrorMessage, `unknown tool "nope"`):
				unknown = true
			case r.Tool == "greet" && r.ErrorKind == "tool_error" && strings.Contains(r.ErrorMessage, `validating "arguments"`):
				invalid = true
			}
		}
		if !unknown || !invalid {
			t.Errorf("history: got %+v, want the server's unknown-tool error and its validation result recorded", f.rec.all())
		}
	})
}
