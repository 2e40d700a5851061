package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// This file answers a tools/call for a name the view does not list right
// now. Such a call still reaches Switchboard, so it is recorded in the
// history and fires its events (tool.failed) like any other, with the
// typed error the CLI would give:
//
//   - a tool of a server that is not available now (connecting,
//     reconnecting, disabled) — listed or not yet discovered, as with a
//     server slow to start — goes to the engine, which says why
//     (connection_error: "not connected yet", "disabled", ...) or, should
//     the server have come up meanwhile, runs it;
//   - a name whose server is in the view but that has no such tool goes to
//     the engine too, which answers not_found with the closest names;
//   - a tool the view does not show (its include/exclude patterns, its
//     servers, a client's narrowing) is refused here as authorization;
//   - a name no server of the view has, or one the view renamed, is
//     refused here as not_found.
//
// Refusals and not_found are JSON-RPC errors (invalid params), as the MCP
// specification has it for an unknown tool, with the structured error as
// their data; the other failures are tool results with isError set, as
// for any call.

// unlistedMiddleware routes a tools/call for a name the view does not list
// (see above) instead of the SDK's plain "unknown tool".
func (vs *viewServer) unlistedMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "prompts/get" {
			if preq, _ := req.(*mcp.GetPromptRequest); preq != nil && preq.Params != nil {
				if err := vs.unavailablePrompt(preq.Params.Name); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
		if method == "resources/read" {
			if rreq, _ := req.(*mcp.ReadResourceRequest); rreq != nil && rreq.Params != nil {
				if err := vs.unavailableResource(rreq.Params.URI); err != nil {
					return nil, err
				}
				if res, handled, err := vs.readSole(ctx, rreq); handled {
					if err != nil {
						return nil, err
					}
					return res, nil
				}
			}
			return next(ctx, method, req)
		}
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		creq, _ := req.(*mcp.CallToolRequest)
		if creq == nil || creq.Params == nil {
			return next(ctx, method, req)
		}
		vs.mu.Lock()
		_, listed := vs.tools[creq.Params.Name]
		vs.mu.Unlock()
		if listed {
			return next(ctx, method, req)
		}
		server, tool, err := vs.resolveUnlisted(creq.Params.Name)
		if err != nil {
			user, session := vs.identity(creq.Extra, creq.Params.Meta, creq.Session)
			_ = vs.g.eng.Refuse(ctx, vs.request(server, tool, creq.Params.Arguments, creq.Params.Meta, user, session), err)
			return nil, protocolError(err)
		}
		res, err := vs.handleCall(ctx, creq, toolEntry{server: server, name: tool})
		if rpc := rpcAnswer(err); rpc != nil {
			return nil, rpc // as the server answered (an unknown tool, on a view that is the server)
		}
		switch {
		case fault.KindOf(err) == fault.NotFound:
			return nil, protocolError(err)
		case err != nil:
			return errorResult(err), nil
		}
		return res.CallToolResult, nil
	}
}

// resolveUnlisted says where a call to name, which the view does not list
// now, goes: to the engine as server's tool (nil error), or nowhere, with
// why (server and tool are then what the history records).
func (vs *viewServer) resolveUnlisted(name string) (server, tool string, err error) {
	if name == "" {
		return "", "", fault.New(fault.Validation, "tools/call needs params.name: the name of a tool from tools/list").
			WithDetail("field", "name")
	}
	spec := vs.spec()
	view := spec.view
	cfg := vs.g.config()
	inConfiguredView := func(server string) bool { return len(view.Servers) == 0 || slices.Contains(view.Servers, server) }

	// A tool the catalog knows, that this view would call name.
	for _, t := range vs.g.cat.Tools() {
		if t.Def == nil || (!spec.prefixed() && !inConfiguredView(t.Server)) {
			continue
		}
		base := view.ToolBase(t.Exposed, t.Def.Name)
		shown, ok := spec.toolName(t)
		ok = ok && spec.hasServer(t.Server)
		switch {
		case view.ToolName(base) == name && ok:
			return t.Server, t.Def.Name, nil // its server is not available now: the engine says why
		case view.ToolName(base) == name:
			return t.Server, t.Def.Name, vs.notInView(name)
		case base == name && ok && shown != name:
			return t.Server, t.Def.Name, fault.New(fault.NotFound, "view %q has no tool %q: it calls that tool %q", view.Name, name, shown).
				WithDetail("tool", name).WithSuggestions(shown)
		}
	}

	// A tool the catalog does not know (yet): the server its name is for.
	if spec.prefixed() {
		for _, s := range cfg.Servers {
			if prefix := s.Name + "__"; strings.HasPrefix(name, prefix) && len(prefix) > len(server) {
				server, tool = s.Name, name[len(prefix):]
			}
		}
	} else if len(view.Servers) == 1 {
		server, tool = view.Servers[0], name
	}
	if server == "" || tool == "" {
		return "", name, vs.noSuchTool(name)
	}
	base := name
	if !spec.prefixed() {
		base = tool
	}
	if !spec.hasServer(server) || !view.Shows(server, base) || (spec.tools != nil && !matchAny(spec.tools, base)) {
		return server, tool, vs.notInView(name)
	}
	return server, tool, nil
}

// unavailablePrompt returns the error for prompts/get of a name the view
// does not list because its server is not available now (starting,
// reconnecting after a crash, disabled): the -32603 a listed prompt gets
// when its server cannot be reached, saying why, rather than the SDK's
// "unknown prompt", which would tell the client the prompt does not exist.
// It returns nil for every other name.
func (vs *viewServer) unavailablePrompt(name string) error {
	if name == "" {
		return nil
	}
	vs.mu.Lock()
	_, listed := vs.prompts[name]
	vs.mu.Unlock()
	if listed {
		return nil
	}
	spec := vs.spec()
	server := ""
	for _, p := range vs.g.cat.Prompts() {
		if p.Def != nil && spec.hasServer(p.Server) && spec.promptName(p) == name {
			server = p.Server
			break
		}
	}
	// A prompt not discovered (yet): the server its name is for.
	if server == "" && spec.prefixed() {
		for _, s := range vs.g.config().Servers {
			if prefix := s.Name + "__"; strings.HasPrefix(name, prefix) && len(s.Name) > len(server) && spec.hasServer(s.Name) {
				server = s.Name
			}
		}
	} else if server == "" && len(spec.view.Servers) == 1 {
		server = spec.view.Servers[0]
	}
	return vs.serverUnavailable(server)
}

// serverUnavailable returns the error of an upstream that cannot be
// reached, saying why, when server is not available now; nil when it is,
// or when server is "" (no server the request could be for).
func (vs *viewServer) serverUnavailable(server string) error {
	if server == "" {
		return nil
	}
	if _, err := vs.g.ups.Client(server); err != nil {
		return upstreamError(server, err)
	}
	return nil
}

// notInView is the error for a tool the view (or the client's narrowing of
// it) does not show.
func (vs *viewServer) notInView(name string) error {
	spec := vs.spec()
	fe := fault.New(fault.Authorization, "tool %q is not part of view %q", name, spec.view.Name).WithDetail("tool", name)
	if spec.servers != nil || spec.tools != nil {
		fe.Message += " as this session narrowed it (?servers= / ?tools=)"
		return fe.WithSuggestions("call one of the tools tools/list shows, or connect without the narrowing")
	}
	return fe.WithSuggestions("call one of the tools tools/list shows; which tools a view shows is set under gateway.views in the configuration")
}

// noSuchTool is the error for a name no server of the view has.
func (vs *viewServer) noSuchTool(name string) error {
	vs.mu.Lock()
	names := make([]string, 0, len(vs.tools))
	for n := range vs.tools {
		names = append(names, n)
	}
	vs.mu.Unlock()
	fe := fault.New(fault.NotFound, "view %q has no tool named %q", vs.spec().view.Name, name).WithDetail("tool", name)
	if s := suggest.Closest(name, names, 3); len(s) > 0 {
		fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
		return fe.WithSuggestions(s...)
	}
	if vs.spec().prefixed() {
		return fe.WithSuggestions("tool names here are SERVER__TOOL; tools/list shows them")
	}
	return fe.WithSuggestions("tools/list shows the tools of this view")
}

// protocolError makes a refused call a JSON-RPC error (invalid params,
// which the MCP specification uses for an unknown tool) whose message is
// the error's and whose data is the structured error.
func protocolError(err error) error {
	fe := fault.As(err)
	data, jerr := json.Marshal(fe)
	if jerr != nil {
		data = nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fe.Message, Data: data}
}
