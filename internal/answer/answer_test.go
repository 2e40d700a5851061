package answer_test

//lint:file-ignore SA1019 sampling and elicitation are deprecated only from protocol 2026-07-28.

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// named answers every request with its name.
type named string

var _ answer.Answerer = named("")

func (n named) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"by": string(n)}}, nil
}

func (n named) CreateMessage(context.Context, string, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Model: string(n), Content: &mcp.TextContent{Text: string(n)}}, nil
}

func by(t *testing.T, r upstream.ClientRequests, ctx context.Context) string {
	t.Helper()
	res, err := r.Elicit(ctx, &mcp.ElicitParams{Message: "q"})
	if err != nil {
		return "error: " + err.Error()
	}
	return res.Content["by"].(string)
}

// TestRouting: a request linked to a call goes to that call's answerer; an
// unlinked one to the newest call's; a call without an answerer (a gateway
// client's) goes to next; with no next, the request is refused saying why.
func TestRouting(t *testing.T) {
	var calls answer.Calls
	next := upstream.ClientRequests{Elicit: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"by": "gateway"}}, nil
	}}
	r := calls.Requests("s", next)
	bare := calls.Requests("s", upstream.ClientRequests{})
	ctx := context.Background()

	if got := by(t, bare, ctx); !strings.Contains(got, "outside any call") {
		t.Errorf("no call: got %q, want a refusal outside any call", got)
	}
	cliCtx, endCLI := calls.Track(answer.With(ctx, named("cli")), "s")
	gwCtx, endGW := calls.Track(ctx, "s")
	if got := by(t, r, cliCtx); got != "cli" {
		t.Errorf("linked to the CLI call: got %q, want cli", got)
	}
	if got := by(t, r, gwCtx); got != "gateway" {
		t.Errorf("linked to the gateway call: got %q, want gateway", got)
	}
	if got := by(t, r, ctx); got != "gateway" {
		t.Errorf("unlinked, newest call is the gateway's: got %q, want gateway", got)
	}
	if got := by(t, bare, gwCtx); !strings.Contains(got, "whose caller cannot answer it") {
		t.Errorf("a call without an answerer and no next: got %q", got)
	}
	endGW()
	if got := by(t, r, ctx); got != "cli" {
		t.Errorf("unlinked, newest call is the CLI's: got %q, want cli", got)
	}
	endCLI()
	if got := by(t, r, ctx); got != "gateway" {
		t.Errorf("no call left: got %q, want next's answer", got)
	}
	if _, ok := calls.For(ctx, "s"); ok {
		t.Error("For found a call after every call ended")
	}
	res, err := r.CreateMessage(cliCtx, &mcp.CreateMessageParams{})
	if err != nil || res.Model != "cli" {
		t.Errorf("sampling linked to the CLI call: got %+v, %v", res, err)
	}
}

// TestDefaults: a form is answered with its defaults when every required
// field has one; else the first required field without one is named.
func TestDefaults(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"a": map[string]any{"type": "string", "default": "x"},
		"b": map[string]any{"type": "integer", "default": 2},
		"c": map[string]any{"type": "string"},
	}, "required": []any{"b", "a"}}
	got, missing, err := answer.Defaults(schema)
	if err != nil || missing != "" || len(got) != 2 || got["a"] != "x" || got["b"] != float64(2) {
		t.Errorf("got %v, %q, %v; want a and b with their defaults", got, missing, err)
	}
	schema["required"] = []any{"c", "a"}
	if _, missing, _ := answer.Defaults(schema); missing != "c" {
		t.Errorf("missing: got %q, want c", missing)
	}
	if _, _, err := answer.Defaults([]int{1}); err == nil {
		t.Error("a schema that is a list: got no error")
	}
}
