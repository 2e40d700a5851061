package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Grant is the OAuth grant a server's tokens come from.
type Grant string

// The grants a server can be configured with.
const (
	// GrantAuthorizationCode signs a person in through the browser (the
	// default).
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials gets tokens for Switchboard itself with a
	// configured client ID and secret, for machine-to-machine servers.
	GrantClientCredentials Grant = "client_credentials"
)

// Token endpoint auth methods (RFC 7591 §2) the package speaks.
const (
	AuthMethodNone  = "none"
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
)

// Where a client ID came from, in the order they are tried.
const (
	RegistrationConfigured       = "configured"
	RegistrationMetadataDocument = "metadata_document"
	RegistrationDynamic          = "dynamic"
)

// Settings are one server's OAuth settings, as the configuration gives them
// (the `oauth:` block of a server). The zero value signs in with dynamic
// registration and the discovered scopes on a random loopback port.
type Settings struct {
	// ClientID is a client pre-registered with the authorization server.
	ClientID string
	// ClientSecret is its secret, resolved from client_secret_env; empty
	// for a public client. It never prints.
	ClientSecret string
	// ClientMetadataURL is the HTTPS URL of a client ID metadata document
	// to use as the client ID where the authorization server supports it.
	ClientMetadataURL string
	// Scopes, when set, replace the discovered scopes.
	Scopes []string
	// RedirectPort is the loopback port of the redirect listener; 0 picks
	// one (and reuses it while its registration lasts).
	RedirectPort int
	// Grant is GrantAuthorizationCode (the default) or
	// GrantClientCredentials.
	Grant Grant
	// Issuer, when set, is the authorization server to use among those the
	// server names, and the only one accepted.
	Issuer string
	// AuthMethod, when set, is the token endpoint auth method of the
	// configured client; by default it is chosen from what the
	// authorization server supports.
	AuthMethod string
}

// String describes the settings without the secret.
func (s Settings) String() string {
	secretSet := "unset"
	if s.ClientSecret != "" {
		secretSet = "set"
	}
	return fmt.Sprintf("oauth{grant=%s client_id=%q client_secret=%s scopes=%q redirect_port=%d}", s.grant(), s.ClientID, secretSet, s.Scopes, s.RedirectPort)
}

// GoString is String, so %#v does not show the secret either.
func (s Settings) GoString() string { return s.String() }

func (s Settings) grant() Grant {
	if s.Grant == "" {
		return GrantAuthorizationCode
	}
	return s.Grant
}

// Validate checks the settings on their own; each problem names the key
// to fix (as the configuration spells it).
func (s Settings) Validate() error {
	var errs []error
	switch s.grant() {
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if s.ClientID == "" || s.ClientSecret == "" {
			errs = append(errs, errors.New("oauth.grant client_credentials needs oauth.client_id and oauth.client_secret_env (a variable that holds the secret)"))
		}
	default:
		errs = append(errs, fmt.Errorf("oauth.grant %q is not one of authorization_code, client_credentials", s.Grant))
	}
	if s.ClientSecret != "" && s.ClientID == "" {
		errs = append(errs, errors.New("oauth.client_secret_env is set without oauth.client_id: set the client ID the secret belongs to"))
	}
	if s.ClientMetadataURL != "" {
		u, err := url.Parse(s.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || strings.Trim(u.Path, "/") == "" {
			errs = append(errs, fmt.Errorf("oauth.client_metadata_url %q must be an https URL with a path (a client ID metadata document)", s.ClientMetadataURL))
		}
	}
	if s.RedirectPort < 0 || s.RedirectPort > 65535 {
		errs = append(errs, fmt.Errorf("oauth.redirect_port %d is not a port: use 1-65535, or 0 for any", s.RedirectPort))
	}
	if s.AuthMethod != "" && !slices.Contains([]string{AuthMethodNone, AuthMethodBasic, AuthMethodPost}, s.AuthMethod) {
		errs = append(errs, fmt.Errorf("oauth.token_auth_method %q is not one of none, client_secret_basic, client_secret_post", s.AuthMethod))
	}
	if s.AuthMethod == AuthMethodNone && s.ClientSecret != "" {
		errs = append(errs, errors.New("oauth.token_auth_method none sends no secret, but oauth.client_secret_env is set: remove one"))
	}
	if (s.AuthMethod == AuthMethodBasic || s.AuthMethod == AuthMethodPost) && s.ClientSecret == "" {
		errs = append(errs, fmt.Errorf("oauth.token_auth_method %s needs oauth.client_secret_env", s.AuthMethod))
	}
	for _, sc := range s.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\"\\") {
			errs = append(errs, fmt.Errorf("oauth.scopes has %q: a scope is one word without spaces or quotes", sc))
		}
	}
	return errors.Join(errs...)
}
