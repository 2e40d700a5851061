package gateway

import (
	"net/http"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// This file records the gateway's refusals in the audit trail: a token
// refused (static or OAuth) and a view denied. Each names the token by
// its name and the caller by address, never the token itself.

// auditRefused records a refused request. tok is the token that was
// recognised (zero when none was).
func (g *Gateway) auditRefused(r *http.Request, event string, tok config.Token, view, reason string) {
	g.audit.Record(audit.Event{
		Event: event, Outcome: audit.Denied,
		Actor: audit.Actor{User: tok.User, Via: audit.ViaGateway, Token: tok.Name, Remote: r.RemoteAddr,
			Session: r.Header.Get("Mcp-Session-Id")},
		Target: audit.Target{View: view},
		Reason: reason,
	})
}

// auditOAuthRefusal records an OAuth access token the authenticator
// refused: a scope it lacks (403) is a view denied, anything else (no
// token, expired, another audience, a bad signature, an issuer that cannot
// be reached) a token refused. The reason is the authenticator's message,
// which never holds the token.
func (g *Gateway) auditOAuthRefusal(r *http.Request, ref *tokenauth.Refusal) {
	event := audit.TokenRefused
	if ref.Status == http.StatusForbidden {
		event = audit.ViewDenied
	}
	g.auditRefused(r, event, config.Token{Name: oauthTokenName}, viewOf(r), ref.Error())
}

// tokenOf returns the token a request was let in with (zero when none).
func tokenOf(r *http.Request) config.Token {
	tok, _ := r.Context().Value(tokenKey{}).(config.Token)
	return tok
}

// viewOf returns the view a request's path names ("" when it names none).
func viewOf(r *http.Request) string {
	_, v, ok := route(r.URL.Path)
	if !ok {
		return ""
	}
	if v == "" {
		return config.DefaultViewName
	}
	return v
}
