// Package oauth makes Switchboard an OAuth 2.1 client of the upstream MCP
// servers that require sign-in, as the MCP authorization specification
// (2025-11-25) asks of a client.
//
// A [Manager] owns the signed-in state of every server in the state
// directory. For each upstream connection it hands out a [Handler], which
// the HTTP transports use in one of two ways: as the go-sdk's
// auth.OAuthHandler (mcp.StreamableClientTransport.OAuthHandler), or as an
// http.RoundTripper wrapping the transport's own ([Handler.RoundTripper]),
// which also covers SSE, WebSocket handshakes and the lean call path. The
// handler puts the stored access token on every request, refreshes it
// before it expires (rotating the refresh token when the authorization
// server issues a new one), answers a 403 insufficient_scope by stepping up
// (a bounded number of times) and, when a server answers 401 and no token
// can be had without a person, fails with a [NeedsSignInError] that carries
// the command to run. A daemon never opens a browser by itself; a handler
// made with [HandlerOptions.Interactive] (an ad hoc call on a terminal) runs
// the sign-in itself.
//
// [Manager.Login] runs the authorization-code flow with PKCE (S256 only):
// it discovers the protected resource metadata (RFC 9728: from the 401's
// WWW-Authenticate resource_metadata, then the path-based and the root
// well-known locations) and the authorization server metadata (RFC 8414 and
// OpenID discovery), with the 2025-03-26 fallbacks for servers that publish
// neither; checks the issuer; picks the client registration (a configured
// client, else a client ID metadata document URL when the server supports
// it, else dynamic registration, stored and reused per authorization
// server); listens for the redirect on 127.0.0.1; opens the browser the
// standard way and prints the URL too; checks state and the RFC 9207 iss;
// and sends the resource indicator (RFC 8707) on the authorization and on
// every token request. [Manager.Status] and [Manager.Logout] (with RFC 7009
// revocation where offered) complete the set, and servers configured for the
// client-credentials grant get their tokens without a person.
//
// Everything stored is sealed with AES-256-GCM under a key file (0600) in
// the state directory, in files of mode 0600, one per server (and user,
// for servers signed in per user) and one per authorization server's
// registration. Tokens and client secrets never appear in an error, in
// String or in JSON: see docs/auth.md and docs/decisions.md.
//
// The package builds on the go-sdk's oauthex package (metadata discovery,
// WWW-Authenticate parsing, dynamic registration) and on golang.org/x/oauth2
// (authorization URLs, PKCE, code exchange, client credentials). It imports
// nothing of Switchboard's, so upstream, the CLI and the daemon can all use
// it.
package oauth
