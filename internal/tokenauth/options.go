package tokenauth

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults for the zero values of [Options].
const (
	DefaultUserClaim       = "sub"
	DefaultLeeway          = 30 * time.Second
	DefaultCacheSize       = 10000
	DefaultCacheTTL        = 2 * time.Minute
	DefaultNegativeTTL     = 10 * time.Second
	DefaultKeysRefresh     = time.Hour
	DefaultKeysMinInterval = 30 * time.Second
	DefaultHTTPTimeout     = 10 * time.Second
	DefaultResourceName    = "Switchboard gateway"
	// MaxLeeway bounds Options.Leeway: a clock tolerance, not a way to
	// accept expired tokens.
	MaxLeeway = 5 * time.Minute
)

// DefaultAlgorithms are the JWS algorithms accepted when Options.Algorithms
// is empty: every asymmetric algorithm of RFC 7518 and RFC 8037. "none" and
// the HMAC algorithms (HS256 …) are never accepted: a resource server only
// holds the authorization server's public keys.
var DefaultAlgorithms = []string{
	"RS256", "RS384", "RS512",
	"PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512",
	"EdDSA",
}

// Introspection configures token introspection (RFC 7662) for opaque access
// tokens.
type Introspection struct {
	// URL is the authorization server's introspection endpoint. Empty means
	// the introspection_endpoint of its metadata (RFC 8414).
	URL string
	// ClientID and ClientSecret authenticate the gateway to the endpoint.
	// Both empty sends no client authentication (some servers allow that).
	ClientID     string
	ClientSecret string
	// AuthMethod is how they are sent: "client_secret_basic" (default, the
	// Authorization header) or "client_secret_post" (form fields).
	AuthMethod string
}

// Options configure an [Authenticator].
type Options struct {
	// Resource is the gateway's base URL as clients reach it, e.g.
	// "https://mcp.example.com" (https, or http on a loopback address; a
	// path is a prefix under which a proxy serves the gateway). The
	// resource identifier of each endpoint is Resource plus its path, and
	// metadata is served under /.well-known/oauth-protected-resource plus
	// the resource's path. Required.
	Resource string
	// Issuer is the authorization server's issuer identifier; tokens must
	// carry it in iss (introspection: when the response names one).
	// Required.
	Issuer string
	// Audiences are accepted in a token's aud besides the gateway's own
	// resource identifiers (Resource and Resource plus any endpoint path),
	// for authorization servers that name an API by another identifier.
	Audiences []string
	// JWKSURL is where the authorization server publishes its signing keys.
	// Empty, and with no Introspection, means the jwks_uri of its metadata.
	JWKSURL string
	// Algorithms are the JWS algorithms accepted (default
	// [DefaultAlgorithms]); "none" and HMAC are refused.
	Algorithms []string
	// Introspection, when set, validates tokens that are not JWTs (all
	// tokens, when JWKSURL is empty) at the introspection endpoint.
	Introspection *Introspection

	// UserClaim names the claim that holds the user id (default "sub").
	// A dotted path reaches into nested objects; a claim whose own name
	// contains dots (a namespaced claim) is found first.
	UserClaim string
	// GroupsClaim names the claim that holds the user's groups or roles (a
	// string, a space- or comma-separated string, or an array), as a
	// dotted path for nested claims such as Keycloak's realm_access.roles.
	// Empty means groups are not used and every user may use every view.
	GroupsClaim string
	// GroupViews maps a group to the views its members may use ("*" for
	// all). Requires GroupsClaim.
	GroupViews map[string][]string
	// Views are the views every signed-in user may use, whatever their
	// groups ("*" for all). Only meaningful with GroupsClaim.
	Views []string
	// Scopes are required of every token, and advertised.
	Scopes []string
	// ViewScopes are required, besides Scopes, of a token used on a view.
	ViewScopes map[string][]string
	// ResourceName is the human-readable name in the metadata (default
	// "Switchboard gateway").
	ResourceName string
	// ResourceDocumentation is a URL for people, put in the metadata.
	ResourceDocumentation string

	// Leeway tolerates clock differences in exp, nbf and iat (default 30s,
	// at most MaxLeeway).
	Leeway time.Duration
	// CacheSize bounds the number of validated tokens kept (default 10000).
	CacheSize int
	// CacheTTL is how long a validated token is trusted without checking it
	// again, never past its expiry (default 2m). It is how long a token
	// revoked at the authorization server may still be accepted.
	CacheTTL time.Duration
	// NegativeTTL is how long a token the introspection endpoint called
	// inactive is refused without asking again (default 10s).
	NegativeTTL time.Duration
	// KeysRefresh is how often Run refetches the key set (default 1h).
	KeysRefresh time.Duration
	// KeysMinInterval is the least time between two fetches of the key set
	// caused by requests — a token with a key id not in the set — so that
	// no client can make the gateway refetch per request (default 30s).
	KeysMinInterval time.Duration

	// HTTPClient reaches the authorization server (default: a client with a
	// 10s timeout).
	HTTPClient *http.Client
	// Logger receives the authorization server's failures (warn) and the
	// reasons tokens are refused (debug); nil discards. Tokens are never
	// logged.
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// settings is Options checked and with defaults applied.
type settings struct {
	Options
	base       *url.URL // Resource, without a trailing slash
	basePath   string   // base.Path, without a trailing slash
	algorithms []string
	useJWT     bool // JWTs are validated against the key set
	useIntro   bool // tokens (all, or those that are no JWT) are introspected
}

// OptionsError says which option is wrong and why.
type OptionsError struct {
	Field string // the Options field, e.g. "Issuer"
	Err   error
}

// Error names the field and the reason.
func (e *OptionsError) Error() string { return fmt.Sprintf("oauth %s: %v", e.Field, e.Err) }

// Unwrap returns the reason.
func (e *OptionsError) Unwrap() error { return e.Err }

func optErr(field, format string, args ...any) error {
	return &OptionsError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Check reports what is wrong with the options, as [New] would, without
// building anything: one *OptionsError per problem, joined. The
// configuration uses it to refuse a bad gateway.oauth block when it is
// loaded rather than when the gateway starts.
func (o Options) Check() error {
	_, err := o.check()
	return err
}

// check validates o and applies its defaults.
func (o Options) check() (*settings, error) {
	s := &settings{Options: o}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	if o.Resource == "" {
		add(optErr("Resource", "required: the gateway's base URL as clients reach it, e.g. https://mcp.example.com"))
	} else if u, err := serverURL(o.Resource); err != nil {
		add(&OptionsError{Field: "Resource", Err: err})
	} else if u.RawQuery != "" || u.Fragment != "" {
		add(optErr("Resource", "%q has a query or fragment; give scheme://host[:port][/prefix]", o.Resource))
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		s.base, s.basePath = u, u.Path
	}
	if o.Issuer == "" {
		add(optErr("Issuer", "required: the authorization server's issuer URL (its metadata's issuer)"))
	} else if _, err := serverURL(o.Issuer); err != nil {
		add(&OptionsError{Field: "Issuer", Err: err})
	}
	if o.JWKSURL != "" {
		if _, err := serverURL(o.JWKSURL); err != nil {
			add(&OptionsError{Field: "JWKSURL", Err: err})
		}
	}
	if in := o.Introspection; in != nil {
		if in.URL != "" {
			if _, err := serverURL(in.URL); err != nil {
				add(&OptionsError{Field: "Introspection.URL", Err: err})
			}
		}
		switch in.AuthMethod {
		case "", "client_secret_basic", "client_secret_post":
		default:
			add(optErr("Introspection.AuthMethod", "%q is not supported; use client_secret_basic or client_secret_post", in.AuthMethod))
		}
		if (in.ClientID == "") != (in.ClientSecret == "") {
			add(optErr("Introspection", "give both the client id and the client secret, or neither"))
		}
	}
	s.useIntro = o.Introspection != nil
	s.useJWT = o.JWKSURL != "" || !s.useIntro

	s.algorithms = o.Algorithms
	if len(s.algorithms) == 0 {
		s.algorithms = DefaultAlgorithms
	}
	for _, a := range s.algorithms {
		switch {
		case strings.EqualFold(a, "none"):
			add(optErr("Algorithms", `"none" means unsigned tokens, which anyone can forge; it is never accepted`))
		case strings.HasPrefix(strings.ToUpper(a), "HS"):
			add(optErr("Algorithms", "%s needs a secret shared with the authorization server; the gateway checks tokens with its public keys only (use %s)", a, strings.Join(DefaultAlgorithms, ", ")))
		case !slices.Contains(DefaultAlgorithms, a):
			add(optErr("Algorithms", "%q is not a JWS signature algorithm the gateway knows; use some of %s", a, strings.Join(DefaultAlgorithms, ", ")))
		}
	}

	if s.UserClaim == "" {
		s.UserClaim = DefaultUserClaim
	}
	if o.GroupsClaim == "" && (len(o.GroupViews) > 0 || len(o.Views) > 0) {
		add(optErr("GroupViews", "views are granted to groups, but no groups claim is set: name the claim that holds the groups (e.g. groups, roles, realm_access.roles)"))
	}
	if o.GroupsClaim != "" && len(o.GroupViews) == 0 && len(o.Views) == 0 {
		add(optErr("GroupsClaim", "%q is set but no view is granted to any group: add group views (group: [view, ...]) or views for every user", o.GroupsClaim))
	}
	for _, scopes := range [][]string{o.Scopes, flatten(o.ViewScopes)} {
		for _, sc := range scopes {
			if !validScope(sc) {
				add(optErr("Scopes", "%q is not a valid scope (printable ASCII without spaces, quotes or backslashes)", sc))
			}
		}
	}

	switch {
	case o.Leeway < 0:
		add(optErr("Leeway", "%s is negative", o.Leeway))
	case o.Leeway > MaxLeeway:
		add(optErr("Leeway", "%s is over %s: a leeway tolerates clock differences, it does not extend tokens", o.Leeway, MaxLeeway))
	case o.Leeway == 0:
		s.Leeway = DefaultLeeway
	}
	if o.CacheSize < 0 || o.CacheTTL < 0 || o.NegativeTTL < 0 || o.KeysRefresh < 0 || o.KeysMinInterval < 0 {
		add(optErr("Cache", "sizes and durations cannot be negative"))
	}
	s.CacheSize = defaulted(o.CacheSize, DefaultCacheSize)
	s.CacheTTL = defaulted(o.CacheTTL, DefaultCacheTTL)
	s.NegativeTTL = defaulted(o.NegativeTTL, DefaultNegativeTTL)
	s.KeysRefresh = defaulted(o.KeysRefresh, DefaultKeysRefresh)
	s.KeysMinInterval = defaulted(o.KeysMinInterval, DefaultKeysMinInterval)
	if s.ResourceName == "" {
		s.ResourceName = DefaultResourceName
	}
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func defaulted[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func flatten(m map[string][]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v...)
	}
	return out
}

// validScope reports whether s is a scope token (RFC 6749 §3.3) that can
// also stand in a quoted challenge parameter.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// serverURL parses an absolute URL of a server the gateway trusts: https,
// or http on a loopback address.
func serverURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("%q uses http on a non-loopback host; OAuth needs https (http only on 127.0.0.1, ::1 or localhost)", raw)
	}
	return u, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
