package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// This file reads the gateway.oauth block: the authorization server whose
// access tokens the gateway accepts (docs/auth-gateway.md). The rules of
// each key are in its schema type (schema.OAuth); what a schema cannot say
// — views that must exist, https or loopback http URLs, a secret read from
// the environment, options that only make sense together — is checked here,
// the URL and option rules by tokenauth itself, so that the file is refused
// when it is loaded for the same reasons the gateway would refuse it.

// OAuth is the resolved gateway.oauth block.
type OAuth struct {
	// Resource is the gateway's base URL as clients reach it.
	Resource string
	// Issuer is the authorization server's issuer URL.
	Issuer string
	// Audiences are accepted in aud besides the gateway's own URLs.
	Audiences []string
	// JWKSURL is where the signing keys are published ("": the metadata's).
	JWKSURL string
	// Algorithms are the accepted JWS algorithms (empty: every asymmetric one).
	Algorithms []string
	// Introspection, when set, checks opaque tokens (RFC 7662).
	Introspection *OAuthIntrospection
	// UserClaim and GroupsClaim name the claims of the user id and groups.
	UserClaim   string
	GroupsClaim string
	// Views every signed-in user may use; GroupViews those of each group.
	Views      []string
	GroupViews map[string][]string
	// Scopes are required of every token; ViewScopes of a view's besides.
	Scopes     []string
	ViewScopes map[string][]string
	// Leeway tolerates clock differences in exp, nbf and iat.
	Leeway time.Duration
	// CacheSize, CacheTTL and NegativeTTL bound the cache of checked tokens.
	CacheSize   int
	CacheTTL    time.Duration
	NegativeTTL time.Duration
	// KeysRefresh and KeysMinInterval pace fetches of the signing keys.
	KeysRefresh     time.Duration
	KeysMinInterval time.Duration
	// ResourceName and ResourceDocumentation go into the metadata.
	ResourceName          string
	ResourceDocumentation string
	// Console, when set, lets people sign in to the web console at the
	// authorization server.
	Console *OAuthConsole

	// Pos is where the block was defined.
	Pos Pos
}

// OAuthConsole is gateway.oauth.console, resolved: the web console's own
// OAuth client at the authorization server.
type OAuthConsole struct {
	// ClientID is the console's client id; empty means it registers
	// dynamically (RFC 7591).
	ClientID string
	// ClientSecretEnv names the variable ClientSecret was read from.
	ClientSecretEnv string
	// ClientSecret is the client's secret (empty: a public client); it is
	// never shown, logged or encoded.
	ClientSecret string `json:"-"`
	// Scopes are asked for at sign-in (empty: the block's Scopes).
	Scopes []string
	// Groups, when set, are the groups whose members may use the console.
	Groups []string
}

// String names the client, never the secret.
func (c OAuthConsole) String() string {
	return fmt.Sprintf("console client %q", c.ClientID)
}

// OAuthIntrospection is gateway.oauth.introspection, resolved.
type OAuthIntrospection struct {
	// URL is the introspection endpoint ("": the metadata's).
	URL string
	// ClientID is the gateway's client id.
	ClientID string
	// ClientSecretEnv names the variable ClientSecret was read from; it is
	// what `config show` prints.
	ClientSecretEnv string
	// ClientSecret is the secret; it is never shown, logged or encoded.
	ClientSecret string `json:"-"`
	// AuthMethod is client_secret_basic or client_secret_post.
	AuthMethod string
}

// String names the endpoint and client, never the secret.
func (in OAuthIntrospection) String() string {
	return fmt.Sprintf("introspection at %s as %s", in.URL, in.ClientID)
}

// Options returns the tokenauth options the block describes (without a
// logger, an HTTP client or a clock, which the daemon adds).
func (o *OAuth) Options() tokenauth.Options {
	var opts tokenauth.Options
	copyByName(&opts, *o) // the fields of the same name and type
	if in := o.Introspection; in != nil {
		opts.Introspection = &tokenauth.Introspection{}
		copyByName(opts.Introspection, *in)
	}
	return opts
}

// Same reports whether two blocks configure the same authorization (their
// positions in the file aside), so that a reload can keep the running
// authenticator, its keys and its cache.
func (o *OAuth) Same(p *OAuth) bool {
	if o == nil || p == nil {
		return o == p
	}
	a, b := *o, *p
	a.Pos, b.Pos = Pos{}, Pos{}
	return reflect.DeepEqual(a, b)
}

// AuthRequired reports whether every caller of the gateway's HTTP
// endpoints must bring a token: static tokens or OAuth are configured.
// A client's own _meta.user_id is then never trusted.
func (g *Gateway) AuthRequired() bool {
	return len(g.Tokens) > 0 || g.OAuth != nil
}

// oauthFields maps tokenauth's option names to the keys of gateway.oauth,
// for messages and positions.
var oauthFields = map[string][]any{
	"Resource":                 {"resource"},
	"Issuer":                   {"issuer"},
	"JWKSURL":                  {"jwks_url"},
	"Algorithms":               {"algorithms"},
	"Introspection":            {"introspection"},
	"Introspection.URL":        {"introspection", "url"},
	"Introspection.AuthMethod": {"introspection", "auth_method"},
	"GroupViews":               {"group_views"},
	"GroupsClaim":              {"groups_claim"},
	"Scopes":                   {"scopes"},
	"Leeway":                   {"leeway"},
	"Cache":                    {"cache"},
}

// oauth reads gateway.oauth; nil when it is absent or was wrong (its
// problems are recorded). views are the gateway's views.
func (r *resolver) oauth(f *schema.OAuth, views []View) *OAuth {
	base := []any{"gateway", "oauth"}
	at := func(key ...any) []any { return append(slices.Clone(base), key...) }
	if f == nil || r.at(base...) == nil {
		return nil
	}
	before := len(r.ps.errs)
	o := &OAuth{
		Pos:         r.keyAt(base...),
		UserClaim:   tokenauth.DefaultUserClaim,
		Leeway:      tokenauth.DefaultLeeway,
		CacheSize:   tokenauth.DefaultCacheSize,
		CacheTTL:    tokenauth.DefaultCacheTTL,
		NegativeTTL: tokenauth.DefaultNegativeTTL,
		KeysRefresh: tokenauth.DefaultKeysRefresh, KeysMinInterval: tokenauth.DefaultKeysMinInterval,
		ResourceName: tokenauth.DefaultResourceName,
	}
	text := func(dst *string, key ...any) {
		if v, ok := r.textAt(at(key...)...); ok {
			*dst = strings.TrimSpace(v)
		}
	}
	list := func(key ...any) []string {
		var out []string
		for _, it := range r.itemsAt(at(key...)...) {
			if v, ok := r.expandNode(it.n, it.field); ok && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out
	}
	text(&o.Resource, "resource")
	text(&o.Issuer, "issuer")
	o.Audiences = list("audiences")
	text(&o.JWKSURL, "jwks_url")
	o.Algorithms = list("algorithms")
	if f.Introspection != nil && r.at(at("introspection")...) != nil {
		in := defaultBlock[OAuthIntrospection](&schema.Introspection{}) // auth_method, its default or as written
		readFields(&in, f.Introspection)
		text(&in.URL, "introspection", "url")
		text(&in.ClientID, "introspection", "client_id")
		if n := r.at(at("introspection", "client_secret_env")...); n != nil {
			in.ClientSecretEnv, in.ClientSecret = r.secretEnv(n, r.name(at("introspection", "client_secret_env")...))
		}
		o.Introspection = &in
	}
	if f.Console != nil && r.at(at("console")...) != nil {
		c := &OAuthConsole{}
		text(&c.ClientID, "console", "client_id")
		if n := r.at(at("console", "client_secret_env")...); n != nil {
			c.ClientSecretEnv, c.ClientSecret = r.secretEnv(n, r.name(at("console", "client_secret_env")...))
			if c.ClientID == "" {
				r.ps.add(n.pos, r.name(at("console", "client_secret_env")...), "a client secret without a client id",
					"add console.client_id: the id the authorization server gave the client whose secret this is, or remove client_secret_env", nil)
			}
		}
		c.Scopes = list("console", "scopes")
		c.Groups = list("console", "groups")
		if len(c.Groups) > 0 && (f.GroupsClaim == nil || strings.TrimSpace(*f.GroupsClaim) == "") {
			r.ps.add(r.keyAt(at("console", "groups")...), r.name(at("console", "groups")...), "console groups without groups_claim",
				"set groups_claim to the claim that holds the user's groups, or remove console.groups", nil)
		}
		o.Console = c
	}
	text(&o.UserClaim, "user_claim")
	text(&o.GroupsClaim, "groups_claim")
	o.Scopes = list("scopes")
	text(&o.ResourceName, "resource_name")
	text(&o.ResourceDocumentation, "resource_documentation")
	setDur(&o.Leeway, f.Leeway)
	if c := f.Cache; c != nil {
		set(&o.CacheSize, c.Size)
		setDur(&o.CacheTTL, c.TTL)
		setDur(&o.NegativeTTL, c.NegativeTTL)
	}
	if k := f.Keys; k != nil {
		setDur(&o.KeysRefresh, k.Refresh)
		setDur(&o.KeysMinInterval, k.MinInterval)
	}

	// Views must exist: a typo would silently grant nothing.
	viewNames := []string{DefaultViewName}
	for _, v := range views {
		if v.Name != "" && !slices.Contains(viewNames, v.Name) {
			viewNames = append(viewNames, v.Name)
		}
	}
	checkView := func(n *node, field string, star bool) bool {
		name := n.text
		if (star && name == "*") || slices.Contains(viewNames, name) {
			return true
		}
		fix := "use the name of a view under gateway.views or \"default\""
		if star {
			fix += ", or \"*\" for every view"
		}
		if sug := suggest(name, viewNames); sug != "" {
			fix = fmt.Sprintf("did you mean %q?", sug)
		}
		r.ps.add(n.pos, field, fmt.Sprintf("unknown view %q", name), fix, nil)
		return false
	}
	for _, it := range r.itemsAt(at("views")...) {
		if checkView(it.n, it.field, true) && !slices.Contains(o.Views, it.n.text) {
			o.Views = append(o.Views, it.n.text)
		}
	}
	for _, p := range r.pairsAt(at("group_views")...) {
		if o.GroupViews == nil {
			o.GroupViews = map[string][]string{}
		}
		var granted []string
		for _, it := range r.itemsAt(at("group_views", p.key)...) {
			if checkView(it.n, it.field, true) && !slices.Contains(granted, it.n.text) {
				granted = append(granted, it.n.text)
			}
		}
		o.GroupViews[p.key] = granted
	}
	for _, p := range r.pairsAt(at("view_scopes")...) {
		if !checkView(&node{text: p.key, pos: p.keyPos}, r.name(at("view_scopes")...), false) {
			continue
		}
		if o.ViewScopes == nil {
			o.ViewScopes = map[string][]string{}
		}
		o.ViewScopes[p.key] = list("view_scopes", p.key)
	}

	// The rest of the rules are tokenauth's: the same check New makes.
	if len(r.ps.errs) == before && !r.violatedUnder(base...) {
		for _, err := range unjoin(o.Options().Check()) {
			var oe *tokenauth.OptionsError
			path := base
			msg := err.Error()
			if errors.As(err, &oe) {
				if k, ok := oauthFields[oe.Field]; ok {
					path = at(k...)
				}
				msg = oe.Err.Error()
			}
			pos := o.Pos
			if n := r.at(path...); n != nil {
				pos = n.pos
			}
			r.ps.add(pos, r.name(path...), msg, oauthFix(path[len(path)-1]), err)
		}
	}
	if len(r.ps.errs) > before || r.violatedUnder(base...) {
		return nil
	}
	return o
}

// oauthFix says how to fix a problem tokenauth found with a key.
func oauthFix(key any) string {
	switch key {
	case "resource", "issuer", "jwks_url", "url":
		return "give an https URL (http only on 127.0.0.1, ::1 or localhost)"
	case "group_views", "groups_claim":
		return "set groups_claim together with views or group_views, or neither (every signed-in user then may use every view)"
	case "introspection":
		return "set both client_id and client_secret_env, or neither"
	}
	return "see docs/auth-gateway.md#configuration"
}

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// secretEnv reads a key naming an environment variable that holds a
// secret, and looks the variable up; it returns the variable's name and
// the secret. Messages never include the secret.
func (r *resolver) secretEnv(n *node, field string) (string, string) {
	name := n.text // its form is the schema's
	v, set := r.lookup(name)
	switch {
	case !set:
		r.ps.add(n.pos, field, fmt.Sprintf("variable %s is not set", name), fmt.Sprintf("set %s to the gateway's client secret at the authorization server in the environment switchboard runs in", name), &UnresolvedVariableError{Variable: name, Field: field})
	case strings.TrimSpace(v) == "":
		r.ps.add(n.pos, field, fmt.Sprintf("variable %s is empty", name), fmt.Sprintf("set %s to the gateway's client secret", name), nil)
	default:
		return name, v
	}
	return name, ""
}
