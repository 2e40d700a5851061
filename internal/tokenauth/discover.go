package tokenauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// discovery holds the authorization server's metadata (RFC 8414 or OpenID
// Connect discovery), fetched when a URL the options leave out is needed.
type discovery struct {
	mu          sync.Mutex
	meta        *oauthex.AuthServerMeta
	lastAttempt time.Time
	lastErr     error
}

// metadataURLs returns where an issuer's metadata may be, in the order the
// MCP authorization specification gives: RFC 8414 with path insertion,
// OpenID Connect discovery with path insertion, then appended.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.Trim(u.Path, "/")
	at := func(p string) string {
		v := *u
		v.Path, v.RawPath = p, ""
		return v.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server/" + path),
		at("/.well-known/openid-configuration/" + path),
		at("/" + path + "/.well-known/openid-configuration"),
	}
}

// issuersEqual compares issuer identifiers, ignoring a trailing slash.
func issuersEqual(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// serverMeta returns the authorization server's metadata, fetching it once
// it is needed (and again, after a failure, at most once per
// KeysMinInterval).
//
// The go-sdk's auth.GetAuthServerMetadata is a client's discovery: it
// refuses servers that do not advertise PKCE (Entra ID does not) and
// addresses in private ranges (where a company's identity provider often
// is). A resource server only reads jwks_uri and introspection_endpoint
// from an issuer its operator configured, so it fetches the same locations
// itself and keeps the issuer check.
func (a *Authenticator) serverMeta(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	d := &a.disc
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.meta != nil {
		return d.meta, nil
	}
	now := a.s.Now()
	if !d.lastAttempt.IsZero() && now.Sub(d.lastAttempt) < a.s.KeysMinInterval && d.lastErr != nil {
		return nil, d.lastErr
	}
	d.lastAttempt = now
	d.meta, d.lastErr = a.fetchMeta(ctx)
	return d.meta, d.lastErr
}

func (a *Authenticator) fetchMeta(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	issuer := a.s.Issuer
	var tried []string
	for _, u := range metadataURLs(issuer) {
		body, err := a.get(ctx, u)
		var se *statusError
		if errors.As(err, &se) && se.Status >= 400 && se.Status < 500 {
			tried = append(tried, u)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("fetching the authorization server's metadata from %s: %w", u, err)
		}
		var meta oauthex.AuthServerMeta
		if err := json.Unmarshal(body, &meta); err != nil {
			return nil, fmt.Errorf("the authorization server's metadata at %s is not JSON: %w", u, err)
		}
		if !issuersEqual(meta.Issuer, issuer) {
			return nil, fmt.Errorf("the authorization server's metadata at %s names the issuer %q, not %q: set the issuer to exactly the server's issuer", u, meta.Issuer, issuer)
		}
		return &meta, nil
	}
	return nil, fmt.Errorf("the authorization server publishes no metadata (tried %s): check the issuer, or set the key set URL (and the introspection URL) explicitly", strings.Join(tried, ", "))
}

// jwksURL returns the key set's URL: configured, or the metadata's
// jwks_uri.
func (a *Authenticator) jwksURL(ctx context.Context) (string, error) {
	if a.s.JWKSURL != "" {
		return a.s.JWKSURL, nil
	}
	meta, err := a.serverMeta(ctx)
	if err != nil {
		return "", err
	}
	if meta.JWKSURI == "" {
		return "", errors.New("the authorization server's metadata names no jwks_uri: set the key set URL explicitly, or use introspection")
	}
	if _, err := serverURL(meta.JWKSURI); err != nil {
		return "", fmt.Errorf("the authorization server's jwks_uri: %w", err)
	}
	return meta.JWKSURI, nil
}

// introspectionURL returns the introspection endpoint: configured, or the
// metadata's introspection_endpoint.
func (a *Authenticator) introspectionURL(ctx context.Context) (string, error) {
	if u := a.s.Introspection.URL; u != "" {
		return u, nil
	}
	meta, err := a.serverMeta(ctx)
	if err != nil {
		return "", err
	}
	if meta.IntrospectionEndpoint == "" {
		return "", errors.New("the authorization server's metadata names no introspection_endpoint: set the introspection URL explicitly")
	}
	if _, err := serverURL(meta.IntrospectionEndpoint); err != nil {
		return "", fmt.Errorf("the authorization server's introspection_endpoint: %w", err)
	}
	return meta.IntrospectionEndpoint, nil
}
