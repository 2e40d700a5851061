package upstream

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// Auth authorizes the HTTP requests of one network server with its OAuth
// sign-in, kept by an oauth.Manager: the access token on every request,
// refreshed before it expires, and a 401 or 403 insufficient_scope
// answered by renewing or stepping up. A server with an oauth: block goes
// through it from the first request; any other from the first 401 that
// carries a Bearer challenge (WWW-Authenticate), which is how an OAuth
// server says so. It never runs a sign-in itself: a request that cannot be
// authorized without a person fails with the command to run, and the
// server shows needs_auth (the CLI signs in around a connection attempt,
// where a person has more time than a connect timeout). For a server with
// auth: per_user, each request made for a user (see [WithIdentity])
// carries that user's token, and one made for nobody (the connection's
// own: initialize, listings, pings) the shared sign-in's.
type Auth struct {
	m       *oauth.Manager
	srv     oauth.Server
	always  bool // the server has an oauth: block
	perUser bool
	found   atomic.Bool // a Bearer challenge was seen

	mu       sync.Mutex
	handlers map[string]*oauth.Handler // by user; "" is the shared sign-in
}

// NewAuth returns the authorizer of srv's requests, or nil for a server
// that has no HTTP requests to authorize (stdio) or when m is nil.
func NewAuth(m *oauth.Manager, srv config.Server) *Auth {
	if m == nil || srv.Transport == config.TransportStdio || srv.Transport == "" {
		return nil
	}
	if srv.OAuth == nil && hasAuthorizationHeader(srv) {
		// A configured Authorization header is the server's credential:
		// its 401 means that key is wrong, not that someone must sign in.
		return nil
	}
	return &Auth{
		m: m, srv: OAuthServer(srv), always: srv.OAuth != nil, perUser: srv.Auth == config.AuthPerUser,
		handlers: map[string]*oauth.Handler{},
	}
}

func hasAuthorizationHeader(srv config.Server) bool {
	for k := range srv.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// OAuthServer is a configured server as the oauth package knows it. A
// WebSocket server is known by the HTTP URL of its handshake (ws: as
// http:, wss: as https:): that is the request the token goes on, where
// the sign-in probes and discovers, and the resource a protected resource
// metadata document names (RFC 9728 resources are http(s) URLs).
func OAuthServer(srv config.Server) oauth.Server {
	out := oauth.Server{Name: srv.Name, URL: handshakeURL(srv.URL)}
	if o := srv.OAuth; o != nil {
		out.Settings = oauth.Settings{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
			Scopes: o.Scopes, RedirectPort: o.RedirectPort, Grant: oauth.Grant(o.Grant),
			Issuer: o.Issuer, AuthMethod: o.TokenAuthMethod,
		}
	}
	return out
}

// handshakeURL returns a ws: or wss: URL as the http: or https: URL of
// its handshake, and any other URL unchanged.
func handshakeURL(u string) string {
	switch {
	case len(u) > 5 && strings.EqualFold(u[:5], "ws://"):
		return "http://" + u[5:]
	case len(u) > 6 && strings.EqualFold(u[:6], "wss://"):
		return "https://" + u[6:]
	}
	return u
}

// handler returns the handler of user's sign-in ("" for the shared one).
func (a *Auth) handler(user string) *oauth.Handler {
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.handlers[user]
	if !ok {
		h = a.m.Handler(a.srv, oauth.HandlerOptions{User: user})
		a.handlers[user] = h
	}
	return h
}

// NeedsSignIn says why the connection's own requests cannot be authorized
// without a person (the shared sign-in's last failure), or nil.
func (a *Auth) NeedsSignIn() *oauth.NeedsSignInError {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	h := a.handlers[""]
	a.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.NeedsSignIn()
}

// stamp identifies the shared sign-in as stored now; it changes when a
// sign-in, refresh or logout rewrites it, in any process.
func (a *Auth) stamp() string { return a.m.Stamp(a.srv.Name, "") }

// wrap returns base with the server's requests authorized.
func (a *Auth) wrap(base http.RoundTripper) http.RoundTripper {
	if a == nil {
		return base
	}
	return &authTransport{a: a, base: base, rts: map[string]http.RoundTripper{}}
}

// authTransport is Auth's http.RoundTripper over one connection's pool.
type authTransport struct {
	a    *Auth
	base http.RoundTripper

	mu  sync.Mutex
	rts map[string]http.RoundTripper // the handlers' round trippers, by user
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	a := t.a
	if !a.always && !a.found.Load() {
		resp, err := t.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusUnauthorized || !bearerChallenge(resp.Header) {
			return resp, err
		}
		// An OAuth server: from now on every request goes through the
		// sign-in, this one again.
		a.found.Store(true)
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return resp, nil
			}
			body, err := req.GetBody()
			if err != nil {
				return resp, nil
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
	}
	user := ""
	if a.perUser {
		if id, ok := IdentityFrom(req.Context()); ok {
			user = id.User
		}
	}
	resp, err := t.roundTripper(user).RoundTrip(req)
	if err != nil {
		return nil, authFault(err)
	}
	return resp, nil
}

func (t *authTransport) roundTripper(user string) http.RoundTripper {
	t.mu.Lock()
	defer t.mu.Unlock()
	rt, ok := t.rts[user]
	if !ok {
		rt = t.a.handler(user).RoundTripper(t.base)
		t.rts[user] = rt
	}
	return rt
}

// CloseIdleConnections passes on to the wrapped transport.
func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// authFault makes a sign-in failure an authentication error that says
// what to run; other errors pass unchanged.
func authFault(err error) error {
	if e, ok := oauth.AsNeedsSignIn(err); ok {
		fe := fault.Wrap(fault.Authentication, err, "%s", e.Error()).
			WithSuggestions("run: "+e.Command()).WithDetail("server", e.Server)
		if e.User != "" {
			fe.WithDetail("user", e.User)
		}
		return fe
	}
	var se *oauth.InsufficientScopeError
	if errors.As(err, &se) {
		return fault.Wrap(fault.Authorization, err, "%s", se.Error()).WithDetail("server", se.Server)
	}
	return err
}

// bearerChallenge reports whether a 401's WWW-Authenticate asks for a
// Bearer token: the sign of an OAuth-protected server.
func bearerChallenge(h http.Header) bool {
	for _, v := range h.Values("WWW-Authenticate") {
		if len(v) >= 6 && strings.EqualFold(v[:6], "bearer") {
			return true
		}
	}
	return false
}

// wsClientFor is the HTTP client of a WebSocket handshake: nil (the
// default client) unless the server's requests are authorized.
func wsClientFor(a *Auth) *http.Client {
	if a == nil {
		return nil
	}
	return &http.Client{Transport: a.wrap(http.DefaultTransport)}
}
