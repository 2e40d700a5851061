package tokenauth

import (
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// WellKnownPath is where protected resource metadata lives (RFC 9728 §3):
// this path followed by the resource's path.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// DefaultView is the view /mcp and /sse serve: the gateway's name for it.
const DefaultView = "default"

// endpointView returns the view an MCP endpoint path serves, and whether
// the path is an endpoint at all: /mcp, /sse (DefaultView), or either
// followed by one view segment.
func endpointView(p string) (view string, ok bool) {
	p = strings.TrimSuffix(p, "/")
	for _, base := range []string{"/mcp", "/sse"} {
		if p == base {
			return DefaultView, true
		}
		if rest, found := strings.CutPrefix(p, base+"/"); found && rest != "" && !strings.Contains(rest, "/") {
			return rest, true
		}
	}
	return "", false
}

// ResourceURL returns the resource identifier of an endpoint path (such as
// "/mcp/eng"): the base URL followed by the path. An empty path gives the
// base URL, the identifier of the gateway as a whole.
func (a *Authenticator) ResourceURL(endpoint string) string {
	return a.s.base.String() + strings.TrimSuffix(endpoint, "/")
}

// MetadataURL returns where the protected resource metadata of an endpoint
// path is served: /.well-known/oauth-protected-resource, then the base
// URL's path, then the endpoint's.
func (a *Authenticator) MetadataURL(endpoint string) string {
	u := *a.s.base
	u.Path = WellKnownPath + a.s.basePath + strings.TrimSuffix(endpoint, "/")
	return u.String()
}

// MetadataHandler serves the protected resource metadata (RFC 9728) of the
// gateway as a whole at WellKnownPath (plus the base URL's path) and of
// each endpoint (/mcp, /mcp/{view}, /sse, /sse/{view}) at WellKnownPath
// plus the endpoint's resource path. Mount it at WellKnownPath and
// WellKnownPath+"/". Each document names the resource, the authorization
// server and the scopes a token for it needs; other paths are 404.
func (a *Authenticator) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, WellKnownPath+a.s.basePath)
		if !ok {
			http.NotFound(w, r)
			return
		}
		var scopes []string
		switch view, isEndpoint := endpointView(rest); {
		case rest == "" || rest == "/":
			rest = ""
			scopes = a.allScopes()
		case isEndpoint:
			scopes = a.requiredScopes(view)
		default:
			http.NotFound(w, r)
			return
		}
		meta := &oauthex.ProtectedResourceMetadata{
			Resource:               a.ResourceURL(rest),
			AuthorizationServers:   []string{a.s.Issuer},
			ScopesSupported:        scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           a.s.ResourceName,
			ResourceDocumentation:  a.s.ResourceDocumentation,
		}
		auth.ProtectedResourceMetadataHandler(meta).ServeHTTP(w, r)
	})
}

// requiredScopes returns the scopes a token needs for a view: Scopes, then
// the view's own ("" for the gateway as a whole: Scopes only). The slice
// is shared: callers do not change it.
func (a *Authenticator) requiredScopes(view string) []string {
	if need, ok := a.scopes[view]; ok {
		return need
	}
	return a.s.Scopes
}

// allScopes returns every scope any endpoint needs, for the gateway-wide
// metadata.
func (a *Authenticator) allScopes() []string {
	out := slices.Clone(a.s.Scopes)
	views := make([]string, 0, len(a.s.ViewScopes))
	for v := range a.s.ViewScopes {
		views = append(views, v)
	}
	slices.Sort(views)
	for _, v := range views {
		for _, sc := range a.s.ViewScopes[v] {
			if !slices.Contains(out, sc) {
				out = append(out, sc)
			}
		}
	}
	return out
}

// challenge builds a Bearer WWW-Authenticate value (RFC 6750 §3, MCP
// authorization): error and its description when given, the resource
// metadata URL, and the scopes.
func challenge(errCode, description, metadataURL string, scopes []string) string {
	var b strings.Builder
	b.WriteString("Bearer ")
	sep := ""
	param := func(name, value string) {
		b.WriteString(sep)
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(quotable(value))
		b.WriteString(`"`)
		sep = ", "
	}
	if errCode != "" {
		param("error", errCode)
		if description != "" {
			param("error_description", description)
		}
	}
	param("resource_metadata", metadataURL)
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	return b.String()
}

// quotable keeps the characters RFC 6750 allows in error_description (and
// that a quoted-string holds without escapes): printable ASCII other than
// '"' and '\'.
func quotable(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			b.WriteByte('\'')
		case c < 0x20 || c > 0x7e || c == '\\':
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
