package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// This file signs people in to the console at the gateway's authorization
// server (gateway.oauth.console): the console is an OAuth client of its
// own (authorization code with PKCE S256, the resource indicator naming
// the gateway), and the access token it gets is checked by the gateway's
// own authenticator, as any client's token is: the same claims give the
// same user. The token is then dropped; the person gets an ordinary
// console session (auth.go), marked as an OAuth one so that a reload that
// turns the console's sign-in off ends it.

// Paths of the sign-in.
const (
	oidcStartPath    = Prefix + "auth/start"
	oidcCallbackPath = Prefix + "auth/callback"
	// oidcCookie binds a sign-in to the browser that started it. It is
	// SameSite=Lax, unlike the session cookie: the authorization server's
	// redirect back is a cross-site navigation, which a Strict cookie
	// does not come with.
	oidcCookie = "switchboard_console_signin"
	// oidcFlowTTL is how long a started sign-in may take.
	oidcFlowTTL = 10 * time.Minute
	// maxOIDCFlows bounds the sign-ins in progress; the oldest goes first.
	maxOIDCFlows = 1024
	// oidcSessionToken names an OAuth session where a static token's name
	// would be (logs, the store's token column).
	oidcSessionToken = "oauth"
)

// oidcFlow is a started sign-in, kept until its callback.
type oidcFlow struct {
	binding  [32]byte // SHA-256 of the browser's oidcCookie
	verifier string
	next     string
	client   oidcClient
	issuer   string
	started  time.Time
}

// oidcClient is the console's client at an authorization server.
type oidcClient struct {
	id, secret string
	// registered marks a dynamic registration, forgotten when the
	// authorization server no longer knows it.
	registered bool
}

// oidcState holds the sign-ins in progress and the dynamic registration
// (per issuer and redirect URI), in memory: a sign-in must come back to
// the daemon that started it, as a token login must be posted to the one
// that served its form.
type oidcState struct {
	mu         sync.Mutex
	flows      map[string]oidcFlow   // by state
	registered map[string]oidcClient // by issuer + " " + redirect URI
	hc         *http.Client
}

func (o *oidcState) init() {
	if o.flows == nil {
		o.flows, o.registered = map[string]oidcFlow{}, map[string]oidcClient{}
		o.hc = &http.Client{Timeout: 10 * time.Second}
	}
}

// consoleOAuth returns the console's sign-in settings, or nil when the
// console does not sign in with OAuth.
func consoleOAuth(cfg *config.Config) *config.OAuthConsole {
	if o := cfg.Gateway.OAuth; o != nil {
		return o.Console
	}
	return nil
}

// oidcFingerprint marks a session that signed in at the issuer: it stands
// where a static token's SHA-256 would, and cannot be one (it is not hex).
func oidcFingerprint(issuer string) string {
	d := sha256.Sum256([]byte(strings.TrimSuffix(issuer, "/")))
	return "oauth:" + hex.EncodeToString(d[:])
}

// oidcLoggedIn reports whether a session signed in at the authorization
// server that still signs people in to the console.
func oidcLoggedIn(se session, cfg *config.Config) bool {
	return se.authed && consoleOAuth(cfg) != nil && se.token == oidcSessionToken &&
		subtle.ConstantTimeCompare([]byte(se.fingerprint), []byte(oidcFingerprint(cfg.Gateway.OAuth.Issuer))) == 1
}

// oidcStartURL is the link of the login page's "Sign in" button, or ""
// when the console does not sign in with OAuth.
func oidcStartURL(cfg *config.Config, next string) string {
	if consoleOAuth(cfg) == nil {
		return ""
	}
	return oidcStartPath + "?next=" + url.QueryEscape(next)
}

// redirectURI is the console's callback: the gateway's configured
// resource URL (where people reach it; never the request's Host, which a
// client chooses) followed by the callback path.
func redirectURI(cfg *config.Config) string {
	return strings.TrimSuffix(cfg.Gateway.OAuth.Resource, "/") + oidcCallbackPath
}

// oidcStart starts a sign-in: it finds the authorization server, the
// console's client there (configured, or registered dynamically), and
// redirects the browser to the authorization endpoint with PKCE S256, a
// random state and the resource indicator.
func (c *Console) oidcStart(w http.ResponseWriter, r *http.Request) {
	cfg := c.opts.Config()
	next := safeNext(r.URL.Query().Get("next"))
	cc := consoleOAuth(cfg)
	if cc == nil {
		http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	a, meta, err := c.oidcServer(r.Context())
	if err != nil {
		c.oidcFail(w, r, http.StatusServiceUnavailable, next, err)
		return
	}
	redirect := redirectURI(cfg)
	client, err := c.oidcClient(r.Context(), cc, meta, redirect, cfg.Gateway.OAuth.Issuer)
	if err != nil {
		c.oidcFail(w, r, http.StatusServiceUnavailable, next, err)
		return
	}
	binding, state, verifier := randomToken(), randomToken(), oauth2.GenerateVerifier()
	c.oidc.mu.Lock()
	c.oidc.init()
	c.expireFlowsLocked()
	c.oidc.flows[state] = oidcFlow{binding: sha256.Sum256([]byte(binding)), verifier: verifier, next: next,
		client: client, issuer: cfg.Gateway.OAuth.Issuer, started: c.now()}
	c.oidc.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: oidcCookie, Value: binding, Path: oidcCallbackPath,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil, MaxAge: int(oidcFlowTTL / time.Second),
	})
	authURL := oidcConfig(client, meta, redirect, scopesOf(cc, a)).AuthCodeURL(state,
		oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", a.Resource()))
	http.Redirect(w, r, authURL, http.StatusSeeOther)
}

// oidcCallback finishes a sign-in: the redirect must carry a state this
// daemon issued to this browser (its cookie) within oidcFlowTTL, once,
// and the authorization server's iss when it says it sends one; the code
// is exchanged with the PKCE verifier, and the access token is checked by
// the gateway's authenticator. Then the person gets a new session.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request) {
	cfg := c.opts.Config()
	q := r.URL.Query()
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: oidcCallbackPath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
	cc := consoleOAuth(cfg)
	if cc == nil {
		c.oidcFail(w, r, http.StatusBadRequest, "/", fault.New(fault.Authentication, "the console does not sign in with the authorization server (gateway.oauth.console is not configured)").
			WithSuggestions("log in with one of the gateway's tokens"))
		return
	}
	c.oidc.mu.Lock()
	c.oidc.init()
	c.expireFlowsLocked()
	flow, ok := c.oidc.flows[q.Get("state")]
	delete(c.oidc.flows, q.Get("state"))
	c.oidc.mu.Unlock()
	if !ok || q.Get("state") == "" {
		c.oidcFail(w, r, http.StatusBadRequest, "/", fault.New(fault.Authentication, "this sign-in is unknown: its state is not one this console issued, or it was already used or is more than %s old", oidcFlowTTL).
			WithSuggestions("sign in again from the console's login page"))
		return
	}
	ck, err := r.Cookie(oidcCookie)
	if got := sha256.Sum256([]byte(cookieValue(ck, err))); err != nil || subtle.ConstantTimeCompare(got[:], flow.binding[:]) != 1 {
		c.oidcFail(w, r, http.StatusBadRequest, flow.next, fault.New(fault.Authentication, "this sign-in was started in another browser (or its cookie was refused), so it is not accepted here").
			WithSuggestions("sign in again from the console's login page, in this browser"))
		return
	}
	if e := q.Get("error"); e != "" {
		msg := "the authorization server did not sign you in: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		c.oidcFail(w, r, http.StatusUnauthorized, flow.next, fault.New(fault.Authentication, "%s", msg).
			WithSuggestions("sign in again; if the authorization server keeps refusing, ask its administrator whether you may use this application"))
		return
	}
	a, meta, err := c.oidcServer(r.Context())
	if err != nil {
		c.oidcFail(w, r, http.StatusServiceUnavailable, flow.next, err)
		return
	}
	if flow.issuer != cfg.Gateway.OAuth.Issuer {
		c.oidcFail(w, r, http.StatusBadRequest, flow.next, fault.New(fault.Authentication, "the gateway's authorization server changed during this sign-in").
			WithSuggestions("sign in again"))
		return
	}
	if iss := q.Get("iss"); meta.AuthorizationResponseIssParameterSupported && iss != meta.Issuer {
		c.oidcFail(w, r, http.StatusBadRequest, flow.next, fault.New(fault.Authentication, "the sign-in came back from %q, not from the gateway's authorization server %q (RFC 9207): it was not used", iss, meta.Issuer).
			WithSuggestions("sign in again from the console's login page"))
		return
	}
	redirect := redirectURI(cfg)
	c.oidc.mu.Lock()
	xctx := context.WithValue(r.Context(), oauth2.HTTPClient, c.oidc.hc)
	c.oidc.mu.Unlock()
	tok, err := oidcConfig(flow.client, meta, redirect, scopesOf(cc, a)).Exchange(xctx, q.Get("code"),
		oauth2.VerifierOption(flow.verifier), oauth2.SetAuthURLParam("resource", a.Resource()))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_client" && flow.client.registered {
			// The registration was revoked or expired: the next sign-in
			// registers again.
			c.oidc.mu.Lock()
			delete(c.oidc.registered, flow.issuer+" "+redirect)
			c.oidc.mu.Unlock()
		}
		c.oidcFail(w, r, http.StatusBadGateway, flow.next, fault.Wrap(fault.Authentication, tokenError(err),
			"the authorization server refused to issue the console's token").
			WithSuggestions("sign in again; if it keeps failing, check gateway.oauth.console (client_id, client_secret_env) against the client registered at the authorization server"))
		return
	}
	id, refusal := a.Check(r.Context(), tok.AccessToken)
	if refusal != nil {
		c.oidcFail(w, r, refusal.Status, flow.next, fault.Wrap(fault.Authentication, refusal,
			"the gateway does not accept the token the authorization server issued for the console").
			WithSuggestions("the token must be one the gateway accepts from MCP clients: its audience the gateway's resource URL "+a.Resource()+" (or one of gateway.oauth.audiences) and the scopes in gateway.oauth.scopes (see docs/auth-gateway.md#identity-providers)"))
		return
	}
	if len(cc.Groups) > 0 && !slices.ContainsFunc(id.Groups, func(g string) bool { return slices.Contains(cc.Groups, g) }) {
		c.logger.Warn("console sign-in refused: not in a console group", "user", id.User)
		c.oidcFail(w, r, http.StatusForbidden, flow.next, fault.New(fault.Authorization, "user %q may not use the console: only members of %s may", id.User, strings.Join(cc.Groups, ", ")).
			WithSuggestions("ask the gateway's administrator to add you to one of those groups (gateway.oauth.console.groups)"))
		return
	}
	if ck, err := r.Cookie(CookieName); err == nil {
		c.sessions.delete(r.Context(), ck.Value)
	}
	ns := c.sessions.start(r.Context(), &sessionOwner{name: oidcSessionToken, fingerprint: oidcFingerprint(flow.issuer), user: id.User}, true)
	setCookie(w, r, ns.id)
	c.logger.Info("console login", "token", oidcSessionToken, "user", id.User, "method", id.Method)
	// A page that moves on, rather than a redirect: a redirect would
	// still be part of the cross-site navigation from the authorization
	// server, which the Strict session cookie does not come with.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = signedInPage().Execute(w, struct{ User, Next string }{id.User, flow.next})
}

// signedInPage moves the browser on to the page it wanted, as a
// navigation of this site's own.
var signedInPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("signedin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={{.Next}}">
<title>Signed in</title><link rel="stylesheet" href="/ui/static/app.css"></head>
<body><main><p>Signed in as {{.User}}. <a href="{{.Next}}">Continue</a></p></main></body></html>
`))
})

// cookieValue is a cookie's value, or "" when there is none.
func cookieValue(ck *http.Cookie, err error) string {
	if err != nil || ck == nil {
		return ""
	}
	return ck.Value
}

// tokenError keeps a token endpoint failure's cause without the response
// body, which an authorization server may fill with anything.
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := fmt.Sprintf("HTTP %d", re.Response.StatusCode)
		if re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
		}
		if re.ErrorDescription != "" {
			msg += " (" + re.ErrorDescription + ")"
		}
		return errors.New(msg)
	}
	return err
}

// oidcFail shows the login page with what failed and what to do.
func (c *Console) oidcFail(w http.ResponseWriter, r *http.Request, status int, next string, err error) {
	fe := fault.As(err)
	c.logger.Warn("console sign-in failed", logKeyErr, err)
	msg := fe.Message
	if len(fe.Suggestions) > 0 && fe.Suggestions[0] != "" {
		msg += ". " + strings.ToUpper(fe.Suggestions[0][:1]) + fe.Suggestions[0][1:] + "."
	}
	se := c.session(w, r)
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, se))
	c.render(w, r, status, "login", c.loginPageData(next, msg))
}

// oidcServer returns the gateway's authenticator and its authorization
// server's metadata, which must name the endpoints a sign-in needs.
func (c *Console) oidcServer(ctx context.Context) (*tokenauth.Authenticator, *oauthex.AuthServerMeta, error) {
	var a *tokenauth.Authenticator
	if c.opts.Authenticator != nil {
		a = c.opts.Authenticator()
	}
	if a == nil {
		return nil, nil, fault.New(fault.Connection, "the gateway is not ready to check sign-ins yet").
			WithSuggestions("try again in a moment")
	}
	meta, err := a.ServerMetadata(ctx)
	if err != nil {
		return nil, nil, fault.Wrap(fault.Connection, err, "cannot reach the gateway's authorization server to sign in").
			WithSuggestions("try again shortly; if it persists, check gateway.oauth.issuer (the daemon's log says what failed)")
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return nil, nil, fault.New(fault.Config, "the authorization server's metadata names no authorization or token endpoint, so the console cannot sign people in there").
			WithSuggestions("use an authorization server that supports the authorization-code grant, or log in with a gateway token")
	}
	return a, meta, nil
}

// oidcClient returns the console's client at the authorization server:
// the configured one, else the dynamic registration made earlier, else a
// new one (RFC 7591, a public client with the console's redirect URI).
func (c *Console) oidcClient(ctx context.Context, cc *config.OAuthConsole, meta *oauthex.AuthServerMeta, redirect, issuer string) (oidcClient, error) {
	if cc.ClientID != "" {
		return oidcClient{id: cc.ClientID, secret: cc.ClientSecret}, nil
	}
	key := issuer + " " + redirect
	c.oidc.mu.Lock()
	c.oidc.init()
	cl, ok := c.oidc.registered[key]
	hc := c.oidc.hc
	c.oidc.mu.Unlock()
	if ok {
		return cl, nil
	}
	if meta.RegistrationEndpoint == "" {
		return oidcClient{}, fault.New(fault.Config, "the authorization server offers no dynamic client registration, and gateway.oauth.console names no client").
			WithSuggestions("register the console there as a web application with the redirect URI " + redirect + ", then set gateway.oauth.console.client_id (and client_secret_env for a confidential client)")
	}
	reg, err := oauthex.RegisterClient(ctx, meta.RegistrationEndpoint, &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		TokenEndpointAuthMethod: "none",
		GrantTypes:              []string{"authorization_code"},
		ResponseTypes:           []string{"code"},
		ClientName:              "Switchboard console",
		Scope:                   strings.Join(cc.Scopes, " "),
	}, hc)
	if err != nil {
		return oidcClient{}, fault.Wrap(fault.Connection, err, "registering the console as a client at the authorization server").
			WithSuggestions("register the console by hand with the redirect URI " + redirect + " and set gateway.oauth.console.client_id")
	}
	cl = oidcClient{id: reg.ClientID, secret: reg.ClientSecret, registered: true}
	c.oidc.mu.Lock()
	c.oidc.registered[key] = cl
	c.oidc.mu.Unlock()
	return cl, nil
}

// oidcConfig is the x/oauth2 client of a sign-in. A public client sends
// its id in the form; a confidential one is left to x/oauth2's detection
// (client_secret_basic first, then client_secret_post).
func oidcConfig(cl oidcClient, meta *oauthex.AuthServerMeta, redirect string, scopes []string) *oauth2.Config {
	style := oauth2.AuthStyleAutoDetect
	if cl.secret == "" {
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{
		ClientID: cl.id, ClientSecret: cl.secret, RedirectURL: redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint, AuthStyle: style},
	}
}

// scopesOf is what the console asks for: its own scopes, else the ones
// the gateway requires of every token.
func scopesOf(cc *config.OAuthConsole, a *tokenauth.Authenticator) []string {
	if len(cc.Scopes) > 0 {
		return cc.Scopes
	}
	return a.Scopes()
}

// expireFlowsLocked drops sign-ins older than oidcFlowTTL, and the oldest
// beyond maxOIDCFlows; c.oidc.mu is held.
func (c *Console) expireFlowsLocked() {
	now := c.now()
	for k, f := range c.oidc.flows {
		if now.Sub(f.started) > oidcFlowTTL {
			delete(c.oidc.flows, k)
		}
	}
	for len(c.oidc.flows) >= maxOIDCFlows {
		oldest := ""
		for k, f := range c.oidc.flows {
			if oldest == "" || f.started.Before(c.oidc.flows[oldest].started) {
				oldest = k
			}
		}
		delete(c.oidc.flows, oldest)
	}
}
