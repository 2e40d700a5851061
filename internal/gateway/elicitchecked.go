package gateway

//lint:file-ignore SA1019 elicitation is deprecated only from protocol 2026-07-28; clients and servers use it today, and the gateway forwards it.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The shared and per_user sessions ask their client an upstream's
// elicitation with ServerSession.Elicit, which checks an accepted form's
// content against the requested schema (and fills in its defaults) once
// the client has answered. It says so with a plain error, which the
// upstream would get as an error with code 0; a client that checks the
// content itself (the go-sdk's) answers -32602, invalid params. So the
// gateway notes that the client answered (answeredSending, the view
// server's outermost sending middleware, which both call paths go
// through): an error of Elicit's after that is its check of the answer,
// not the connection's — told apart without reading the SDK's words.

// elicitAnswer notes whether the client answered an elicitation.
type elicitAnswer struct{ answered bool }

type elicitAnswerKey struct{}

// answeredSending is the view server's sending middleware that notes,
// for elicitChecked, that the client answered its elicitation/create.
func answeredSending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if a, ok := ctx.Value(elicitAnswerKey{}).(*elicitAnswer); ok && err == nil && method == "elicitation/create" {
			a.answered = true
		}
		return res, err
	}
}

// elicitChecked asks ss's client p with the SDK's checks of its answer
// (ServerSession.Elicit): an answer they refuse is a -32602 error with
// the SDK's words, as a client that checks it would answer.
func elicitChecked(ctx context.Context, ss *mcp.ServerSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a := &elicitAnswer{}
	res, err := ss.Elicit(context.WithValue(ctx, elicitAnswerKey{}, a), p)
	if err != nil && a.answered {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return res, err
}

// noElicitClient is the error an upstream's elicitation with no client
// to answer it gets (noClientFor says why): -32602, as a client that
// declared no elicitation mode answers (the go-sdk's does).
func noElicitClient(ctx context.Context, server string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: noClientFor(ctx, server, "elicitation").Error()}
}

// schemaAsSent returns p, an upstream's elicitation the gateway asks its
// client with ctx (the upstream's), with its requested schema as the
// server wrote it, where the upstream session kept it
// (upstream.RequestedSchemaAsSent): the SDK decodes the schema into a
// map, which would reach the client with the form's fields sorted by
// name. So a client of a shared or per_user session (asked with
// ServerSession.Elicit, or in an input-required result) gets the fields
// in the server's order, as directly; the SDK's checks of the answer read
// the same schema.
func schemaAsSent(ctx context.Context, p *mcp.ElicitParams) *mcp.ElicitParams {
	schema := upstream.RequestedSchemaAsSent(ctx)
	if schema == nil || p == nil {
		return p
	}
	cp := *p
	cp.RequestedSchema = schema
	return &cp
}
