package gateway

import (
	"context"
	"encoding/json"
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
		info := vs.soleServerInfo()
		if info == nil {
			return res, err
		}
		return withServerInfo(res, info), nil
	}
}

// soleServerInfo is the serverInfo of a prefix: never view's one server,
// as it gave it when it connected; nil on other views, or while the
// server is not connected.
func (vs *viewServer) soleServerInfo() *mcp.Implementation {
	server := vs.soleServer()
	if server == "" {
		return nil
	}
	c, err := vs.g.ups.Client(server)
	if err != nil || c == nil || c.InitializeResult() == nil {
		return nil
	}
	return c.InitializeResult().ServerInfo
}

// withTaskServerInfo returns result, the result of a task request the
// gateway answers itself beside the SDK (tasks.go) whose params are
// params, with the view's serverInfo in its _meta when the request is of
// protocol 2026-07-28 and the result names none, as every other result
// of such a request gets it: a prefix: never view's one server's
// (serverInfoMiddleware), else — and until that server is connected —
// the gateway's own, as the SDK stamps it.
func (vs *viewServer) withTaskServerInfo(params, result json.RawMessage) json.RawMessage {
	if !perRequestParams(params) {
		return result
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil || obj == nil {
		return result
	}
	var meta map[string]json.RawMessage
	if raw, ok := obj["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return result
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; ok {
		return result
	}
	info := vs.soleServerInfo()
	if info == nil {
		info = vs.info
	}
	b, err := marshalNoEscape(info)
	if err != nil {
		return result
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[mcp.MetaKeyServerInfo] = b
	if obj["_meta"], err = marshalNoEscape(meta); err != nil {
		return result
	}
	out, err := marshalNoEscape(obj)
	if err != nil {
		return result
	}
	return out
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

// perRequestParams reports whether a request whose params are params is
// of protocol 2026-07-28 or later: its _meta names the version.
func perRequestParams(params json.RawMessage) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return ok && v >= protocolPerRequest
}
