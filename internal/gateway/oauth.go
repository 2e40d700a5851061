package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// This file makes the gateway an OAuth protected resource
// (gateway.oauth, docs/auth-gateway.md): it serves the protected resource
// metadata, and checks the access token of a request that no static token
// matched with the authenticator the daemon installs. A signed-in user
// reaches the rest of the gateway as a token does: as the caller's
// config.Token in the request's context (its User the identity's user), so
// that session binding, the fast path and the history treat both alike,
// and as the MCP SDK's auth.TokenInfo, which carries the identity itself.

// oauthTokenName labels the callers signed in with OAuth where a token's
// name is shown (logs, the SDK's TokenInfo).
const oauthTokenName = "oauth"

// identityKey is the request context key of the *tokenauth.Identity of a
// caller signed in with OAuth.
type identityKey struct{}

// SetAuthenticator installs the authenticator that checks OAuth access
// tokens while gateway.oauth is configured (nil removes it). The caller
// runs it (its Run) and stops the one it replaces. While gateway.oauth is
// configured and no authenticator is installed, requests that need one are
// refused with 503: the gateway fails closed.
func (g *Gateway) SetAuthenticator(a *tokenauth.Authenticator) { g.oauth.Store(a) }

// Authenticator returns the installed authenticator while gateway.oauth
// is configured, else nil: the web console signs people in at the same
// authorization server and checks their tokens with it.
func (g *Gateway) Authenticator() *tokenauth.Authenticator {
	return g.authenticator(g.config().Gateway)
}

// authenticator returns the installed authenticator, or nil when gw does
// not configure OAuth.
func (g *Gateway) authenticator(gw config.Gateway) *tokenauth.Authenticator {
	if gw.OAuth == nil {
		return nil
	}
	return g.oauth.Load()
}

// MetadataHandler serves the protected resource metadata (RFC 9728) of
// the gateway and of each MCP endpoint, under
// /.well-known/oauth-protected-resource; mount it at that path and below
// it. The documents are public: no Host, Origin or token check applies.
// Without gateway.oauth it answers 404.
func (g *Gateway) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := g.config().Gateway
		a := g.authenticator(gw)
		switch {
		case gw.OAuth == nil:
			writeError(w, http.StatusNotFound, fault.New(fault.NotFound, "this gateway does not accept OAuth access tokens, so it publishes no protected resource metadata").
				WithSuggestions("configure gateway.oauth to let clients sign in (docs/auth-gateway.md), or use a token from gateway.tokens"))
		case a == nil:
			notReady(w)
		default:
			a.MetadataHandler().ServeHTTP(w, r)
		}
	})
}

// notReady answers a request that needs the authenticator before the
// daemon installed it.
func notReady(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "10")
	writeError(w, http.StatusServiceUnavailable, fault.New(fault.Connection, "the gateway cannot check OAuth access tokens yet").
		WithSuggestions("try again shortly; if it persists, the gateway's log says why its gateway.oauth settings could not be applied"))
}

// authorize authenticates a request to an MCP endpoint of view: with a
// static token first, then with OAuth. It reports false when it answered
// the request (401, 403 or 503). With neither configured every request is
// let through, as a loopback-only gateway has always been.
func (h *httpHandler) authorize(w http.ResponseWriter, r *http.Request, gw config.Gateway, view string) (*http.Request, bool) {
	if !gw.AuthRequired() {
		return r, true
	}
	if len(gw.Tokens) > 0 {
		tok, ferr := authenticate(gw.Tokens, r)
		switch {
		case ferr == nil && !tok.Allows(view):
			h.g.auditRefused(r, audit.ViewDenied, tok, view, fmt.Sprintf("token %q may not use view %q", tok.Name, view))
			writeError(w, http.StatusForbidden, fault.New(fault.Authorization, "token %q may not use view %q", tok.Name, view).
				WithSuggestions("use a view the token grants, or add this view to the token's views"))
			return nil, false
		case ferr == nil:
			return r.WithContext(context.WithValue(r.Context(), tokenKey{}, tok)), true
		case gw.OAuth == nil:
			h.g.auditRefused(r, audit.TokenRefused, config.Token{}, view, ferr.Error())
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			writeError(w, http.StatusUnauthorized, ferr)
			return nil, false
		}
		// No static token matched: the token may be an OAuth one, and if
		// not, the OAuth refusal's challenge is what a client needs to
		// sign in.
	}
	id, ok := h.g.signIn(w, r)
	if !ok {
		return nil, false
	}
	ctx := context.WithValue(r.Context(), identityKey{}, id)
	ctx = context.WithValue(ctx, tokenKey{}, config.Token{Name: oauthTokenName, User: id.User})
	return r.WithContext(ctx), true
}

// CheckOAuth checks a request's OAuth access token with the gateway's own
// validator, as for the gateway's endpoints other than MCP ones (the
// gateway-wide scopes, no view): the web console's API takes such tokens
// from scripts. It returns nil, nil when gateway.oauth is not configured;
// the caller writes a refusal.
func (g *Gateway) CheckOAuth(r *http.Request) (*tokenauth.Identity, *tokenauth.Refusal) {
	a := g.authenticator(g.config().Gateway)
	switch {
	case g.config().Gateway.OAuth == nil:
		return nil, nil
	case a == nil:
		return nil, &tokenauth.Refusal{Status: http.StatusServiceUnavailable, Err: fault.New(fault.Connection, "the gateway cannot check OAuth access tokens yet").
			WithSuggestions("try again shortly; if it persists, the gateway's log says why its gateway.oauth settings could not be applied")}
	}
	return a.Authenticate(r)
}

// signIn checks a request's OAuth access token (the endpoint's view and
// scopes included, from its path), answering the request and reporting
// false when it is refused.
func (g *Gateway) signIn(w http.ResponseWriter, r *http.Request) (*tokenauth.Identity, bool) {
	a := g.oauth.Load()
	if a == nil {
		g.auditRefused(r, audit.TokenRefused, config.Token{Name: oauthTokenName}, "", "the gateway cannot check OAuth access tokens yet")
		notReady(w)
		return nil, false
	}
	id, refusal := a.Authenticate(r)
	if refusal != nil {
		g.auditOAuthRefusal(r, refusal)
		refusal.Write(w)
		return nil, false
	}
	return id, true
}
