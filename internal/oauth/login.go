package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// callbackPath is the path of the loopback redirect URI.
const callbackPath = "/callback"

// browserGrace is how long a sign-in waits for the browser command to end
// after the redirect arrived.
const browserGrace = 5 * time.Second

// LoginOptions configure one sign-in.
type LoginOptions struct {
	// User is the user signing in, for servers signed in per user; empty
	// for the shared sign-in.
	User string
	// Out receives the authorization URL (always) and one line per step;
	// nil discards.
	Out io.Writer
	// NoBrowser only prints the URL, for a machine without a browser.
	NoBrowser bool
	// OnURL, if set, is given the authorization URL before the browser
	// opens (for a caller that shows it otherwise than as text, such as
	// the console).
	OnURL func(authURL string)
}

// Login signs in to srv: the authorization-code flow with PKCE on a
// loopback redirect, or for a server configured with the client-credentials
// grant, a token for the client itself. On success the tokens are stored
// and the new status returned.
func (m *Manager) Login(ctx context.Context, srv Server, opts LoginOptions) (Status, error) {
	return m.login(ctx, srv, opts, nil)
}

func (m *Manager) login(ctx context.Context, srv Server, opts LoginOptions, ch *challenge) (Status, error) {
	if err := srv.Settings.Validate(); err != nil {
		return Status{}, fmt.Errorf("server %s: %w", srv.Name, err)
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	if ch == nil {
		c, err := m.probe(ctx, srv.URL)
		if err != nil {
			return Status{}, err
		}
		ch = &c
	}
	d, err := discover(ctx, m.hc, srv.URL, *ch, srv.Settings.Issuer)
	if err != nil {
		return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, err)
	}
	old, err := m.store.loadGrant(srv.Name, opts.User, true)
	if err != nil {
		old = nil // unreadable: replaced by this sign-in
	}
	var granted, wanted []string
	if old != nil && old.ServerURL == srv.URL && old.Problem == "" {
		granted = old.Scopes
	}
	if old != nil {
		wanted = old.WantScopes
	}
	if srv.Settings.grant() == GrantClientCredentials {
		scopes := selectScopes(srv.Settings.Scopes, ch.Scopes, d.ResourceScopes, granted, wanted, nil, false)
		g, err := m.clientCredentials(ctx, srv, opts.User, d, scopes)
		if err != nil {
			return Status{}, err
		}
		fmt.Fprintf(out, "Authorized %s as client %s.\n", srv.Name, g.ClientID)
		return m.statusOf(g), nil
	}

	l, err := m.listen(srv, d)
	if err != nil {
		return Status{}, err
	}
	redirectURI := "http://" + l.Addr().String() + callbackPath
	c, err := m.resolveClient(ctx, srv, d.ASM, redirectURI)
	if err != nil {
		l.Close()
		return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, err)
	}
	scopes := selectScopes(srv.Settings.Scopes, ch.Scopes, d.ResourceScopes, granted, wanted, d.ASM.ScopesSupported, true)
	newConfig := func(c client) *oauth2.Config {
		return &oauth2.Config{
			ClientID:     c.ID,
			ClientSecret: string(c.Secret),
			Endpoint: oauth2.Endpoint{
				AuthURL:   d.ASM.AuthorizationEndpoint,
				TokenURL:  d.ASM.TokenEndpoint,
				AuthStyle: authStyle(c.AuthMethod),
			},
			RedirectURL: redirectURI,
			Scopes:      scopes,
		}
	}
	cfg := newConfig(c)
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	authURLOf := func(cfg *oauth2.Config) string {
		return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource))
	}
	authURL := authURLOf(cfg)
	// An authorization server that forgot a registration made by an earlier
	// sign-in answers the request itself (a browser shows its error page)
	// and never redirects: ask it first and register again once, rather
	// than wait for the login timeout; fail now if it refuses the new one.
	if c.Stored {
		if rerr := m.refusedAuthorization(ctx, authURL); rerr != nil {
			_ = m.store.deleteRegistration(d.ASM.Issuer)
			fmt.Fprintf(out, "The authorization server no longer accepts Switchboard's client registration (%v); registering again.\n", rerr)
			m.log.Info("oauth: stored registration refused, registering again", logServer, srv.Name, logIssuer, d.ASM.Issuer)
			if c, err = m.resolveClient(ctx, srv, d.ASM, redirectURI); err != nil {
				l.Close()
				return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, err)
			}
			cfg = newConfig(c)
			authURL = authURLOf(cfg)
			if rerr = m.refusedAuthorization(ctx, authURL); rerr != nil {
				_ = m.store.deleteRegistration(d.ASM.Issuer)
				l.Close()
				return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, &AuthServerError{
					Step: "asking the authorization server to sign in", URL: d.ASM.AuthorizationEndpoint, Err: rerr,
					Hint: "it refused the client it had just registered; ask its administrator, or register a client by hand and set oauth.client_id on server " + srv.Name,
				})
			}
		}
	}

	// A client the configuration names (oauth.client_id, or a client ID
	// metadata document) that the authorization server does not know is
	// refused the same way: say so now, naming it, rather than wait out
	// the login timeout for a redirect that never comes.
	if c.Registration == RegistrationConfigured || c.Registration == RegistrationMetadataDocument {
		if rerr := m.refusedAuthorization(ctx, authURL); rerr != nil {
			l.Close()
			return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, &AuthServerError{
				Step: fmt.Sprintf("asking the authorization server to sign in client %q", c.ID), URL: d.ASM.AuthorizationEndpoint, Err: rerr,
				Hint: configuredClientHint(srv, c, redirectURI, d.ASM.RegistrationEndpoint != ""),
			})
		}
	}

	cb := newCallback(state)
	srvHTTP := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srvHTTP.Serve(l) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srvHTTP.Shutdown(sctx)
		wg.Wait()
	}()

	fmt.Fprintf(out, "To sign in to %s, open this URL in a browser:\n\n  %s\n\n", srv.Name, authURL)
	if opts.OnURL != nil {
		opts.OnURL(authURL)
	}
	var browserDone <-chan error
	if !opts.NoBrowser {
		if browserDone, err = m.opts.OpenBrowser(ctx, authURL); err != nil {
			fmt.Fprintf(out, "(No browser was opened: %v. Open the URL above by hand.)\n", err)
		}
	}
	fmt.Fprintf(out, "Waiting for the authorization server's redirect to %s ...\n", redirectURI)

	wctx, cancel := context.WithTimeout(ctx, m.opts.LoginTimeout)
	defer cancel()
	var res callbackResult
	select {
	case res = <-cb.results:
	case <-wctx.Done():
		if ctx.Err() != nil {
			return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, ctx.Err())
		}
		msg := fmt.Sprintf("signing in to %s: no redirect arrived within %v", srv.Name, m.opts.LoginTimeout)
		if c.Registration == RegistrationDynamic {
			// The usual cause a browser shows and we cannot see: the
			// authorization server forgot the registration. Register anew next time.
			_ = m.store.deleteRegistration(d.ASM.Issuer)
			msg += "; if the browser showed an error about the client, its registration was revoked: the next login registers again"
		}
		return Status{}, errors.New(msg + "; run `" + m.LoginCommand(srv.Name, opts.User) + "` again")
	}
	g, err := m.finishLogin(ctx, srv, opts.User, d, c, cfg, verifier, scopes, res)
	if err != nil {
		res.reply <- "Signing in to " + srv.Name + " failed: " + err.Error()
		return Status{}, fmt.Errorf("signing in to %s: %w", srv.Name, err)
	}
	res.reply <- "Signed in to " + srv.Name + ". You can close this tab."
	if browserDone != nil {
		// An opener (xdg-open, a script) ends at once; a browser run
		// directly from $BROWSER keeps running, and is left to the person.
		select {
		case <-browserDone:
		case <-time.After(browserGrace):
		}
	}
	who := g.Subject
	if who == "" {
		who = "client " + g.ClientID
	}
	fmt.Fprintf(out, "Signed in to %s (%s), scopes: %s.\n", srv.Name, who, orNone(g.Scopes))
	m.log.Info("oauth: signed in", logServer, srv.Name, logUser, opts.User, logIssuer, g.Issuer)
	return m.statusOf(g), nil
}

// finishLogin checks the redirect and exchanges its code.
func (m *Manager) finishLogin(ctx context.Context, srv Server, user string, d *discovery, c client, cfg *oauth2.Config, verifier string, scopes []string, res callbackResult) (*grant, error) {
	if res.err != nil {
		return nil, res.err
	}
	// RFC 9207: an advertised iss must come back and match; one that comes
	// back unadvertised must match too.
	if d.ASM.AuthorizationResponseIssParameterSupported && res.iss == "" {
		return nil, errors.New("the authorization server advertises the iss parameter (RFC 9207) but the redirect has none: the response may not come from it")
	}
	if res.iss != "" && canonicalIssuer(res.iss) != canonicalIssuer(d.ASM.Issuer) {
		return nil, fmt.Errorf("the redirect's issuer %q is not the authorization server %q (RFC 9207): a mix-up attack or a misconfigured server; nothing was stored", res.iss, d.ASM.Issuer)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, m.hc), res.code,
		oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", d.Resource))
	if err != nil {
		err = tokenErrorFrom(d.ASM.TokenEndpoint, err)
		var te *TokenError
		if errors.As(err, &te) && te.Code == "invalid_client" && c.Registration == RegistrationDynamic {
			_ = m.store.deleteRegistration(d.ASM.Issuer)
			return nil, &AuthServerError{Step: "exchanging the authorization code", Err: err, Hint: ReasonRegistrationGone + "; it was forgotten here, and the next login registers again"}
		}
		return nil, &AuthServerError{Step: "exchanging the authorization code", Err: err, Hint: "check the client settings (oauth.client_id, oauth.client_secret_env, oauth.token_auth_method)"}
	}
	tr := fromOAuth2(tok)
	g := &grant{
		Server: srv.Name, User: user, ServerURL: srv.URL, Kind: GrantAuthorizationCode,
		Resource: d.Resource, Issuer: d.ASM.Issuer, TokenEndpoint: d.ASM.TokenEndpoint,
		RevocationEndpoint: d.ASM.RevocationEndpoint, ClientID: c.ID, Registration: c.Registration,
		AuthMethod: c.AuthMethod, SignedInAt: m.opts.Now(),
	}
	applyToken(g, tr, tok.Expiry, scopes)
	if err := m.store.saveGrant(g); err != nil {
		return nil, err
	}
	return g, nil
}

// applyToken puts a token response into g: a refresh token replaces the
// stored one only when the server sent one (rotation), and the granted
// scopes are the response's scope, else the scopes asked for.
func applyToken(g *grant, tr *tokenResponse, expiry time.Time, asked []string) {
	g.AccessToken = secret(tr.AccessToken)
	g.TokenType = tr.TokenType
	g.Expiry = expiry
	if tr.RefreshToken != "" {
		g.RefreshToken = secret(tr.RefreshToken)
	}
	if tr.Scope != "" {
		g.Scopes = strings.Fields(tr.Scope)
	} else if asked != nil {
		g.Scopes = asked
	}
	if s := subjectOf(tr.IDToken); s != "" {
		g.Subject = s
	}
	g.Problem = ""
	g.WantScopes = nil
}

// clientCredentials gets and stores a token for a server configured with
// the client-credentials grant.
func (m *Manager) clientCredentials(ctx context.Context, srv Server, user string, d *discovery, scopes []string) (*grant, error) {
	set := srv.Settings
	c := client{
		ID: set.ClientID, Secret: secret(set.ClientSecret), Registration: RegistrationConfigured,
		AuthMethod: chooseAuthMethod(set.AuthMethod, true, d.ASM.TokenEndpointAuthMethodsSupported),
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	tr, expiry, err := clientCredentialsToken(ctx, m.hc, d.ASM.TokenEndpoint, c, scopes, d.Resource)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && (te.Code == "invalid_client" || te.Code == "unauthorized_client") {
			return nil, m.needsSignIn(srv, user, ReasonClientCredsRefused, nil, err)
		}
		return nil, &AuthServerError{Step: "requesting a client-credentials token for " + srv.Name, URL: d.ASM.TokenEndpoint, Err: err, Hint: "check that the authorization server is reachable and allows this client the client_credentials grant"}
	}
	g := &grant{
		Server: srv.Name, User: user, ServerURL: srv.URL, Kind: GrantClientCredentials,
		Resource: d.Resource, Issuer: d.ASM.Issuer, TokenEndpoint: d.ASM.TokenEndpoint,
		RevocationEndpoint: d.ASM.RevocationEndpoint, ClientID: c.ID, Registration: c.Registration,
		AuthMethod: c.AuthMethod, SignedInAt: m.opts.Now(), Subject: "client " + c.ID,
	}
	applyToken(g, tr, expiry, scopes)
	if err := m.store.saveGrant(g); err != nil {
		return nil, err
	}
	return g, nil
}

// probe sends the request an MCP client sends first, without a token, and
// returns the challenge of a 401 or 403 answer. A server that answers
// otherwise gives no challenge, and discovery goes by the well-known
// locations alone.
func (m *Manager) probe(ctx context.Context, serverURL string) (challenge, error) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"switchboard-auth","version":"1"}}}`
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL, bytes.NewReader([]byte(initialize)))
	if err != nil {
		return challenge{}, fmt.Errorf("the server URL %q: %w", serverURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := m.hc.Do(req)
	if err != nil {
		return challenge{}, fmt.Errorf("reaching the server to sign in: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return parseChallenge(resp.Header), nil
	case resp.StatusCode/100 == 2 && resp.Header.Get("Mcp-Session-Id") != "":
		// The server let us in without a token: end the session we opened.
		del, err := http.NewRequestWithContext(ctx, http.MethodDelete, serverURL, nil)
		if err == nil {
			del.Header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
			if r, err := m.hc.Do(del); err == nil {
				r.Body.Close()
			}
		}
	}
	return challenge{}, nil
}

// listen opens the loopback redirect listener: on the configured port, else
// on the port of the stored registration's redirect URI (so that it stays
// valid), else on any free port.
func (m *Manager) listen(srv Server, d *discovery) (net.Listener, error) {
	if p := srv.Settings.RedirectPort; p != 0 {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return nil, fmt.Errorf("listening for the sign-in redirect on 127.0.0.1:%d (oauth.redirect_port): %w; free the port or change the setting", p, err)
		}
		return l, nil
	}
	if srv.Settings.ClientID == "" {
		if reg, _ := m.store.loadRegistration(d.ASM.Issuer); reg != nil {
			for _, r := range reg.RedirectURIs {
				if u, err := url.Parse(r); err == nil && u.Hostname() == "127.0.0.1" {
					l, err := net.Listen("tcp", u.Host)
					if err == nil {
						return l, nil
					}
					m.log.Info("oauth: the registered redirect port is taken, registering again", logServer, srv.Name, logErr, err)
				}
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the sign-in redirect on 127.0.0.1: %w", err)
	}
	return l, nil
}

// callbackResult is what the redirect brought, and where to send the page
// the browser shows.
type callbackResult struct {
	code, iss string
	err       error
	reply     chan string
}

// callback serves the redirect URI: the first request is the sign-in's
// answer; later ones are told the sign-in is being completed.
type callback struct {
	state   string
	results chan callbackResult
	once    sync.Once
}

func newCallback(state string) *callback {
	return &callback{state: state, results: make(chan callbackResult, 1)}
}

func (cb *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != callbackPath {
		http.NotFound(w, r)
		return
	}
	first := false
	cb.once.Do(func() { first = true })
	if !first {
		writePage(w, http.StatusConflict, "This sign-in has already been answered. You can close this tab.")
		return
	}
	q := r.URL.Query()
	res := callbackResult{code: q.Get("code"), iss: q.Get("iss"), reply: make(chan string, 1)}
	switch {
	case q.Get("state") != cb.state:
		res.err = ErrStateMismatch
	case q.Get("error") != "":
		res.err = &RedirectError{Code: q.Get("error"), Description: q.Get("error_description")}
	case res.code == "":
		res.err = errors.New("the redirect carries neither a code nor an error: the authorization server's answer is malformed")
	}
	cb.results <- res
	status := http.StatusOK
	if res.err != nil {
		status = http.StatusBadRequest
	}
	select {
	case msg := <-res.reply:
		if strings.Contains(msg, "failed") {
			status = http.StatusBadRequest
		}
		writePage(w, status, msg)
	case <-r.Context().Done():
	}
}

func writePage(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>Switchboard sign-in</title><p>%s</p>\n", html.EscapeString(msg))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, " ")
}

// configuredClientHint says what to do when the authorization server
// refuses the client the configuration of srv names: the key that named
// it, the redirect URI the client must allow, and, when the server
// registers clients itself, that dropping the key lets Switchboard do so.
func configuredClientHint(srv Server, c client, redirectURI string, dynamic bool) string {
	key := "oauth.client_id"
	if c.Registration == RegistrationMetadataDocument {
		key = "oauth.client_metadata_url"
	}
	redirect := "the redirect URI " + redirectURI
	if srv.Settings.RedirectPort == 0 {
		redirect = "loopback redirect URIs http://127.0.0.1:PORT" + callbackPath + " on any port (or set oauth.redirect_port and register that one)"
	}
	hint := fmt.Sprintf("check %s of server %s against the client registered with the authorization server, and that the client allows %s", key, srv.Name, redirect)
	if dynamic {
		hint += fmt.Sprintf("; or remove %s to let Switchboard register itself", key)
	}
	return hint
}
