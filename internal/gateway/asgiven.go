package gateway

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A prefix: never view of one per_client server is that server to each
// of its clients: what the client's own upstream session answers is what
// the client would read directly. The SDK's client decodes an answer into
// its typed values and the SDK's server encodes those again, which is not
// the server's answer: a TypeScript server's key order, a false it wrote
// out (a prompt argument's required, a completion's hasMore), the cache
// hints the go-sdk's types always write (ttlMs, cacheScope), fields the
// types do not know — all change on the way. So the results of the lists
// (tools, prompts, resources, resource templates, page by page), of
// prompts/get, resources/read and completion/complete reach such a client
// as the server wrote them: the upstream session keeps each answer's raw
// result beside the typed value (upstream.CaptureResult, at the
// connection or the HTTP layer), and the gateway answers with those bytes
// (asGivenResult), through the SDK's server on every transport (streamable
// HTTP, fast path on or off; serve --stdio; SSE), which writes a result's
// JSON as it is given (compacted, never HTML-escaped).
//
// The typed path stays where the gateway must change the answer, and then
// the answer is necessarily the gateway's: a list the view filters
// (include/exclude) or renames, a request whose name or URI the view
// translated, a client on protocol 2026-07-28 whose server speaks an older
// version (the SDK stamps the view's serverInfo in each result's _meta,
// which the server's own result lacks), an answer too large to keep
// (maxSniff) or one the server gave as an error (errors take their own
// path: soleError).

// asGivenResult is a result a client gets as its server wrote it; the
// SDK's server writes raw as the response's result. Middlewares that add
// to a typed result (serverInfoMiddleware) leave it unchanged: the raw
// result is the server's, with its own _meta.
type asGivenResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

// MarshalJSON returns the server's result.
func (r *asGivenResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// asGivenMethods are the requests (other than the lists, see ownPage)
// whose results reach a client of a view that is its server as given.
var asGivenMethods = map[string]bool{
	"prompts/get":         true,
	"resources/read":      true,
	"completion/complete": true,
}

// asGivenServer returns the server whose answers req's client gets as the
// server wrote them: the one server of a prefix: never view, when it is
// per_client and the client session has a lasting session of its own
// (not stateless); "" otherwise.
func (vs *viewServer) asGivenServer(req mcp.Request) (config.Server, bool) {
	server := vs.soleServer()
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if server == "" || ss == nil {
		return config.Server{}, false
	}
	for _, s := range vs.ownServers(ss) {
		if s.Name == server && s.Session == config.SessionPerClient {
			return s, true
		}
	}
	return config.Server{}, false
}

// asGivenVersion reports whether the result of req, answered by upstream
// client c, may be the server's own: unless req is of protocol
// 2026-07-28 and c's server speaks an older version, whose results lack
// the serverInfo the SDK puts in each such result's _meta.
func asGivenVersion(req mcp.Request, c *upstream.Client) bool {
	if !perRequestProtocol(req) {
		return true
	}
	ir := c.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= protocolPerRequest
}

// asGivenMiddleware answers prompts/get, resources/read and
// completion/complete of a view that is its per_client server with the
// result the client's own upstream session read, as the server wrote it,
// when the gateway forwarded the request as the client sent it (the same
// name, URI or reference) and its answer unchanged.
func (vs *viewServer) asGivenMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !asGivenMethods[method] {
			return next(ctx, method, req)
		}
		srv, ok := vs.asGivenServer(req)
		if !ok {
			return next(ctx, method, req)
		}
		cctx, capt := upstream.CaptureResult(ctx, method)
		res, err := next(cctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		raw, sent, ok := capt.Result()
		if !ok || !sameTarget(method, req, sent) {
			return res, nil
		}
		if perRequestProtocol(req) {
			ss, _ := req.GetSession().(*mcp.ServerSession)
			c, cerr := vs.g.upstreamFor(vs.owned(ctx, req.GetExtra(), requestMeta(req), ss), srv.Name)
			if cerr != nil || !asGivenVersion(req, c) {
				return res, nil
			}
		}
		return &asGivenResult{raw: raw}, nil
	}
}

// requestMeta is the _meta of req's params (nil for none).
func requestMeta(req mcp.Request) mcp.Meta {
	switch r := req.(type) {
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	case *mcp.CompleteRequest:
		if r.Params != nil {
			return r.Params.Meta
		}
	}
	return nil
}

// target is what a request names: a prompt, a resource, a completion's
// reference.
type target struct {
	Name string `json:"name"`
	URI  string `json:"uri"`
	Ref  *struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
}

// sameTarget reports whether sent, the params the upstream session sent
// for req, name what req names: the view translated nothing, and the
// server's answer is to the client's own request.
func sameTarget(method string, req mcp.Request, sent json.RawMessage) bool {
	var up target
	if json.Unmarshal(sent, &up) != nil {
		return false
	}
	switch r := req.(type) {
	case *mcp.GetPromptRequest:
		return method == "prompts/get" && r.Params != nil && up.Name == r.Params.Name
	case *mcp.ReadResourceRequest:
		return method == "resources/read" && r.Params != nil && up.URI == r.Params.URI
	case *mcp.CompleteRequest:
		if method != "completion/complete" || r.Params == nil || r.Params.Ref == nil || up.Ref == nil {
			return false
		}
		ref := r.Params.Ref
		return up.Ref.Type == ref.Type && up.Ref.Name == ref.Name && up.Ref.URI == ref.URI
	}
	return false
}

// pageAsGiven returns page pg of method as the server wrote it, for a
// client of a view that is its per_client server (o), when the view shows
// every entry of the page unchanged (shown reports so) and the request's
// protocol allows it (asGivenVersion).
func (vs *viewServer) pageAsGiven(req mcp.Request, o ownedServer, pg page, unchanged bool) (mcp.Result, bool) {
	if !unchanged || len(pg.raw) == 0 || o.key.Mode != config.SessionPerClient || vs.soleServer() != o.server {
		return nil, false
	}
	if !asGivenVersion(req, o.list.c) {
		return nil, false
	}
	return &asGivenResult{raw: pg.raw}, true
}

// rawPage returns the result the capture kept, or nil.
func rawPage(c *upstream.ResultCapture) json.RawMessage {
	if c == nil {
		return nil
	}
	raw, _, ok := c.Result()
	if !ok || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return raw
}
