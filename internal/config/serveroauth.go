package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Auth values: whose sign-in a server's calls use.
const (
	// AuthShared is one sign-in for everyone (the default).
	AuthShared = "shared"
	// AuthPerUser is each gateway user's own sign-in.
	AuthPerUser = "per_user"
)

// ServerOAuth is a network server's `oauth:` block: how Switchboard signs in to
// it (see docs/auth.md). A server without one still signs in when it
// answers 401 with an OAuth challenge, with everything discovered.
type ServerOAuth struct {
	ClientID string
	// ClientSecretEnv names the variable the secret was read from; it is
	// what `config show` prints.
	ClientSecretEnv string
	// ClientSecret is the value of ClientSecretEnv. It never prints: the
	// String, GoString and JSON forms leave it out.
	ClientSecret      string `json:"-"`
	ClientMetadataURL string
	Scopes            []string
	RedirectPort      int
	// Grant is "authorization_code" (or empty) or "client_credentials".
	Grant           string
	Issuer          string
	TokenAuthMethod string
}

// String describes the settings without the secret.
func (o ServerOAuth) String() string {
	return fmt.Sprintf("{client_id=%q client_secret_env=%q client_metadata_url=%q scopes=%q redirect_port=%d grant=%q issuer=%q token_auth_method=%q}",
		o.ClientID, o.ClientSecretEnv, o.ClientMetadataURL, o.Scopes, o.RedirectPort, o.Grant, o.Issuer, o.TokenAuthMethod)
}

// GoString is String, so that %#v does not show the secret either.
func (o ServerOAuth) GoString() string { return "config.ServerOAuth" + o.String() }

// serverOAuth reads a network server's oauth: key (readFields read auth:).
// The schema has checked their types, enums and bounds; this expands the values,
// looks up the secret's variable, and checks what the keys say together.
func (r *resolver) serverOAuth(s *rawServer, srv *Server) {
	f, typed := s.field("oauth"), s.typed.OAuth
	if f == nil || typed == nil {
		return
	}
	base := s.path(f.key)
	o := &ServerOAuth{}
	readFields(o, typed)
	text := func(key string) (string, Pos, bool) {
		p := f.val.get(key)
		if p == nil || p.value.kind == kindNull {
			return "", Pos{}, false
		}
		v, ok := r.expandNode(p.value, base+"."+key)
		return v, p.value.pos, ok
	}
	if v, _, ok := text("client_id"); ok {
		o.ClientID = v
	}
	if p := f.val.get("client_secret_env"); p != nil && typed.ClientSecretEnv != nil {
		field := base + ".client_secret_env"
		name := *typed.ClientSecretEnv // a variable name, as the schema's pattern says
		v, set := r.lookup(name)
		switch {
		case !set:
			r.ps.add(p.value.pos, field, fmt.Sprintf("variable %s is not set", name), fmt.Sprintf("set %s to the client secret in the environment switchboard runs in, or remove client_secret_env for a public client", name), &UnresolvedVariableError{Variable: name, Field: field})
		case strings.TrimSpace(v) == "":
			r.ps.add(p.value.pos, field, fmt.Sprintf("variable %s is empty", name), fmt.Sprintf("set %s to the client secret, or remove client_secret_env for a public client", name), nil)
		default:
			o.ClientSecretEnv, o.ClientSecret = name, v
		}
	}
	if v, pos, ok := text("client_metadata_url"); ok {
		if u, err := url.Parse(v); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			r.ps.add(pos, base+".client_metadata_url", fmt.Sprintf("%q is not an https URL with a path", v), "give the https URL of a client ID metadata document, e.g. https://example.com/switchboard.json", nil)
		} else {
			o.ClientMetadataURL = v
		}
	}
	o.Scopes = typed.Scopes // each one word: the schema's rule
	if v, pos, ok := text("issuer"); ok {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			r.ps.add(pos, base+".issuer", fmt.Sprintf("%q is not an authorization server's URL", v), "give the issuer as its metadata says it, e.g. https://auth.example.com", nil)
		} else {
			o.Issuer = v
		}
	}
	// What the keys say together.
	at := func(key string) (Pos, string) {
		if p := f.val.get(key); p != nil {
			return p.keyPos, base + "." + key
		}
		return f.keyPos, base
	}
	if o.ClientSecretEnv != "" && o.ClientID == "" {
		pos, field := at("client_secret_env")
		r.ps.add(pos, field, "a client secret without oauth.client_id", "add client_id: with the client the secret belongs to", nil)
	}
	if o.Grant == "client_credentials" && (o.ClientID == "" || o.ClientSecretEnv == "") && f.val.get("client_secret_env") == nil {
		pos, field := at("grant")
		r.ps.add(pos, field, "grant client_credentials needs client_id and client_secret_env", "add client_id: and client_secret_env: (a variable holding the secret) of a client registered for this grant", nil)
	}
	if o.TokenAuthMethod == "none" && o.ClientSecretEnv != "" {
		pos, field := at("token_auth_method")
		r.ps.add(pos, field, "token_auth_method none sends no secret, but client_secret_env is set", "remove one of them", nil)
	}
	if (o.TokenAuthMethod == "client_secret_basic" || o.TokenAuthMethod == "client_secret_post") && o.ClientSecretEnv == "" && f.val.get("client_secret_env") == nil {
		pos, field := at("token_auth_method")
		r.ps.add(pos, field, "token_auth_method "+o.TokenAuthMethod+" needs client_secret_env", "add client_secret_env: naming the variable that holds the client secret", nil)
	}
	srv.OAuth = o
}
