package tokenauth

import (
	"context"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// This file is what a first-party client of the gateway needs from the
// authenticator — the web console signing people in at the same
// authorization server: its metadata, and the same check of the access
// token it gets.

// ServerMetadata returns the authorization server's metadata (RFC 8414 or
// OpenID Connect discovery, found and checked as for the key set: the
// issuer must be the configured one). A successful fetch is kept for the
// authenticator's life; a failed one is retried at most every
// KeysMinInterval.
func (a *Authenticator) ServerMetadata(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	return a.serverMeta(ctx)
}

// Resource returns the gateway's resource identifier as a whole (its base
// URL): what a client of the whole gateway asks a token for (RFC 8707).
func (a *Authenticator) Resource() string { return a.ResourceURL("") }

// Scopes returns the scopes every token must have.
func (a *Authenticator) Scopes() []string { return slices.Clone(a.s.Scopes) }

// Check validates an access token as a request to the gateway as a whole
// would be (Authenticate on a path that is no MCP endpoint): the
// signature or introspection, issuer, audience, times, the user claim and
// Scopes. It returns the identity, or the refusal.
func (a *Authenticator) Check(ctx context.Context, token string) (*Identity, *Refusal) {
	u := *a.s.base
	r := (&http.Request{Method: http.MethodGet, URL: &u, Header: http.Header{"Authorization": {"Bearer " + token}}}).WithContext(ctx)
	return a.Authenticate(r)
}
