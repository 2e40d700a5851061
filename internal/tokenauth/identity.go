package tokenauth

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Identity is who a validated access token speaks for and what it grants.
type Identity struct {
	// User is the user id: the value of the configured user claim (sub by
	// default).
	User string
	// ClientID is the OAuth client the token was issued to, when the token
	// says (client_id, azp).
	ClientID string
	// Groups are the values of the groups claim, when one is configured.
	Groups []string
	// Scopes are the scopes the token grants (scope or scp).
	Scopes []string
	// Expiry is when the token expires; zero when it does not say.
	Expiry time.Time
	// Method is how the token was validated: "jwt" or "introspection".
	Method string

	allViews bool     // every view, whatever views says
	views    []string // the views the groups grant
}

// The values of Identity.Method.
const (
	MethodJWT           = "jwt"
	MethodIntrospection = "introspection"
)

// Allows reports whether the identity may use the view.
func (id *Identity) Allows(view string) bool {
	return id.allViews || slices.Contains(id.views, view)
}

// Views returns the views the identity may use, sorted, or nil and true
// when it may use every view.
func (id *Identity) Views() (views []string, all bool) {
	if id.allViews {
		return nil, true
	}
	return slices.Clone(id.views), false
}

// missingScopes returns the scopes of want that the token lacks.
func (id *Identity) missingScopes(want []string) []string {
	var missing []string
	for _, s := range want {
		if !slices.Contains(id.Scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// identityKey is the TokenInfo.Extra key that carries the *Identity.
const identityKey = "switchboard.identity"

// TokenInfo returns the identity in the form the MCP SDK carries on each
// request (auth.TokenInfoFromContext, mcp.RequestExtra.TokenInfo), with the
// identity itself in Extra for [FromTokenInfo].
func (id *Identity) TokenInfo() *auth.TokenInfo {
	return &auth.TokenInfo{
		UserID:     id.User,
		Scopes:     slices.Clone(id.Scopes),
		Expiration: id.Expiry,
		Extra:      map[string]any{identityKey: id},
	}
}

// FromTokenInfo returns the identity a TokenInfo made by
// [Identity.TokenInfo] carries, or nil.
func FromTokenInfo(info *auth.TokenInfo) *Identity {
	if info == nil {
		return nil
	}
	id, _ := info.Extra[identityKey].(*Identity)
	return id
}

// String names the user and how the token was checked, never the token.
func (id *Identity) String() string {
	return fmt.Sprintf("%s (oauth %s)", id.User, id.Method)
}

// claims are a token's claims (a JWT's payload, an introspection response)
// as decoded JSON.
type claims map[string]any

// lookup finds a claim by name: the name itself first (namespaced claims
// such as "https://example.com/roles" contain dots), then as a dotted path
// into nested objects ("realm_access.roles").
func (c claims) lookup(name string) (any, bool) {
	if v, ok := c[name]; ok {
		return v, true
	}
	if !strings.Contains(name, ".") {
		return nil, false
	}
	var cur any = map[string]any(c)
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// str returns a string claim; numbers (some servers' numeric user ids) are
// given in decimal.
func (c claims) str(name string) string {
	v, _ := c.lookup(name)
	switch v := v.(type) {
	case string:
		return v
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return fmt.Sprintf("%.0f", v)
		}
	case json.Number:
		return v.String()
	}
	return ""
}

// list returns a claim that is a list of strings: an array, or a string of
// values separated by spaces or commas.
func (c claims) list(name string) []string {
	v, _ := c.lookup(name)
	switch v := v.(type) {
	case string:
		return strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' })
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// scopes returns the token's scopes: scope (RFC 9068, RFC 7662; a
// space-separated string) or scp (Entra ID's string, Okta's array).
func (c claims) scopes() []string {
	if _, ok := c["scope"]; ok {
		return c.list("scope")
	}
	return c.list("scp")
}

// audience returns aud, a string or an array of strings.
func (c claims) audience() []string { return c.list("aud") }

// date returns a NumericDate claim (seconds since the epoch), and whether
// it is present and a number.
func (c claims) date(name string) (time.Time, bool) {
	var f float64
	switch v := c[name].(type) {
	case float64:
		f = v
	case json.Number:
		var err error
		if f, err = v.Float64(); err != nil {
			return time.Time{}, false
		}
	default:
		return time.Time{}, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// identity maps validated claims to an Identity. It fails when the user
// claim is missing.
func (a *Authenticator) identity(c claims, method string, expiry time.Time) (*Identity, error) {
	s := a.s
	id := &Identity{
		User:   c.str(s.UserClaim),
		Scopes: c.scopes(),
		Expiry: expiry,
		Method: method,
	}
	if id.User == "" {
		return nil, fmt.Errorf("the token has no %q claim, which names the user", s.UserClaim)
	}
	id.ClientID = c.str("client_id")
	if id.ClientID == "" {
		id.ClientID = c.str("azp")
	}
	if s.GroupsClaim == "" {
		id.allViews = true
		return id, nil
	}
	id.Groups = c.list(s.GroupsClaim)
	grant := func(views []string) {
		for _, v := range views {
			if v == "*" {
				id.allViews = true
			} else if !slices.Contains(id.views, v) {
				id.views = append(id.views, v)
			}
		}
	}
	grant(s.Views)
	for _, g := range id.Groups {
		grant(s.GroupViews[g])
	}
	slices.Sort(id.views)
	return id, nil
}
