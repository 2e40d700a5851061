package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's request to its client (sampling, elicitation, roots) may
// carry a progressToken in its _meta; the client may then report progress
// on it with notifications/progress while it works on the answer, which
// the server hears on its session. The gateway forwards such a request to
// a client of its own: the ClientRequests handler that does finds in its
// context (ProgressToAsker) how to pass that client's progress back to
// the upstream session that asked.

// askerKey is the context key of the upstream session whose request a
// ClientRequests handler answers.
type askerKey struct{}

// withAsker returns ctx for answering a request of session cs.
func withAsker(ctx context.Context, cs *mcp.ClientSession) context.Context {
	if cs == nil {
		return ctx
	}
	return context.WithValue(ctx, askerKey{}, cs)
}

// askerMiddleware puts the session a request came on in the context of
// its handler, for ProgressToAsker.
func askerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if cs, ok := req.GetSession().(*mcp.ClientSession); ok && cs != nil {
			ctx = withAsker(ctx, cs)
		}
		return next(ctx, method, req)
	}
}

// ProgressToAsker returns the function that sends notifications/progress
// to the upstream session whose request a ClientRequests handler was
// given ctx for: progress the client reports on that request, under the
// token the request carried, reaches the server as the client sent it.
func ProgressToAsker(ctx context.Context) (func(context.Context, *mcp.ProgressNotificationParams) error, bool) {
	cs, ok := ctx.Value(askerKey{}).(*mcp.ClientSession)
	if !ok {
		return nil, false
	}
	return cs.NotifyProgress, true
}
