package tokenauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// viewAuth returns an authenticator whose views need scopes and groups:
// every user may use the default view, engineers (Keycloak-style realm
// roles) the eng view, which also needs the eng:write scope.
func viewAuth(t testing.TB, as *authServer, clk *testClock) *tokenauth.Authenticator {
	return jwtAuth(t, as, clk, func(o *tokenauth.Options) {
		o.GroupsClaim = "realm_access.roles"
		o.Views = []string{"default"}
		o.GroupViews = map[string][]string{"engineers": {"eng"}, "admins": {"*"}}
		o.ViewScopes = map[string][]string{"eng": {"eng:write"}}
	})
}

// TestNoTokenChallenge checks the 401 a client without a token gets: the
// challenge names the endpoint's metadata and the scopes its view needs,
// with no error code (RFC 6750 §3.1), and the body says what to do.
func TestNoTokenChallenge(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	a := viewAuth(t, as, clk)
	tests := []struct{ path, want string }{
		{"/mcp", `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`},
		{"/mcp/", `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`},
		{"/mcp/eng", `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp/eng", scope="mcp:tools eng:write"`},
		{"/sse/eng", `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/sse/eng", scope="mcp:tools eng:write"`},
		{"/metrics", `Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource", scope="mcp:tools"`},
	}
	for _, tt := range tests {
		for _, header := range []string{"", "Basic dXNlcjpwYXNz", "Bearer", "Bearer  "} {
			req := httptest.NewRequest(http.MethodPost, gatewayURL+tt.path, nil)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			rec := httptest.NewRecorder()
			a.Middleware(echoIdentity()).ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("%s with Authorization %q: status %d, want 401", tt.path, header, rec.Code)
				continue
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.want {
				t.Errorf("%s with Authorization %q: WWW-Authenticate\n got %s\nwant %s", tt.path, header, got, tt.want)
			}
		}
	}
	if n := as.jwksHits.Load() + as.metaHits.Load(); n != 0 {
		t.Errorf("requests without a token reached the authorization server %d times", n)
	}
	// The challenge is what the MCP SDK's own client parses.
	rec := serve(t, a, "/mcp/eng", "")
	cs, err := oauthex.ParseWWWAuthenticate(rec.Header().Values("WWW-Authenticate"))
	if err != nil || len(cs) != 1 {
		t.Fatalf("ParseWWWAuthenticate: %v, %d challenges", err, len(cs))
	}
	want := map[string]string{"resource_metadata": gatewayURL + "/.well-known/oauth-protected-resource/mcp/eng", "scope": "mcp:tools eng:write"}
	if diff := cmp.Diff(want, cs[0].Params); cs[0].Scheme != "bearer" || diff != "" {
		t.Errorf("parsed challenge %s (-want +got):\n%s", cs[0].Scheme, diff)
	}
	var body struct {
		Type        string   `json:"error_type"`
		Suggestions []string `json:"suggestions"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Type != "authentication_error" || len(body.Suggestions) == 0 {
		t.Errorf("body %s: want an authentication_error with a suggestion", rec.Body)
	}
}

// TestViewsAndScopes checks the grants: groups decide the views (403 with
// no challenge, since no scope would help), scopes decide the rest (403
// insufficient_scope naming the scopes to ask for, those already granted
// included).
func TestViewsAndScopes(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	a := viewAuth(t, as, clk)
	token := func(scope string, roles ...string) string {
		return rs.sign(t, claimsFor(as, clk, map[string]any{"scope": scope, "realm_access": map[string]any{"roles": roles}}))
	}
	tests := []struct {
		name      string
		path      string
		token     string
		status    int
		challenge string
	}{
		{"anyone on the default view", "/mcp", token("mcp:tools"), 200, ""},
		{"engineer on eng with the scope", "/mcp/eng", token("mcp:tools eng:write", "engineers"), 200, ""},
		{"admin on any view", "/mcp/ops", token("mcp:tools", "admins"), 200, ""},
		{"non-engineer on eng", "/mcp/eng", token("mcp:tools eng:write", "sales"), 403, ""},
		{"engineer without the view's scope", "/mcp/eng", token("mcp:tools openid", "engineers"), 403,
			`Bearer error="insufficient_scope", error_description="the token lacks the scope eng:write", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp/eng", scope="mcp:tools openid eng:write"`},
		{"no scope at all", "/mcp", token(""), 403,
			`Bearer error="insufficient_scope", error_description="the token lacks the scope mcp:tools", resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, a, tt.path, tt.token)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tt.status, rec.Body)
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.status == 403 && tt.challenge == "" && !strings.Contains(rec.Body.String(), `may not use the view`) {
				t.Errorf("body %s: want it to say the view is not granted", rec.Body)
			}
		})
	}
}

// TestGroupClaims checks the shapes a groups claim takes at real identity
// providers.
func TestGroupClaims(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	tests := []struct {
		name   string
		claim  string
		value  any
		groups []string
	}{
		{"array (Okta, Entra ID)", "groups", []any{"engineers", "sales"}, []string{"engineers", "sales"}},
		{"space-separated string", "groups", "engineers sales", []string{"engineers", "sales"}},
		{"comma-separated string", "roles", "engineers,sales", []string{"engineers", "sales"}},
		{"nested (Keycloak)", "realm_access.roles", map[string]any{"roles": []any{"engineers"}}, []string{"engineers"}},
		{"namespaced (Auth0)", "https://example.com/roles", []any{"engineers"}, []string{"engineers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := jwtAuth(t, as, clk, func(o *tokenauth.Options) {
				o.GroupsClaim = tt.claim
				o.GroupViews = map[string][]string{"engineers": {"eng"}}
			})
			claimName := tt.claim
			if strings.HasPrefix(claimName, "realm_access.") {
				claimName = "realm_access"
			}
			tok := rs.sign(t, claimsFor(as, clk, map[string]any{claimName: tt.value}))
			got := identityOf(t, serve(t, a, "/mcp/eng", tok))
			if diff := cmp.Diff(tt.groups, got.Groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
			if rec := serve(t, a, "/mcp", tok); rec.Code != http.StatusForbidden {
				t.Errorf("the default view, granted to no group: status %d, want 403", rec.Code)
			}
		})
	}
}

// TestUserClaim checks a configured user claim, numeric ids included.
func TestUserClaim(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.UserClaim = "profile.email" })
	tok := rs.sign(t, claimsFor(as, clk, map[string]any{"profile": map[string]any{"email": "alice@example.com"}}))
	if got := identityOf(t, serve(t, a, "/mcp", tok)); got.User != "alice@example.com" {
		t.Errorf("user %q, want alice@example.com", got.User)
	}
	b := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.UserClaim = "uid" })
	if got := identityOf(t, serve(t, b, "/mcp", rs.sign(t, claimsFor(as, clk, map[string]any{"uid": 4200017})))); got.User != "4200017" {
		t.Errorf("numeric user id: %q, want 4200017", got.User)
	}
	rec := serve(t, b, "/mcp", rs.sign(t, claimsFor(as, clk, nil)))
	if !strings.Contains(rec.Header().Get("WWW-Authenticate"), `no 'uid' claim`) {
		t.Errorf("missing user claim: WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
	}
}

// TestMetadata fetches the protected resource metadata of each endpoint
// over HTTP with the MCP SDK's client-side check (RFC 9728 §3.3: the
// document's resource must be the URL it was derived from).
func TestMetadata(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := newAuth(t, tokenauth.Options{
		Resource:   srv.URL,
		Issuer:     as.issuer,
		Scopes:     []string{"mcp:tools"},
		ViewScopes: map[string][]string{"eng": {"eng:write"}, "ops": {"ops:read"}},
	})
	mux.Handle(tokenauth.WellKnownPath, a.MetadataHandler())
	mux.Handle(tokenauth.WellKnownPath+"/", a.MetadataHandler())

	tests := []struct {
		endpoint string
		scopes   []string
	}{
		{"", []string{"mcp:tools", "eng:write", "ops:read"}},
		{"/mcp", []string{"mcp:tools"}},
		{"/mcp/eng", []string{"mcp:tools", "eng:write"}},
		{"/sse", []string{"mcp:tools"}},
		{"/sse/ops", []string{"mcp:tools", "ops:read"}},
	}
	for _, tt := range tests {
		meta, err := oauthex.GetProtectedResourceMetadata(context.Background(), a.MetadataURL(tt.endpoint), srv.URL+tt.endpoint, srv.Client())
		if err != nil {
			t.Errorf("%q: %v", tt.endpoint, err)
			continue
		}
		want := &oauthex.ProtectedResourceMetadata{
			Resource:               srv.URL + tt.endpoint,
			AuthorizationServers:   []string{as.issuer},
			ScopesSupported:        tt.scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           tokenauth.DefaultResourceName,
		}
		if diff := cmp.Diff(want, meta); diff != "" {
			t.Errorf("%q: metadata (-want +got):\n%s", tt.endpoint, diff)
		}
	}
	for _, p := range []string{"/other", "/mcp/a/b", "/healthz"} {
		res, err := srv.Client().Get(srv.URL + tokenauth.WellKnownPath + p)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("metadata for %s: status %d, want 404", p, res.StatusCode)
		}
	}
	res, err := srv.Client().Get(a.MetadataURL("/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin %q, want * (browser-based clients read the metadata)", got)
	}
}

// TestResourcePrefix checks a gateway a proxy serves under a path prefix.
func TestResourcePrefix(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t)
	a := newAuth(t, tokenauth.Options{Resource: "https://corp.example.com/switchboard/", Issuer: as.issuer})
	if got, want := a.ResourceURL("/mcp"), "https://corp.example.com/switchboard/mcp"; got != want {
		t.Errorf("ResourceURL %q, want %q", got, want)
	}
	if got, want := a.MetadataURL("/mcp"), "https://corp.example.com/.well-known/oauth-protected-resource/switchboard/mcp"; got != want {
		t.Errorf("MetadataURL %q, want %q", got, want)
	}
	rec := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/switchboard/mcp", nil))
	var meta oauthex.ProtectedResourceMetadata
	if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil || meta.Resource != "https://corp.example.com/switchboard/mcp" {
		t.Errorf("metadata %s (%v): want resource https://corp.example.com/switchboard/mcp", rec.Body, err)
	}
}
