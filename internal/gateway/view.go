package gateway

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/suggest"
)

// viewSpec is what one view server shows: a configured view, optionally
// narrowed by the client (never widened), and for transports whose
// requests carry no credentials of their own (SSE, stdio) the identity
// fixed when the session began.
type viewSpec struct {
	view config.View
	// servers narrows the view to these servers (nil: no narrowing).
	servers []string
	// tools narrows the view to tools matching one of these globs.
	tools []string
	// user is the identity of every session of this server ("" when each
	// request carries its own).
	user string
	// local marks a server for a caller trusted as the local user even
	// when tokens are configured (serve --stdio): without a user of its
	// own it acts as gateway.default_user.
	local bool
}

// key identifies the view server for spec.
func (s viewSpec) key() string {
	local := ""
	if s.local {
		local = "local"
	}
	return s.view.Name + "\x00" + strings.Join(s.servers, ",") + "\x00" + strings.Join(s.tools, ",") + "\x00" + s.user + "\x00" + local
}

// hasServer reports whether server is part of the view.
func (s viewSpec) hasServer(server string) bool {
	if len(s.view.Servers) > 0 && !slices.Contains(s.view.Servers, server) {
		return false
	}
	return s.servers == nil || slices.Contains(s.servers, server)
}

// prefixed reports whether names carry their server's name.
func (s viewSpec) prefixed() bool { return s.view.Prefix != config.PrefixNever }

// toolName returns the name a tool has in the view, and whether the view
// shows it at all (the view's servers are checked by hasServer).
func (s viewSpec) toolName(t catalog.Tool) (string, bool) {
	base := s.view.ToolBase(t.Exposed, t.Def.Name)
	if !s.view.Shows(t.Server, base) {
		return "", false
	}
	if s.tools != nil && !matchAny(s.tools, base) {
		return "", false
	}
	return s.view.ToolName(base), true
}

// description returns the tool's description in the view.
func (s viewSpec) description(t catalog.Tool) string {
	return s.view.Description(s.view.ToolBase(t.Exposed, t.Def.Name), t.Def.Description)
}

// promptName returns the name a prompt has in the view.
func (s viewSpec) promptName(p catalog.Prompt) string {
	if s.prefixed() {
		return p.Exposed
	}
	return p.Def.Name
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// queryParams are the query parameters an endpoint reads: the two
// narrowings, and the legacy SSE transport's session id.
var queryParams = []string{"servers", "tools", "sessionid"}

// narrowing reads a client's narrowing from the query (?servers=a,b and
// ?tools=glob,glob) and checks it against the view: a narrowing may only
// name servers of the view and never widens it.
func narrowing(view config.View, cfg *config.Config, q url.Values) (servers, tools []string, err error) {
	for k := range q {
		if !slices.Contains(queryParams, k) {
			fe := fault.New(fault.Validation, "unknown query parameter %q", k)
			if s := suggest.Closest(k, queryParams[:2], 1); len(s) > 0 {
				fe.Message += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return nil, nil, fe.WithSuggestions("narrow a view with ?servers=a,b and ?tools=glob,glob; nothing else is read from the query")
		}
	}
	if v := q.Get("servers"); v != "" {
		servers = []string{}
		for _, name := range splitList(v) {
			if !slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Name == name }) {
				return nil, nil, fault.New(fault.Validation, "the servers query parameter names %q, which is not a configured server", name).
					WithSuggestions("use the names `switchboard servers` lists, comma-separated")
			}
			if len(view.Servers) > 0 && !slices.Contains(view.Servers, name) {
				return nil, nil, fault.New(fault.Authorization, "server %q is not part of view %q; a query can narrow a view, never widen it", name, view.Name)
			}
			servers = append(servers, name)
		}
		slices.Sort(servers)
		servers = slices.Compact(servers)
	}
	if v := q.Get("tools"); v != "" {
		for _, g := range splitList(v) {
			if _, err := path.Match(g, ""); err != nil {
				return nil, nil, fault.New(fault.Validation, "the tools query parameter has a malformed glob %q", g).
					WithSuggestions("use * and ? wildcards, e.g. tools=github__*")
			}
			tools = append(tools, g)
		}
		slices.Sort(tools)
		tools = slices.Compact(tools)
	}
	return servers, tools, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// exposedURI is the URI under which a resource that more than one server
// of a view lists is exposed for every server but the first, so that a
// read reaches the server that listed it.
func exposedURI(server, uri string) string {
	return fmt.Sprintf("switchboard://%s/%s", url.PathEscape(server), url.PathEscape(uri))
}
