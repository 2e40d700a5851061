package upstream

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An owned per_client session's elicitation answers are its client's
// (ClientRequests.ElicitAsGiven): the server gets the action, content and
// _meta as that client gave them, as it would directly, and the client is
// asked what the server asked. The SDK's client would not leave them
// alone: Client.elicit checks an accepted form's content against the
// requested schema and fills in the schema's defaults for the fields the
// answer left out, and its types decode a requested schema into a map,
// which loses the order of the form's fields. So:
//
//   - a receiving middleware answers elicitation/create from
//     ClientRequests.Elicit in place of the SDK's method handler; the
//     checks are the client's to make, and the server's;
//   - the session's connection keeps each such request's requestedSchema
//     as the server wrote it, and the middleware hands it on as a
//     json.RawMessage (the fields in the server's order), found by a key
//     it puts in the request's _meta (taken out again before anyone sees
//     it). The upstream side's own call path (fastcall.go) has the raw
//     params at hand. A streamable-HTTP session's connection is the
//     SDK's own, unwrapped (the SDK reaches it through a method a wrapper
//     would hide): what such a server asks through the SDK's client (outside
//     a call, or with the lean calls off) has its schema's fields in name
//     order.

// metaKeySchema is the _meta key under which a session's connection
// names the requested schema it kept (keptSchemas).
const metaKeySchema = "io.switchboard/kept-schema"

// maxKeptSchemas bounds the schemas a connection keeps for requests the
// SDK never handed on (it refused their params).
const maxKeptSchemas = 64

// keptSchemas are a session's elicitation/create requestedSchemas, as the
// server wrote them, by the key their request's _meta carries.
type keptSchemas struct {
	mu   sync.Mutex
	next uint64
	m    map[string]json.RawMessage
}

// keep records schema and returns its key.
func (k *keptSchemas) keep(schema json.RawMessage) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKeptSchemas {
		k.m = map[string]json.RawMessage{}
	}
	k.next++
	key := strconv.FormatUint(k.next, 10)
	k.m[key] = schema
	return key
}

// take returns the schema kept under key, and forgets it.
func (k *keptSchemas) take(key string) (json.RawMessage, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.m[key]
	delete(k.m, key)
	return s, ok
}

// elicitAsGivenMiddleware answers a server's elicitation/create with
// r.Elicit's answer as it is, with the requested schema as kept (see the
// file comment). Params the SDK could not decode never get here (it
// answers them itself).
func (r ClientRequests) elicitAsGivenMiddleware(kept *keptSchemas) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "elicitation/create" || r.Elicit == nil {
				return next(ctx, method, req)
			}
			var p mcp.ElicitParams
			if got, _ := req.GetParams().(*mcp.ElicitParams); got != nil {
				p = *got
			}
			if key, ok := p.Meta[metaKeySchema].(string); ok {
				meta := make(mcp.Meta, len(p.Meta))
				for k, v := range p.Meta {
					if k != metaKeySchema {
						meta[k] = v
					}
				}
				if p.Meta = meta; len(meta) == 0 {
					p.Meta = nil
				}
				if s, ok := kept.take(key); ok {
					p.RequestedSchema = s
				}
			}
			return r.Elicit(ctx, &p)
		}
	}
}

// keepingSchemas wraps t so that its connection keeps the requested
// schema of each elicitation/create it reads in kept.
func keepingSchemas(t mcp.Transport, kept *keptSchemas) mcp.Transport {
	return &schemaTransport{Transport: t, kept: kept}
}

type schemaTransport struct {
	mcp.Transport
	kept *keptSchemas
}

func (t *schemaTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &schemaConn{Connection: conn, kept: t.kept}, nil
}

// schemaConn is a session's connection that keeps requested schemas.
type schemaConn struct {
	mcp.Connection
	kept *keptSchemas
}

// Read returns the next message, an elicitation/create with its schema
// kept and named in its _meta; anything it cannot parse as it is.
func (c *schemaConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || req.Method != "elicitation/create" || !req.IsCall() {
		return msg, err
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil || len(params["requestedSchema"]) == 0 {
		return msg, nil
	}
	meta := map[string]json.RawMessage{}
	if m, ok := params["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return msg, nil // the SDK says what is wrong
	}
	key := c.kept.keep(params["requestedSchema"])
	meta[metaKeySchema], _ = json.Marshal(key)
	params["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(params)
	if err != nil {
		c.kept.take(key)
		return msg, nil
	}
	cp := *req
	cp.Params = out
	return &cp, nil
}
