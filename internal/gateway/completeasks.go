package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of protocol 2026-07-28 takes no requests from a server: a
// server asks it (elicitation, sampling, roots) only in the input-required
// result of a tools/call, prompts/get or resources/read (multi round-trip
// requests, SEP-2322; the go-sdk's server refuses to send such a client a
// request). A completion/complete has no input-required result, so what a
// server asks during one cannot reach such a client in any form. The
// gateway's upstream session may speak an older version with the server,
// which then asks with requests; directly, the client would have
// negotiated that older version and been asked (a prefix: never view of
// one server has its client do so: protocol.go), but a client of another
// view speaks 2026-07-28 with the gateway. Such a request gets a JSON-RPC
// error that says why, and the server answers the completion as it
// decides (docs/decisions.md, "What a server asks during a completion of
// a 2026-07-28 client").

// completingKey marks the context of a client's completion/complete
// while it waits upstream (completing).
type completingKey struct{}

// completing returns ctx for forwarding a client's completion/complete
// upstream: what the server asks during it (route) can be told from what
// it asks during a prompts/get or resources/read.
func completing(ctx context.Context) context.Context {
	return context.WithValue(ctx, completingKey{}, true)
}

// askedInCompletion returns the error server's request method
// (sampling/createMessage, elicitation/create, roots/list) gets when
// route sent it to client session ss with ctx during that client's
// completion/complete and the client speaks protocol 2026-07-28 or later,
// which cannot be asked then; nil otherwise. The code is -32603, as for
// any request of a server's that its client is not asked (requestError),
// with the reason in the message. (-32601 would say it better, but the
// go-sdk's connection writes any -32601 a handler returns as "method not
// found", without the reason; and a -32602 the server passes on fails
// the completion of a 2026-07-28 client over streamable HTTP whose
// stream has begun, which the go-sdk then answers without SSE framing.)
func askedInCompletion(ctx context.Context, ss *mcp.ServerSession, server, method string) error {
	if ctx == nil || ctx.Value(completingKey{}) == nil || !asksInResults(ss) {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
		"server %s sent %s during a completion/complete of a client on protocol %s, which cannot be asked then: "+
			"on that version a server asks its client only in the input-required result of a tools/call, prompts/get or resources/read, "+
			"and a completion has none; ask during one of those, or connect the client to a prefix: never view of this one server, "+
			"where it negotiates the server's own version and is asked with requests",
		server, method, ss.InitializeParams().ProtocolVersion)}
}
