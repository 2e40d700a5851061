package upstream

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An owned per_client session's elicitation is its client's
// (ClientRequests.ElicitAsGiven): the client is asked what the server
// asked, as the server wrote it, and the server gets the client's answer
// as the client gave it, as it would directly. The SDK's client would
// not leave them alone: Client.elicit checks an accepted form's content
// against the requested schema and fills in the schema's defaults for
// the fields the answer left out, and its types decode the request's
// params (a requested schema into a map, which loses the order of the
// form's fields; numbers through float64, which loses 9007199254740993
// and writes 1.10 as 1.1) and encode the answer again. So:
//
//   - a receiving middleware answers elicitation/create from
//     ClientRequests.Elicit in place of the SDK's method handler; the
//     checks are the client's to make, and the server's;
//   - what was kept of the request before the SDK decoded it — its
//     params as the server wrote them, by the key its _meta names (see
//     standalone.go; taken out again before anyone sees it) — goes to
//     Elicit as a SentRequest in its context: a streamable-HTTP
//     session's HTTP layer keeps it for the streams the SDK reads, and
//     the connection of other transports for everything it reads
//     (keepingParams); the upstream side's own call path (fastcall.go)
//     has the params at hand;
//   - the answer Elicit gives as the client gave it
//     (SentRequest.AnswerAsGiven) is what the server gets, not the
//     SDK's encoding of the decoded result.

// SentRequest is a request a server sent its client, as the server wrote
// it: what a ClientRequests handler of a session that passes elicitation
// on as given (ElicitAsGiven) finds in its context, with a place for the
// client's answer as the client gave it.
type SentRequest struct {
	// Params are the request's params, byte for byte as the server sent
	// them.
	Params json.RawMessage

	answer json.RawMessage
}

// AnswerAsGiven has the server get result — the JSON of the answer the
// handler returns, as its client gave it — in place of the handler's
// result encoded again. Call it before the handler returns.
func (r *SentRequest) AnswerAsGiven(result json.RawMessage) { r.answer = result }

// sentRequestKey is the context key of a *SentRequest.
type sentRequestKey struct{}

// SentRequestFrom returns the request a ClientRequests handler was given
// with ctx as the server sent it; false where it is not known (a session
// that does not pass elicitation on as given, or a request the transport
// could not keep).
func SentRequestFrom(ctx context.Context) (*SentRequest, bool) {
	r, ok := ctx.Value(sentRequestKey{}).(*SentRequest)
	return r, ok
}

// elicitAsGiven answers the elicitation p (sent as raw, when known) with
// r.Elicit's answer: as the client gave it, where Elicit says so
// (AnswerAsGiven), as asGiven's result.
func (r ClientRequests) elicitAsGiven(ctx context.Context, p *mcp.ElicitParams, raw json.RawMessage) (*mcp.ElicitResult, json.RawMessage, error) {
	if len(raw) == 0 {
		res, err := r.Elicit(ctx, p)
		return res, nil, err
	}
	var wire struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if json.Unmarshal(raw, &wire) == nil && len(wire.RequestedSchema) > 0 {
		p.RequestedSchema = wire.RequestedSchema // the form's fields in order
	}
	sent := &SentRequest{Params: raw}
	res, err := r.Elicit(context.WithValue(ctx, sentRequestKey{}, sent), p)
	if err != nil || res == nil {
		return res, nil, err
	}
	return res, sent.answer, nil
}

// RequestedSchemaAsSent returns the requested schema of the elicitation
// a ClientRequests.Elicit handler was given with ctx, as the server wrote
// it (its properties in the server's order); nil where the session did
// not keep it (ElicitInOrder, ElicitAsGiven) or the request has none.
func RequestedSchemaAsSent(ctx context.Context) json.RawMessage {
	raw := keptParams(ctx)
	if r, ok := SentRequestFrom(ctx); ok && len(raw) == 0 {
		raw = r.Params
	}
	var wire struct {
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &wire) != nil || len(wire.RequestedSchema) == 0 || string(wire.RequestedSchema) == "null" {
		return nil
	}
	return wire.RequestedSchema
}

// resultAsGiven is a result whose JSON is the client's own answer.
type resultAsGiven struct {
	*mcp.ElicitResult
	raw json.RawMessage
}

// MarshalJSON returns the answer as the client gave it.
func (r *resultAsGiven) MarshalJSON() ([]byte, error) { return r.raw, nil }

// elicitAsGivenMiddleware answers a server's elicitation/create with
// r.Elicit's answer as it is, with the request as kept (see the file
// comment; keptMessages.middleware, which runs before it, took the mark
// out and put what was kept in the context). Params the SDK could not
// decode never get here (it answers them itself).
func (r ClientRequests) elicitAsGivenMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "elicitation/create" || r.Elicit == nil {
				return next(ctx, method, req)
			}
			var p mcp.ElicitParams
			if got, _ := req.GetParams().(*mcp.ElicitParams); got != nil {
				p = *got
			}
			res, answer, err := r.elicitAsGiven(ctx, &p, keptParams(ctx))
			if err != nil {
				return nil, requestError(err)
			}
			if answer == nil {
				return res, nil
			}
			return &resultAsGiven{ElicitResult: res, raw: answer}, nil
		}
	}
}

// keepingParams wraps t so that its connection keeps, in kept, the params
// of each elicitation/create it reads (elicit) and of each list change
// (lists, listchanges.go).
func keepingParams(t mcp.Transport, kept *keptMessages, elicit, lists bool) mcp.Transport {
	return &keepingTransport{Transport: t, kept: kept, elicit: elicit, lists: lists}
}

type keepingTransport struct {
	mcp.Transport
	kept          *keptMessages
	elicit, lists bool
}

func (t *keepingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &keepingConn{Connection: conn, t: t}, nil
}

// keepingConn is a session's connection that keeps elicitations' and
// list changes' params.
type keepingConn struct {
	mcp.Connection
	t *keepingTransport
}

// Read returns the next message, an elicitation/create or a list change
// with its params kept and named in its _meta; anything it cannot parse
// as it is.
func (c *keepingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return msg, err
	}
	var m keptMessage
	switch {
	case c.t.elicit && req.Method == "elicitation/create" && req.IsCall() && len(req.Params) > 0:
		m.params = bytes.Clone(bytes.TrimSpace(req.Params))
	case c.t.lists && isListChange(req.Method) && !req.IsCall():
		m.params, m.asSent = sentParams(req.Params), true
	default:
		return msg, nil
	}
	key := c.t.kept.keep(m)
	params, ok := markParams(req.Params, key)
	if !ok {
		c.t.kept.take(key)
		return msg, nil // the SDK says what is wrong
	}
	cp := *req
	cp.Params = params
	return &cp, nil
}
