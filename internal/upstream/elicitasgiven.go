package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitAsGivenMiddleware answers a server's elicitation/create with
// r.Elicit's answer as it is, in place of the SDK client's method handler
// (Client.elicit), which checks an accepted form's content against the
// requested schema and fills in the schema's defaults for the fields the
// answer left out. An owned per_client session's answers are its client's
// (ElicitAsGiven): its server gets the action, content and _meta as that
// client gave them, as it would directly; the checks are the client's to
// make, and the server's. Params the SDK could not decode never get here
// (it answers them itself).
func (r ClientRequests) elicitAsGivenMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "elicitation/create" || r.Elicit == nil {
				return next(ctx, method, req)
			}
			p, _ := req.GetParams().(*mcp.ElicitParams)
			if p == nil {
				p = &mcp.ElicitParams{}
			}
			return r.Elicit(ctx, p)
		}
	}
}
