package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// HandlerOptions configure a Handler.
type HandlerOptions struct {
	// User is whose sign-in the handler uses, for servers signed in per
	// user; empty for the shared sign-in.
	User string
	// Interactive runs the sign-in when a server needs one (an ad hoc call
	// from a terminal), printing the URL to Out and opening the browser
	// unless NoBrowser. Without it, the handler fails with a
	// NeedsSignInError: a daemon never opens a browser by itself.
	Interactive bool
	Out         io.Writer
	NoBrowser   bool
}

// Handler authorizes the HTTP requests to one server with its stored
// sign-in. It implements the go-sdk's auth.OAuthHandler, for
// mcp.StreamableClientTransport.OAuthHandler, and wraps any HTTP transport
// with RoundTripper; use one or the other for a connection, not both.
type Handler struct {
	m    *Manager
	srv  Server
	opts HandlerOptions
	path string // of the grant in the store

	mu        sync.Mutex
	stepUps   []time.Time       // when the recent step-ups began
	forced    secret            // the last token obtained because the server rejected the one before
	needsAuth *NeedsSignInError // the last reason a request could not be authorized
}

var _ auth.OAuthHandler = (*Handler)(nil)

// Handler returns the handler for srv's connections (as opts.User).
func (m *Manager) Handler(srv Server, opts HandlerOptions) *Handler {
	return &Handler{m: m, srv: srv, opts: opts, path: m.store.grantPath(srv.Name, opts.User)}
}

// NeedsSignIn returns why the last request could not be authorized without
// a person, or nil once a token was had again. Upstream reads it to show
// the needs_auth state whatever the transport made of the error.
func (h *Handler) NeedsSignIn() *NeedsSignInError {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needsAuth
}

// fail records and returns a NeedsSignInError (or passes another error on).
func (h *Handler) fail(err error) error {
	if e, ok := AsNeedsSignIn(err); ok {
		h.mu.Lock()
		h.needsAuth = e
		h.mu.Unlock()
	}
	return err
}

func (h *Handler) ok() {
	h.mu.Lock()
	h.needsAuth = nil
	h.mu.Unlock()
}

// TokenSource returns the source of the server's access tokens, or nil
// when nothing is stored yet (the request then goes without a token, and
// the server's 401 leads to Authorize).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	g, err := h.m.store.loadGrantAt(h.path, false)
	if err != nil {
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, ReasonStoreUnreadable, nil, err))
	}
	if g == nil {
		// The request goes without a token; the 401 leads to Authorize,
		// which discovers the authorization server.
		return nil, nil
	}
	if g.ServerURL != h.srv.URL {
		// Tokens go only where they were obtained for.
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, ReasonResourceChanged, nil, nil))
	}
	if g.Problem != "" {
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, g.Problem, g.WantScopes, nil))
	}
	return tokenSource{h: h, ctx: context.WithoutCancel(ctx)}, nil
}

// tokenSource adapts Handler.token to oauth2.TokenSource.
type tokenSource struct {
	h   *Handler
	ctx context.Context
}

func (s tokenSource) Token() (*oauth2.Token, error) { return s.h.token(s.ctx) }

// token returns a valid access token: the stored one while it has more than
// the refresh leeway left, else a renewed one.
func (h *Handler) token(ctx context.Context) (*oauth2.Token, error) {
	g, err := h.m.store.loadGrantAt(h.path, false)
	if err != nil {
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, ReasonStoreUnreadable, nil, err))
	}
	if g == nil {
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, ReasonNotSignedIn, nil, nil))
	}
	if g.Problem != "" {
		return nil, h.fail(h.m.needsSignIn(h.srv, h.opts.User, g.Problem, g.WantScopes, nil))
	}
	if h.fresh(g) {
		h.ok() // a token is had again (a sign-in elsewhere stored it)
		return oauthToken(g), nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	g, err = h.m.renew(ctx, h.srv, h.opts.User, g.AccessToken)
	if err != nil {
		return nil, h.fail(err)
	}
	h.ok()
	return oauthToken(g), nil
}

// fresh reports whether g's access token has more than the leeway left.
func (h *Handler) fresh(g *grant) bool {
	if g.AccessToken == "" {
		return false
	}
	return g.Expiry.IsZero() || h.m.opts.Now().Add(h.m.opts.RefreshLeeway).Before(g.Expiry)
}

func oauthToken(g *grant) *oauth2.Token {
	typ := g.TokenType
	if typ == "" || strings.EqualFold(typ, "bearer") {
		typ = "Bearer"
	}
	return &oauth2.Token{AccessToken: string(g.AccessToken), TokenType: typ, Expiry: g.Expiry}
}

// renew gets a new access token for the grant whose token was seen: by
// refresh (rotating the refresh token when a new one comes), or for the
// client-credentials grant by asking again. It holds the grant's lock
// across processes, and returns the stored token when another process
// renewed it meanwhile.
func (m *Manager) renew(ctx context.Context, srv Server, user string, seen secret) (*grant, error) {
	key := srv.Name + "\x00" + user
	m.mu.Lock()
	mu, ok := m.refresh[key]
	if !ok {
		mu = new(sync.Mutex)
		m.refresh[key] = mu
	}
	m.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	unlock, err := m.store.lockGrant(srv.Name, user)
	if err != nil {
		return nil, fmt.Errorf("locking the sign-in of %s: %w", srv.Name, err)
	}
	defer unlock()

	g, err := m.store.loadGrant(srv.Name, user, true)
	if err != nil {
		return nil, m.needsSignIn(srv, user, ReasonStoreUnreadable, nil, err)
	}
	if g == nil {
		return nil, m.needsSignIn(srv, user, ReasonNotSignedIn, nil, nil)
	}
	if g.Problem != "" {
		return nil, m.needsSignIn(srv, user, g.Problem, g.WantScopes, nil)
	}
	if g.AccessToken != seen && g.AccessToken != "" {
		return g, nil // renewed by another caller while this one waited
	}
	if g.Kind == GrantClientCredentials {
		return m.renewClientCredentials(ctx, srv, user, g, nil)
	}
	if g.RefreshToken == "" {
		return nil, m.needsSignIn(srv, user, ReasonNoRefreshToken, nil, nil)
	}
	c, err := m.clientFor(srv, g)
	if err != nil {
		if e, ok := AsNeedsSignIn(err); ok {
			m.markProblem(g, e.Reason)
		}
		return nil, err
	}
	tr, expiry, err := refreshToken(ctx, m.hc, g.TokenEndpoint, c, string(g.RefreshToken), g.Resource, m.opts.Now())
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) {
			switch te.Code {
			case "invalid_grant":
				m.markProblem(g, ReasonRefreshRefused)
				m.log.Warn("oauth: refresh token refused", logServer, srv.Name, logUser, user, logIssuer, g.Issuer)
				return nil, m.needsSignIn(srv, user, ReasonRefreshRefused, nil, err)
			case "invalid_client", "unauthorized_client":
				if g.Registration == RegistrationDynamic {
					_ = m.store.deleteRegistration(g.Issuer)
				}
				m.markProblem(g, ReasonRegistrationGone)
				m.log.Warn("oauth: client registration refused", logServer, srv.Name, logUser, user, logIssuer, g.Issuer)
				return nil, m.needsSignIn(srv, user, ReasonRegistrationGone, nil, err)
			}
		}
		return nil, &AuthServerError{Step: "refreshing the access token of " + srv.Name, URL: g.TokenEndpoint, Err: err, Hint: "the authorization server may be down; the call can be retried"}
	}
	applyToken(g, tr, expiry, nil)
	g.RefreshedAt = m.opts.Now()
	if err := m.store.saveGrant(g); err != nil {
		return nil, err
	}
	return g, nil
}

// renewClientCredentials asks for a new client-credentials token, with
// more scopes when a step-up named them.
func (m *Manager) renewClientCredentials(ctx context.Context, srv Server, user string, g *grant, more []string) (*grant, error) {
	scopes := unionScopes(g.Scopes, more)
	if len(scopes) == 0 {
		scopes = srv.Settings.Scopes
	}
	c := client{ID: srv.Settings.ClientID, Secret: secret(srv.Settings.ClientSecret), AuthMethod: g.AuthMethod, Registration: RegistrationConfigured}
	tr, expiry, err := clientCredentialsToken(ctx, m.hc, g.TokenEndpoint, c, scopes, g.Resource)
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) && (te.Code == "invalid_client" || te.Code == "unauthorized_client") {
			return nil, m.needsSignIn(srv, user, ReasonClientCredsRefused, nil, err)
		}
		return nil, &AuthServerError{Step: "requesting a client-credentials token for " + srv.Name, URL: g.TokenEndpoint, Err: err, Hint: "the authorization server may be down; the call can be retried"}
	}
	applyToken(g, tr, expiry, scopes)
	g.RefreshedAt = m.opts.Now()
	if err := m.store.saveGrant(g); err != nil {
		return nil, err
	}
	return g, nil
}

// markProblem stores why g no longer works, so that every process reports
// needs_auth at once rather than trying the dead token again.
func (m *Manager) markProblem(g *grant, reason string) {
	g.Problem = reason
	if err := m.store.saveGrant(g); err != nil {
		m.log.Warn("oauth: storing a sign-in problem", logServer, g.Server, logErr, err)
	}
}

// Authorize handles a 401 or 403 answer: it renews a rejected token, steps
// up on 403 insufficient_scope, gets client-credentials tokens, and runs
// the sign-in when the handler is interactive. Otherwise it returns a
// NeedsSignInError. It closes resp's body.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	ch := parseChallenge(resp.Header)
	if resp.StatusCode == http.StatusForbidden {
		if ch.Error != "insufficient_scope" {
			return nil // not ours: the retried request's 403 reaches the caller
		}
		return h.fail(h.stepUp(ctx, ch))
	}
	sent := secret(strings.TrimSpace(strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")))
	g, err := h.m.store.loadGrantAt(h.path, true)
	if err != nil {
		return h.fail(h.m.needsSignIn(h.srv, h.opts.User, ReasonStoreUnreadable, nil, err))
	}
	if h.srv.Settings.grant() == GrantClientCredentials {
		return h.fail(h.clientCredentials(ctx, g, ch))
	}
	if g != nil && g.ServerURL == h.srv.URL && g.Problem == "" && sent != "" {
		h.mu.Lock()
		again := sent == h.forced
		h.mu.Unlock()
		if !again {
			// The server refused a token it should take (revoked, or expired
			// early): renew it once.
			ng, err := h.m.renew(ctx, h.srv, h.opts.User, sent)
			if err == nil {
				h.mu.Lock()
				h.forced = ng.AccessToken
				h.mu.Unlock()
				h.ok()
				return nil
			}
			if _, ok := AsNeedsSignIn(err); !ok || !h.opts.Interactive {
				return h.fail(err)
			}
		}
	}
	if h.opts.Interactive {
		if _, err := h.m.login(ctx, h.srv, LoginOptions{User: h.opts.User, Out: h.opts.Out, NoBrowser: h.opts.NoBrowser}, &ch); err != nil {
			return err
		}
		h.ok()
		return nil
	}
	reason := ReasonNotSignedIn
	switch {
	case g != nil && g.Problem != "":
		reason = g.Problem
	case g != nil && g.ServerURL != h.srv.URL:
		reason = ReasonResourceChanged
	case g != nil:
		reason = ReasonTokenRejected
	}
	return h.fail(h.m.needsSignIn(h.srv, h.opts.User, reason, nil, nil))
}

// clientCredentials gets a token for the client itself after a 401.
func (h *Handler) clientCredentials(ctx context.Context, g *grant, ch challenge) error {
	if g != nil && g.ServerURL == h.srv.URL && g.TokenEndpoint != "" {
		_, err := h.m.renewClientCredentials(ctx, h.srv, h.opts.User, g, ch.Scopes)
		if err == nil {
			h.ok()
		}
		return err
	}
	d, err := discover(ctx, h.m.hc, h.srv.URL, ch, h.srv.Settings.Issuer)
	if err != nil {
		return err
	}
	scopes := selectScopes(h.srv.Settings.Scopes, ch.Scopes, d.ResourceScopes, nil, nil, nil, false)
	if _, err := h.m.clientCredentials(ctx, h.srv, h.opts.User, d, scopes); err != nil {
		return err
	}
	h.ok()
	return nil
}

// stepUpWindow is the span in which at most MaxStepUps step-ups are made.
const stepUpWindow = 10 * time.Minute

// stepUp answers 403 insufficient_scope: it asks for the granted scopes
// plus the challenged ones, at most MaxStepUps times within stepUpWindow
// per handler, and never for scopes already granted (the server would
// refuse again).
func (h *Handler) stepUp(ctx context.Context, ch challenge) error {
	g, err := h.m.store.loadGrantAt(h.path, true)
	if err != nil {
		return h.m.needsSignIn(h.srv, h.opts.User, ReasonStoreUnreadable, nil, err)
	}
	var granted []string
	if g != nil {
		granted = g.Scopes
	}
	if len(ch.Scopes) == 0 {
		return &InsufficientScopeError{Server: h.srv.Name, Reason: "the server's 403 insufficient_scope names no scope to ask for"}
	}
	if !slices.ContainsFunc(ch.Scopes, func(s string) bool { return !slices.Contains(granted, s) }) {
		return &InsufficientScopeError{Server: h.srv.Name, Scopes: ch.Scopes, Reason: "those scopes were already granted and the server still refuses; the account may lack the permission"}
	}
	now := h.m.opts.Now()
	h.mu.Lock()
	h.stepUps = slices.DeleteFunc(h.stepUps, func(t time.Time) bool { return now.Sub(t) > stepUpWindow })
	n := len(h.stepUps)
	if n < h.m.opts.MaxStepUps {
		h.stepUps = append(h.stepUps, now)
	}
	h.mu.Unlock()
	if n >= h.m.opts.MaxStepUps {
		return &InsufficientScopeError{Server: h.srv.Name, Scopes: ch.Scopes, Reason: fmt.Sprintf("gave up after %d step-up authorizations within %v", h.m.opts.MaxStepUps, stepUpWindow)}
	}
	if h.srv.Settings.grant() == GrantClientCredentials {
		return h.clientCredentials(ctx, g, ch)
	}
	if h.opts.Interactive {
		if _, err := h.m.login(ctx, h.srv, LoginOptions{User: h.opts.User, Out: h.opts.Out, NoBrowser: h.opts.NoBrowser}, &ch); err != nil {
			return err
		}
		h.ok()
		return nil
	}
	if g != nil {
		g.WantScopes = unionScopes(g.WantScopes, ch.Scopes)
		if err := h.m.store.saveGrant(g); err != nil {
			return err
		}
	}
	return h.m.needsSignIn(h.srv, h.opts.User, ReasonMoreScopes, ch.Scopes, nil)
}

// RoundTripper returns base wrapped so that each request carries the
// server's access token, and a 401 or 403 insufficient_scope answer is
// handled by Authorize and the request sent once more (when its body can
// be replayed). Use it for transports without an OAuthHandler field (SSE,
// WebSocket) or for every HTTP transport alike; nil base is
// http.DefaultTransport.
func (h *Handler) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{h: h, base: base}
}

type roundTripper struct {
	h    *Handler
	base http.RoundTripper
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r, err := rt.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if !needsAuthorize(resp) || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return resp, nil
	}
	if err := rt.h.Authorize(req.Context(), r, resp); err != nil {
		return nil, err
	}
	retry, err := rt.authorized(req)
	if err != nil {
		return nil, err
	}
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return rt.base.RoundTrip(retry)
}

// authorized returns a copy of req carrying the current access token.
func (rt *roundTripper) authorized(req *http.Request) (*http.Request, error) {
	ts, err := rt.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	if ts == nil {
		return r, nil
	}
	tok, err := ts.Token()
	if err != nil {
		return nil, err
	}
	tok.SetAuthHeader(r)
	return r, nil
}

// CloseIdleConnections passes on to the wrapped transport.
func (rt *roundTripper) CloseIdleConnections() {
	if c, ok := rt.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// needsAuthorize reports whether resp is one Authorize handles.
func needsAuthorize(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return parseChallenge(resp.Header).Error == "insufficient_scope"
	}
	return false
}
