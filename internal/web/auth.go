package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Session limits.
const (
	// CookieName is the console's session cookie. It holds a random
	// session id; the identity it maps to stays in the daemon's memory.
	CookieName = "switchboard_console"
	// SessionIdle ends a session unused this long.
	SessionIdle = 8 * time.Hour
	// SessionMax ends a session this long after it started.
	SessionMax = 24 * time.Hour
	// maxSessions bounds the sessions held; the least recently used
	// anonymous one goes first.
	maxSessions = 4096
	// maxLoginFailures is how many failed logins the console takes from
	// one address in loginWindow before it refuses that address's logins
	// until the window ends.
	maxLoginFailures = 20
	loginWindow      = time.Minute
	// CSRFHeader carries the session's CSRF token on API requests; HTML
	// forms send it as the field "csrf".
	CSRFHeader = "X-CSRF-Token"
)

// session is one browser's session.
type session struct {
	id   string
	csrf string
	// authed marks a session that logged in with a gateway token; token
	// and fingerprint name it, so that a reload that removes or changes
	// the token ends the session.
	authed      bool
	token       string
	fingerprint string
	user        string
	created     time.Time
	seen        time.Time
	// stored marks a session kept in the store; written is when its
	// last use was last written there.
	stored  bool
	written time.Time
	// bearer marks a request that presented a gateway token in its
	// Authorization header (a script): it has no cookie and no CSRF.
	bearer bool
}

// sessions holds the sessions: in memory, as a cache, and in the store
// when the console has one, so that they survive a restart and every
// replica on the same database knows them.
type sessions struct {
	now  func() time.Time
	db   store.SessionStore // nil: memory only
	log  func(msg string, err error)
	mu   sync.Mutex
	byID map[string]*session
}

// touchEvery is how often a session's last use is written to the store;
// between writes it is kept in memory.
const touchEvery = time.Minute

func newSessions(now func() time.Time, db store.SessionStore, log func(string, error)) *sessions {
	if log == nil {
		log = func(string, error) {}
	}
	return &sessions{now: now, db: db, log: log, byID: map[string]*session{}}
}

// randomToken returns 32 random bytes, base64url-encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func (se *session) expired(now time.Time) bool {
	return now.Sub(se.seen) > SessionIdle || now.Sub(se.created) > SessionMax
}

// get returns a copy of a live session and marks it used. A session not
// in memory is looked up in the store (a restart, or another replica
// started it).
func (s *sessions) get(ctx context.Context, id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	now := s.now()
	s.mu.Lock()
	se, ok := s.byID[id]
	s.mu.Unlock()
	if !ok {
		if s.db == nil {
			return session{}, false
		}
		cs, err := s.db.ConsoleSession(ctx, id)
		if err != nil {
			if fault.KindOf(err) != fault.NotFound {
				s.log("reading a console session from the store", err)
			}
			return session{}, false
		}
		se = &session{id: id, csrf: cs.CSRF, authed: cs.Authed, token: cs.Token, fingerprint: cs.Fingerprint,
			user: cs.User, created: cs.Created, seen: cs.Seen, stored: true, written: cs.Seen}
		s.mu.Lock()
		if cur, ok := s.byID[id]; ok {
			se = cur
		} else {
			if len(s.byID) >= maxSessions {
				s.evictLocked()
			}
			s.byID[id] = se
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	if se.expired(now) {
		delete(s.byID, id)
		s.mu.Unlock()
		if se.stored {
			s.forget(ctx, id)
		}
		return session{}, false
	}
	se.seen = now
	touch := se.stored && now.Sub(se.written) >= touchEvery
	if touch {
		se.written = now
	}
	out := *se
	s.mu.Unlock()
	if touch {
		// The write also re-checks the store: a session logged out or
		// expired on another replica ends here too.
		if err := s.db.TouchConsoleSession(ctx, id, now); err != nil {
			if fault.KindOf(err) == fault.NotFound {
				s.mu.Lock()
				delete(s.byID, id)
				s.mu.Unlock()
				return session{}, false
			}
			s.log("marking a console session used", err)
		}
	}
	return out, true
}

// create starts a session; tok is nil for an anonymous one. A session is
// stored when persist is set (and the console has a store).
func (s *sessions) create(ctx context.Context, tok *config.Token, persist bool) session {
	if tok == nil {
		return s.start(ctx, nil, persist)
	}
	return s.start(ctx, &sessionOwner{name: tok.Name, fingerprint: fingerprint(*tok), user: tok.User}, persist)
}

// sessionOwner is who a logged-in session is for: a gateway token (its
// name and fingerprint) or a sign-in at the authorization server
// (oidc.go).
type sessionOwner struct {
	name, fingerprint, user string
}

// start starts a session for owner, nil for an anonymous one.
func (s *sessions) start(ctx context.Context, owner *sessionOwner, persist bool) session {
	now := s.now()
	se := &session{id: randomToken(), csrf: randomToken(), created: now, seen: now, written: now}
	if owner != nil {
		se.authed, se.token, se.fingerprint, se.user = true, owner.name, owner.fingerprint, owner.user
	}
	if persist && s.db != nil {
		err := s.db.SaveConsoleSession(ctx, store.ConsoleSession{ID: se.id, CSRF: se.csrf, Authed: se.authed,
			Token: se.token, Fingerprint: se.fingerprint, User: se.user, Created: now, Seen: now})
		if err != nil {
			s.log("saving a console session; it lasts until the daemon stops", err)
		} else {
			se.stored = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= maxSessions {
		s.evictLocked()
	}
	s.byID[se.id] = se
	return *se
}

// evictLocked drops the least recently used session from memory,
// anonymous ones first. A stored session stays in the store.
func (s *sessions) evictLocked() {
	var victim *session
	for _, se := range s.byID {
		switch {
		case victim == nil,
			victim.authed && !se.authed,
			victim.authed == se.authed && se.seen.Before(victim.seen):
			victim = se
		}
	}
	if victim != nil {
		delete(s.byID, victim.id)
	}
}

// delete ends a session, here and in the store.
func (s *sessions) delete(ctx context.Context, id string) {
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
	s.forget(ctx, id)
}

func (s *sessions) forget(ctx context.Context, id string) {
	if s.db == nil {
		return
	}
	if err := s.db.DeleteConsoleSession(ctx, id); err != nil {
		s.log("deleting a console session", err)
	}
}

// expire drops the sessions past their limits, here and in the store.
func (s *sessions) expire(ctx context.Context) {
	now := s.now()
	s.mu.Lock()
	for id, se := range s.byID {
		if se.expired(now) {
			delete(s.byID, id)
		}
	}
	s.mu.Unlock()
	if s.db != nil {
		if _, err := s.db.ExpireConsoleSessions(ctx, now.Add(-SessionIdle), now.Add(-SessionMax)); err != nil {
			s.log("expiring console sessions", err)
		}
	}
}

// loginLimiter counts failed logins per client address in fixed windows,
// so that guessing tokens through the form is slow for the guesser, while
// everyone else (another address) still logs in. It holds at most
// maxLoginAddresses windows: past that, addresses whose window ended are
// forgotten, and while every one is still active the new ones share one
// window (an attacker with that many addresses slows only such newcomers).
type loginLimiter struct {
	mu      sync.Mutex
	windows map[string]*loginWindowCount
}

type loginWindowCount struct {
	start    time.Time
	failures int
}

// maxLoginAddresses bounds the addresses the login limiter remembers.
const maxLoginAddresses = 4096

// sharedLoginKey is the window of addresses beyond maxLoginAddresses.
const sharedLoginKey = "(others)"

// window returns the current window of addr; l.mu is held.
func (l *loginLimiter) window(addr string, now time.Time) *loginWindowCount {
	if l.windows == nil {
		l.windows = map[string]*loginWindowCount{}
	}
	w, ok := l.windows[addr]
	if !ok && len(l.windows) >= maxLoginAddresses {
		for k, v := range l.windows {
			if now.Sub(v.start) >= loginWindow {
				delete(l.windows, k)
			}
		}
		if len(l.windows) >= maxLoginAddresses {
			addr = sharedLoginKey
			w, ok = l.windows[addr]
		}
	}
	if !ok {
		w = &loginWindowCount{start: now}
		l.windows[addr] = w
	}
	if now.Sub(w.start) >= loginWindow {
		w.start, w.failures = now, 0
	}
	return w
}

// allow reports whether a login from addr may be tried now.
func (l *loginLimiter) allow(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.window(addr, now).failures < maxLoginFailures
}

// failed counts a failed login from addr.
func (l *loginLimiter) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.window(addr, now).failures++
}

// clientAddress is the address a request came from, without its port:
// the peer of the connection (a header such as X-Forwarded-For is not
// trusted; behind a proxy every client shares the proxy's address).
func clientAddress(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// fingerprint identifies a token's secret without holding it: its
// SHA-256, as configured or computed.
func fingerprint(t config.Token) string {
	if t.SHA256 != "" {
		return strings.ToLower(t.SHA256)
	}
	d := sha256.Sum256([]byte(t.Secret))
	return hex.EncodeToString(d[:])
}

// loggedIn reports whether a session may use the console under cfg: any
// session when neither tokens nor OAuth are configured, otherwise one that
// logged in with a token that is still configured, unchanged, or signed in
// at the authorization server while the console still signs in there
// (gateway.oauth.console, oidc.go).
func loggedIn(se session, cfg *config.Config) bool {
	tokens := cfg.Gateway.Tokens
	if !cfg.Gateway.AuthRequired() {
		return true
	}
	if !se.authed {
		return false
	}
	if oidcLoggedIn(se, cfg) {
		return true
	}
	for _, t := range tokens {
		if t.Name == se.token && t.User == se.user && fingerprint(t) == se.fingerprint {
			return t.AllowsEveryView()
		}
	}
	return false
}

// narrowToken is the refusal of a gateway token that may use only some
// views: the console calls any tool of every server, stops all calls and
// edits the configuration, so it takes a token that may use every view.
func narrowToken(t config.Token) *fault.Error {
	return fault.New(fault.Authorization, "token %s may use only the views %s; the console reaches every server's tools and the configuration, so it takes a token that may use every view",
		tokenLabel(t), strings.Join(t.Views, ", ")).
		WithSuggestions(`use a token of gateway.tokens with views: ["*"] (or no views), or connect an MCP client to the token's views at /mcp/VIEW`)
}

// tokenLabel names a token in a message: its name (tokens[N] when the
// file gives none) and its user.
func tokenLabel(t config.Token) string {
	if t.Name == "" {
		return fmt.Sprintf("of user %q", t.User)
	}
	return fmt.Sprintf("%q of user %q", t.Name, t.User)
}

type sessionKey struct{}

// sessionOf returns the request's session (set by authed or login).
func sessionOf(r *http.Request) session {
	se, _ := r.Context().Value(sessionKey{}).(session)
	return se
}

// session returns the request's session, starting an anonymous one (and
// setting its cookie) when it has none.
func (c *Console) session(w http.ResponseWriter, r *http.Request) session {
	if ck, err := r.Cookie(CookieName); err == nil {
		if se, ok := c.sessions.get(r.Context(), ck.Value); ok {
			return se
		}
	}
	// Anonymous sessions are stored only when no tokens are configured
	// (loopback): with tokens, anyone can start one at the login page,
	// and the store is not for strangers to fill.
	se := c.sessions.create(r.Context(), nil, !c.opts.Config().Gateway.AuthRequired())
	setCookie(w, r, se.id)
	return se
}

// setCookie sets the session cookie: HttpOnly, SameSite=Strict, Secure
// when the request came over TLS.
func setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: int(SessionMax / time.Second),
	})
}

// authed wraps a console handler: it finds or starts the session, asks
// for a login when tokens are configured (a redirect for pages, 401 for
// the API), and checks the CSRF token on every request that changes
// something.
func (c *Console) authed(h http.HandlerFunc, api bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api && r.Header.Get("Authorization") != "" {
			se, ok, narrow := c.bearer(r)
			if narrow != nil {
				c.opts.Audit.Record(audit.Event{Event: audit.TokenRefused, Outcome: audit.Denied, Actor: audit.Actor{Via: audit.ViaConsole, Remote: r.RemoteAddr}, Reason: narrow.Message})
				writeFault(w, http.StatusForbidden, narrow)
				return
			}
			if !ok && c.opts.OAuth != nil {
				if id, refusal := c.opts.OAuth(r); refusal != nil {
					c.opts.Audit.Record(audit.Event{Event: audit.TokenRefused, Outcome: audit.Denied, Actor: audit.Actor{Via: audit.ViaConsole, Token: oauthToken, Remote: r.RemoteAddr}, Reason: refusal.Error()})
					refusal.Write(w)
					return
				} else if id != nil {
					if views, all := id.Views(); !all {
						narrow := fault.New(fault.Authorization, "the access token's user %q may use only the views %s; the console reaches every server's tools and the configuration, so it takes a user who may use every view", id.User, strings.Join(views, ", ")).
							WithSuggestions(`grant the user every view ("*" in gateway.oauth.views or group_views), or connect an MCP client to the user's views at /mcp/VIEW`)
						c.opts.Audit.Record(audit.Event{Event: audit.TokenRefused, Outcome: audit.Denied, Actor: audit.Actor{User: id.User, Via: audit.ViaConsole, Token: oauthToken, Remote: r.RemoteAddr}, Reason: narrow.Message})
						writeFault(w, http.StatusForbidden, narrow)
						return
					}
					se, ok = session{id: "bearer:" + oauthToken + ":" + id.User, authed: true, bearer: true, token: oauthToken, user: id.User}, true
				}
			}
			if !ok {
				c.opts.Audit.Record(audit.Event{Event: audit.TokenRefused, Outcome: audit.Denied, Actor: audit.Actor{Via: audit.ViaConsole, Remote: r.RemoteAddr}, Reason: "the bearer token is not one of the gateway's tokens"})
				writeFault(w, http.StatusUnauthorized, fault.New(fault.Authentication, "the bearer token in the Authorization header is not one of the gateway's tokens").
					WithSuggestions("send Authorization: Bearer TOKEN with a token from gateway.tokens (with no tokens configured, send no Authorization header and use the console's session cookie and CSRF token)"))
				return
			}
			h(w, r.WithContext(context.WithValue(consoleActor(r, se), sessionKey{}, se)))
			return
		}
		se := c.session(w, r)
		if !loggedIn(se, c.opts.Config()) {
			if api || r.Method != http.MethodGet {
				writeFault(w, http.StatusUnauthorized, fault.New(fault.Authentication, "log in to use the console").
					WithSuggestions("open "+Prefix+"login and enter one of the gateway's tokens"))
				return
			}
			http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !csrfOK(se, r) {
			writeFault(w, http.StatusForbidden, fault.New(fault.Authorization, "this change was refused: the CSRF token is missing or wrong").
				WithSuggestions("reload the page and try again"))
			return
		}
		h(w, r.WithContext(context.WithValue(consoleActor(r, se), sessionKey{}, se)))
	})
}

// consoleActor returns the request's context carrying its session's user
// as the actor of what it asks for (the audit trail).
func consoleActor(r *http.Request, se session) context.Context {
	return audit.WithActor(r.Context(), audit.Actor{User: se.user, Via: audit.ViaConsole, Token: se.token, Remote: r.RemoteAddr})
}

// oauthToken names the callers of the API with an OAuth access token
// where a token's name is shown, as the gateway does.
const oauthToken = "oauth"

// bearer checks a request's "Authorization: Bearer TOKEN" against the
// gateway's tokens, with the gateway's own constant-time check. A script
// that sends one needs no cookie and no CSRF token (a browser never adds
// the header by itself). Without configured tokens no bearer is accepted.
// A token that matches but may use only some views is refused: narrow is
// that refusal.
func (c *Console) bearer(r *http.Request) (se session, ok bool, narrow *fault.Error) {
	scheme, presented, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	presented = strings.TrimSpace(presented)
	if !ok || !strings.EqualFold(scheme, "Bearer") || presented == "" {
		return session{}, false, nil
	}
	for _, t := range c.opts.Config().Gateway.Tokens {
		if t.Matches(presented) {
			if !t.AllowsEveryView() {
				return session{}, false, narrowToken(t)
			}
			// A per-request id: calls it starts belong to this token.
			return session{id: "bearer:" + t.Name, authed: true, bearer: true,
				token: t.Name, fingerprint: fingerprint(t), user: t.User}, true, nil
		}
	}
	return session{}, false, nil
}

// csrfOK reports whether a request carries its session's CSRF token, in
// the X-CSRF-Token header or the form field "csrf".
func csrfOK(se session, r *http.Request) bool {
	got := r.Header.Get(CSRFHeader)
	if got == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.Body = http.MaxBytesReader(nil, r.Body, 1<<20)
		got = r.PostFormValue("csrf")
	}
	return got != "" && se.csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(se.csrf)) == 1
}

// safeNext returns a local path to go to after logging in: only paths on
// this host, never another site ("//host", "/\host").
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return next
}

// loginData is the login page's data.
type loginData struct {
	pageData
	Next  string
	Error string
	// Tokens is set when gateway tokens are configured (the token form).
	Tokens bool
	// SignInURL starts a sign-in at the authorization server, when the
	// console signs in there (oidc.go); Provider names it.
	SignInURL, Provider string
}

// loginPageData is the login page's data for a page to go on to and an
// error to show.
func (c *Console) loginPageData(next, errMsg string) *loginData {
	cfg := c.opts.Config()
	d := &loginData{Next: next, Error: errMsg, Tokens: len(cfg.Gateway.Tokens) > 0, SignInURL: oidcStartURL(cfg, next)}
	if d.SignInURL != "" {
		d.Provider = cfg.Gateway.OAuth.Issuer
		if u, err := url.Parse(d.Provider); err == nil && u.Host != "" {
			d.Provider = u.Host
		}
	}
	return d
}

// loginPage shows the login form, or goes on when no login is needed.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	se := c.session(w, r)
	next := safeNext(r.URL.Query().Get("next"))
	if loggedIn(se, c.opts.Config()) {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.render(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, se)), http.StatusOK, "login", c.loginPageData(next, ""))
}

// login checks a token and, when one matches, replaces the session with a
// logged-in one (a new id, so that a session id planted before the login
// is worth nothing).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	se := c.session(w, r)
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, se))
	if !csrfOK(se, r) {
		writeFault(w, http.StatusForbidden, fault.New(fault.Authorization, "this login was refused: the CSRF token is missing or wrong").
			WithSuggestions("reload the login page and try again"))
		return
	}
	next := safeNext(r.PostFormValue("next"))
	cfg := c.opts.Config()
	if !cfg.Gateway.AuthRequired() {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	addr := clientAddress(r)
	if !c.logins.allow(addr, c.now()) {
		c.logger.Warn("console login refused: too many failed logins", "address", addr)
		c.opts.Audit.Record(audit.Event{Event: audit.ConsoleLogin, Outcome: audit.Failed, Actor: audit.Actor{Via: audit.ViaConsole, Remote: r.RemoteAddr}, Reason: "too many failed logins from this address"})
		writeFault(w, http.StatusTooManyRequests, fault.New(fault.LimitExceeded, "too many failed logins from this address; logins from it are refused for up to a minute").
			WithSuggestions("wait a minute, then log in with a valid token"))
		return
	}
	presented := strings.TrimSpace(r.PostFormValue("token"))
	for _, t := range cfg.Gateway.Tokens {
		if presented != "" && t.Matches(presented) {
			if !t.AllowsEveryView() {
				narrow := narrowToken(t)
				c.logger.Warn("console login refused: the token may use only some views", "token", t.Name, "user", t.User)
				c.opts.Audit.Record(audit.Event{Event: audit.ConsoleLogin, Outcome: audit.Denied, Actor: audit.Actor{User: t.User, Via: audit.ViaConsole, Token: t.Name, Remote: r.RemoteAddr}, Reason: narrow.Message})
				c.render(w, r, http.StatusForbidden, "login", c.loginPageData(next, "That token may use only the views "+strings.Join(t.Views, ", ")+
					"; the console reaches every server's tools and the configuration, so it takes a token that may use every view (views: [\"*\"] or none)."))
				return
			}
			c.sessions.delete(r.Context(), se.id)
			ns := c.sessions.create(r.Context(), &t, true)
			setCookie(w, r, ns.id)
			c.logger.Info("console login", "token", t.Name, "user", t.User)
			c.opts.Audit.Record(audit.Event{Event: audit.ConsoleLogin, Outcome: audit.OK, Actor: audit.Actor{User: t.User, Via: audit.ViaConsole, Token: t.Name, Remote: r.RemoteAddr}})
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	c.logins.failed(addr, c.now())
	c.logger.Warn("console login refused", "address", addr)
	c.opts.Audit.Record(audit.Event{Event: audit.ConsoleLogin, Outcome: audit.Failed, Actor: audit.Actor{Via: audit.ViaConsole, Remote: r.RemoteAddr}, Reason: "the token is not one of gateway.tokens"})
	c.render(w, r, http.StatusUnauthorized, "login", c.loginPageData(next, "That token is not valid. Use one of the tokens in gateway.tokens."))
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	c.sessions.delete(r.Context(), sessionOf(r).id)
	c.closeMCP(sessionOf(r).id)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
