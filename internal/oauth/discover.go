package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// challenge is what a 401 or 403's WWW-Authenticate said.
type challenge struct {
	ResourceMetadata string   // resource_metadata
	Scopes           []string // scope
	Error            string   // error (insufficient_scope, invalid_token)
}

// parseChallenge reads the Bearer challenge of a response's headers. A
// header that does not parse yields an empty challenge: discovery then
// goes on with the well-known locations, as it would without one.
func parseChallenge(h http.Header) challenge {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return challenge{}
	}
	var c challenge
	for _, ch := range cs {
		if u := ch.Params["resource_metadata"]; u != "" && c.ResourceMetadata == "" {
			c.ResourceMetadata = u
		}
		if ch.Scheme != "bearer" {
			continue
		}
		if s := ch.Params["scope"]; s != "" && c.Scopes == nil {
			c.Scopes = strings.Fields(s)
		}
		if e := ch.Params["error"]; e != "" && c.Error == "" {
			c.Error = e
		}
	}
	return c
}

// discovery is what a client needs to know about a server's authorization.
type discovery struct {
	// Resource is the resource indicator (RFC 8707) sent on every
	// authorization and token request.
	Resource string
	// ASM is the authorization server's metadata (or the 2025-03-26
	// default endpoints).
	ASM *oauthex.AuthServerMeta
	// ResourceScopes is the protected resource metadata's scopes_supported.
	ResourceScopes []string
	// Legacy is set when the server published no protected resource
	// metadata and the 2025-03-26 rules were used.
	Legacy bool
	// DefaultEndpoints is set when the authorization server published no
	// metadata and the 2025-03-26 default endpoints are used.
	DefaultEndpoints bool
	// Notes say why protected resource metadata locations that exist
	// failed their checks, for messages when nothing else works.
	Notes []string
}

// discover finds the authorization server of the MCP server at serverURL,
// as the specification orders it: protected resource metadata from the
// challenge's resource_metadata, then at the path-based well-known
// location, then at the root; then the authorization server's metadata
// (RFC 8414 and OpenID discovery, path insertion first). A server with no
// protected resource metadata is taken as a 2025-03-26 server: its origin
// is the authorization server, and where that publishes no metadata either,
// the default endpoints /authorize, /token and /register are used.
func discover(ctx context.Context, hc *http.Client, serverURL string, ch challenge, issuer string) (*discovery, error) {
	prm, notes, mismatch := fetchResourceMetadata(ctx, hc, serverURL, ch.ResourceMetadata)
	d := &discovery{Resource: serverURL, Notes: notes}
	var asURL string
	if prm == nil && mismatch != nil {
		// Metadata exists but describes another resource (RFC 9728
		// §3.3): the server is not a 2025-03-26 one without metadata,
		// and the authorization server that metadata names is not to be
		// trusted with this server's sign-in.
		return nil, &AuthServerError{
			Step: "reading the server's protected resource metadata",
			URL:  serverURL,
			Err:  mismatch,
			Hint: "the metadata is for another resource, so it is not used (a misconfigured server, or one impersonating another); nothing was signed in: ask the server's operator to publish metadata whose resource is this URL",
		}
	}
	if prm != nil {
		if prm.Resource != "" {
			d.Resource = prm.Resource
		}
		d.ResourceScopes = prm.ScopesSupported
		asURL = prm.AuthorizationServers[0]
		if issuer != "" {
			i := slices.IndexFunc(prm.AuthorizationServers, func(s string) bool { return canonicalIssuer(s) == canonicalIssuer(issuer) })
			if i < 0 {
				return nil, &AuthServerError{
					Step: "choosing the authorization server",
					URL:  serverURL,
					Err:  fmt.Errorf("the server names %s, not the configured issuer %s", strings.Join(prm.AuthorizationServers, ", "), issuer),
					Hint: "correct or remove oauth.issuer in the server's settings",
				}
			}
			asURL = prm.AuthorizationServers[i]
		}
	} else {
		u, err := url.Parse(serverURL)
		if err != nil {
			return nil, fmt.Errorf("parsing the server URL: %w", err)
		}
		d.Legacy = true
		asURL = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}

	asm, err := auth.GetAuthServerMetadata(ctx, asURL, hc)
	if err != nil {
		return nil, &AuthServerError{
			Step: "fetching the authorization server's metadata",
			URL:  asURL,
			Err:  err,
			Hint: "check that the authorization server is reachable from this machine and is the one the server names; nothing was signed in",
		}
	}
	if asm == nil {
		if !d.Legacy {
			return nil, &AuthServerError{
				Step: "fetching the authorization server's metadata",
				URL:  asURL,
				Err:  errors.New("it publishes neither OAuth (RFC 8414) nor OpenID Connect discovery metadata"),
				Hint: "the server's protected resource metadata names an address that is not an authorization server",
			}
		}
		base := strings.TrimSuffix(asURL, "/")
		asm = &oauthex.AuthServerMeta{
			Issuer:                        asURL,
			AuthorizationEndpoint:         base + "/authorize",
			TokenEndpoint:                 base + "/token",
			RegistrationEndpoint:          base + "/register",
			CodeChallengeMethodsSupported: []string{"S256"}, // 2025-03-26 requires PKCE of every server
		}
		d.DefaultEndpoints = true
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, &AuthServerError{
			Step: "checking the authorization server's metadata",
			URL:  asURL,
			Err:  fmt.Errorf("it does not offer PKCE with S256 (code_challenge_methods_supported: %q)", asm.CodeChallengeMethodsSupported),
			Hint: "the MCP specification forbids signing in without PKCE S256; ask the server's operator to enable it",
		}
	}
	d.ASM = asm
	return d, nil
}

// fetchResourceMetadata tries the protected resource metadata locations in
// order and returns the first document that passes its checks, with notes
// on the places that failed, and the first failure that was a document
// naming another resource.
func fetchResourceMetadata(ctx context.Context, hc *http.Client, serverURL, fromChallenge string) (*oauthex.ProtectedResourceMetadata, []string, error) {
	type place struct{ url, resource string }
	var places []place
	if fromChallenge != "" {
		places = append(places, place{fromChallenge, serverURL})
	}
	if u, err := url.Parse(serverURL); err == nil {
		wk := *u
		wk.RawQuery, wk.Fragment = "", ""
		if p := strings.Trim(u.Path, "/"); p != "" {
			wk.Path = "/.well-known/oauth-protected-resource/" + p
			places = append(places, place{wk.String(), serverURL})
		}
		wk.Path = "/.well-known/oauth-protected-resource"
		places = append(places, place{wk.String(), (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()})
	}
	var notes []string
	var mismatch error
	for _, p := range places {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, p.url, p.resource, hc)
		if err != nil {
			notes = append(notes, err.Error())
			// The SDK says so in its error's words only; TestResourceMismatch
			// notices if they change.
			if mismatch == nil && strings.Contains(err.Error(), "got metadata resource") {
				mismatch = err
			}
			continue
		}
		if prm == nil || len(prm.AuthorizationServers) == 0 {
			notes = append(notes, p.url+": names no authorization server")
			continue
		}
		return prm, notes, nil
	}
	return nil, notes, mismatch
}

// selectScopes picks what to ask for, as the specification orders it: the
// challenge's scope, else the resource's scopes_supported, else nothing
// (the authorization server's default). Configured scopes replace the
// discovered ones. Scopes granted before and scopes a step-up asked for are
// kept, and offline_access is added only when the authorization server
// offers it (and only for the authorization-code grant).
func selectScopes(configured, challenged, resource, granted, wanted, offered []string, refresh bool) []string {
	var s []string
	switch {
	case len(configured) > 0:
		s = configured
	case len(challenged) > 0:
		s = challenged
	default:
		s = resource
	}
	s = unionScopes(granted, unionScopes(s, wanted))
	if refresh && slices.Contains(offered, "offline_access") && !slices.Contains(s, "offline_access") {
		s = append(s, "offline_access")
	}
	return s
}

// unionScopes returns a followed by the scopes of b not in a.
func unionScopes(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
