package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestOwnListsRoundSaysInputRequired: a client of protocol 2026-07-28
// whose prompts/get and resources/read go to its own upstream session
// (per_client: the prompt and resource are in its own lists only, not in
// the catalog the gateway's shared session filled) and whose server asks
// it for input meanwhile gets an input-required result that says so
// (resultType "input_required"), as through the catalog. (Before, the
// gateway answered such a request beside the SDK's handlers, which set
// the resultType, and the client took the round for a complete result;
// seen as a CI flake of TestShutdownAfterAClientLeftARound, whose client
// got either path.)
func TestOwnListsRoundSaysInputRequired(t *testing.T) {
	t.Parallel()
	asks := testserver.RequestAsks()
	// The first session initialized (the gateway's shared one) lists
	// neither.
	var first atomic.Pointer[mcp.ServerSession]
	asks.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			ss, _ := req.GetSession().(*mcp.ServerSession)
			if method == "initialize" {
				first.CompareAndSwap(nil, ss)
			}
			if err != nil || first.Load() != ss {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.ListPromptsResult:
				cp := *r
				cp.Prompts = slices.DeleteFunc(slices.Clone(r.Prompts), func(p *mcp.Prompt) bool { return p.Name == "ask" })
				return &cp, nil
			case *mcp.ListResourcesResult:
				cp := *r
				cp.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(rs *mcp.Resource) bool { return rs.URI == "ask://res" })
				return &cp, nil
			}
			return res, err
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return asks }, nil))
	t.Cleanup(hs.Close)
	s := httpUpstream("asks", hs.URL)
	s.Session, s.NoIdentityMeta, s.RequestTimeout = config.SessionPerClient, true, time.Minute
	_, tr := startRounds(t, testConfig(s), "stdio")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := connectRounds(t, ctx, roundsClient(&askedCount{}, &mcp.MultiRoundTripOptions{Disabled: true}), tr, nil, "2026-07-28")
	prompt := listedPrompt(t, ctx, cs, "ask")
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: map[string]string{"key": "P"}})
	if err != nil || res.InputRequests == nil {
		t.Fatalf("prompts/get %s: %v %+v, want a result asking for input", prompt, err, res)
	}
	if !res.NeedsInput() {
		t.Errorf("prompts/get %s: the result asks for input (%d requests) but does not say input_required", prompt, len(res.InputRequests))
	}
	eventually(t, "the resource is listed", func() bool {
		for rs, err := range cs.Resources(ctx, nil) {
			if err == nil && rs.URI == "ask://res" {
				return true
			}
		}
		return false
	})
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ask://res"})
	if err != nil || read.InputRequests == nil {
		t.Fatalf("resources/read ask://res: %v %+v, want a result asking for input", err, read)
	}
	if !read.NeedsInput() {
		t.Errorf("resources/read ask://res: the result asks for input (%d requests) but does not say input_required", len(read.InputRequests))
	}
}
