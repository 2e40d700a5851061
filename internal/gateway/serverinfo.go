package gateway

import (
	"context"
	"maps"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On protocol 2026-07-28 a server names itself in every result's _meta
// (io.modelcontextprotocol/serverInfo); the SDK stamps its own server's
// — the gateway's — on each result of such a request that has none
// (ServerSession.handle's annotateServerInfo, after the receiving
// middleware has run). A prefix: never view of one server is that server:
// it answers initialize and server/discover with the server's serverInfo
// (asServerMiddleware), and its other results must name the server too.

// serverInfoMiddleware stamps the serverInfo of a prefix: never view's
// one server on the results of protocol 2026-07-28 requests that carry
// none, before the SDK would stamp the gateway's. Until the server is
// connected the SDK's stands.
func (vs *viewServer) serverInfoMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !perRequestProtocol(req) {
			return res, err
		}
		server := vs.soleServer()
		if server == "" {
			return res, err
		}
		c, cerr := vs.g.ups.Client(server)
		if cerr != nil || c == nil || c.InitializeResult() == nil || c.InitializeResult().ServerInfo == nil {
			return res, err
		}
		return withServerInfo(res, c.InitializeResult().ServerInfo), nil
	}
}

// perRequestProtocol reports whether req is a request of protocol
// 2026-07-28, as the SDK tells (its _meta names the version).
func perRequestProtocol(req mcp.Request) bool {
	p := req.GetParams()
	if p == nil {
		return false
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return false
	}
	v, ok := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
	return ok && v >= protocolPerRequest
}

// withServerInfo returns res with info as its _meta's serverInfo, unless
// it has one: a copy, for a result may be shared (a cached list). A
// result with no fields (the SDK's empty result) has no _meta, and is
// returned as it is.
func withServerInfo(res mcp.Result, info *mcp.Implementation) mcp.Result {
	v := reflect.ValueOf(res)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().NumField() == 0 {
		return res
	}
	if _, ok := res.GetMeta()[mcp.MetaKeyServerInfo]; ok {
		return res
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	out, ok := cp.Interface().(mcp.Result)
	if !ok {
		return res
	}
	meta := maps.Clone(res.GetMeta())
	if meta == nil {
		meta = map[string]any{}
	}
	ic := *info
	meta[mcp.MetaKeyServerInfo] = &ic
	out.SetMeta(meta)
	return out
}
