package upstream

//lint:file-ignore SA1019 roots are deprecated only from protocol 2026-07-28; servers ask for them today.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On protocol 2026-07-28 a server asks its client for roots, an
// elicitation or sampling in a result (multi round-trip requests:
// inputRequests, requestState, resultType "input_required") of a
// tools/call, prompts/get or resources/read, and the client asks again
// with its answers (inputResponses) and the request state. The go-sdk's
// client answers such requests itself, with the connection's handlers
// and root set, and asks again on its own: right for the shared session
// and for every caller that is not a gateway client. A per_client
// session of a gateway view meant to be its server (Owner.PassInputRequests)
// leaves them to the client instead: its results come back as the
// server sent them, and the client's next request carries its own
// answers (WithInputResponses), so that the server asks the client, and
// hears from it, as directly.

// inputResponsesKey is the context key of a request's input responses.
type inputResponsesKey struct{}

// inputAnswers are the answers a client gives to a server's input
// requests, as its retried request carries them.
type inputAnswers struct {
	responses mcp.InputResponseMap
	state     string
}

// WithInputResponses returns a context whose tools/call, prompts/get or
// resources/read carries responses and state — a gateway client's
// answers to the input requests of its server's previous result, and the
// request state that result gave — as its inputResponses and
// requestState. Nothing is added when both are empty.
func WithInputResponses(ctx context.Context, responses mcp.InputResponseMap, state string) context.Context {
	if responses == nil && state == "" {
		return ctx
	}
	return context.WithValue(ctx, inputResponsesKey{}, inputAnswers{responses, state})
}

// inputResponses returns the answers WithInputResponses put in ctx, as
// c sends them: a server configured with roots gets those as the answer
// to a roots request, whatever the client answered (the operator's
// choice wins, as when the server asks with a request); ok is false when
// there are none.
func (c *Client) inputResponses(ctx context.Context) (responses mcp.InputResponseMap, state string, ok bool) {
	a, ok := ctx.Value(inputResponsesKey{}).(inputAnswers)
	if !ok {
		return nil, "", false
	}
	responses = a.responses
	if len(c.server.Roots) > 0 {
		responses = make(mcp.InputResponseMap, len(a.responses))
		for id, r := range a.responses {
			if _, roots := r.(*mcp.ListRootsResult); roots {
				r = &mcp.ListRootsResult{Roots: rootsOf(c.server.Roots)}
			}
			responses[id] = r
		}
	}
	return responses, a.state, true
}

// withInputResponses returns params carrying the answers of ctx
// (WithInputResponses), a copy; params itself when there are none.
func (c *Client) withInputResponses(ctx context.Context, params *mcp.CallToolParams) *mcp.CallToolParams {
	responses, state, ok := c.inputResponses(ctx)
	if !ok {
		return params
	}
	p := *params
	p.InputResponses, p.RequestState = responses, state
	return &p
}
