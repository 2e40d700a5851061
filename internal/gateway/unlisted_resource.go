package gateway

import (
	"net/url"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// unavailableResource returns the error for resources/read of a URI the
// view does not list because its server is not available now (starting,
// reconnecting after a crash, disabled): the -32603 a listed resource gets
// when its server cannot be reached, saying why, rather than the SDK's
// "Resource not found", which would tell the client the resource does not
// exist. The server is the one whose resource or template the catalog
// knows under that URI, the one a switchboard://SERVER/… URI names, or the
// view's only server. It returns nil for every other URI.
func (vs *viewServer) unavailableResource(uri string) error {
	if uri == "" {
		return nil
	}
	if _, listed := vs.routeURI(uri); listed {
		return nil
	}
	spec := vs.spec()
	server := ""
	if rest, ok := strings.CutPrefix(uri, "switchboard://"); ok {
		name, _, _ := strings.Cut(rest, "/")
		if n, err := url.PathUnescape(name); err == nil && spec.hasServer(n) {
			server = n
		}
	}
	if server == "" {
		order := serverOrder(vs.g.config())
		for _, r := range vs.g.cat.Resources() {
			if r.Def != nil && spec.hasServer(r.Server) && r.Def.URI == uri && (server == "" || order[r.Server] < order[server]) {
				server = r.Server
			}
		}
	}
	if server == "" {
		for _, rt := range vs.g.cat.ResourceTemplates() {
			if rt.Def == nil || !spec.hasServer(rt.Server) {
				continue
			}
			if t, err := uritemplate.New(rt.Def.URITemplate); err == nil && t.Regexp().MatchString(uri) {
				server = rt.Server
				break
			}
		}
	}
	if server == "" && len(spec.view.Servers) == 1 {
		server = spec.view.Servers[0]
	}
	return vs.serverUnavailable(server)
}
