// Package tokenauth makes the gateway an OAuth 2.1 protected resource, as the
// MCP authorization specification (2025-11-25) asks of an HTTP server: it
// publishes protected resource metadata (RFC 9728) for each MCP endpoint,
// answers a request without a usable access token with a 401 whose
// WWW-Authenticate challenge points at that metadata, and validates the
// access tokens a configured authorization server issues — JWTs against the
// server's published keys (JWKS), opaque tokens by introspection (RFC 7662)
// — before mapping their claims to an [Identity]: a user id, groups, scopes
// and the views the user may use.
//
// An [Authenticator] is built from [Options] with [New] and kept fresh by
// [Authenticator.Run] (the key set is refetched periodically, and on a key id
// it has not seen, at a bounded rate). The gateway calls
// [Authenticator.Authenticate] for each request to an MCP endpoint, after
// its own static tokens found no match, and writes the [Refusal] it gets
// back; [Authenticator.MetadataHandler] serves the well-known metadata
// documents. [Authenticator.Middleware] does both for a plain http.Handler,
// and puts the identity where the MCP SDK looks for it (its auth.TokenInfo),
// so that a session stays bound to the user that opened it.
//
// Validated tokens are cached (keyed by their SHA-256, for at most
// Options.CacheTTL and never past their expiry), so that a request carrying
// a token seen before costs a hash and a map lookup: no signature check and
// no network round trip. Nothing here logs or returns a token.
//
// The package knows nothing of the gateway: endpoint paths ("/mcp",
// "/mcp/{view}", "/sse", "/sse/{view}") and view names are all it is told.
package tokenauth
