package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
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
	// maxLoginFailures is how many failed logins the console takes in
	// loginWindow before it refuses logins until the window ends.
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
}

// sessions holds the sessions in memory: a restart logs everyone out.
type sessions struct {
	now  func() time.Time
	mu   sync.Mutex
	byID map[string]*session
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, byID: map[string]*session{}}
}

// randomToken returns 32 random bytes, base64url-encoded.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// get returns a copy of a live session and marks it used.
func (s *sessions) get(id string) (session, bool) {
	if id == "" {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byID[id]
	if !ok {
		return session{}, false
	}
	now := s.now()
	if now.Sub(se.seen) > SessionIdle || now.Sub(se.created) > SessionMax {
		delete(s.byID, id)
		return session{}, false
	}
	se.seen = now
	return *se, true
}

// create starts a session; tok is nil for an anonymous one.
func (s *sessions) create(tok *config.Token) session {
	now := s.now()
	se := &session{id: randomToken(), csrf: randomToken(), created: now, seen: now}
	if tok != nil {
		se.authed, se.token, se.fingerprint, se.user = true, tok.Name, fingerprint(*tok), tok.User
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= maxSessions {
		s.evictLocked()
	}
	s.byID[se.id] = se
	return *se
}

// evictLocked drops the least recently used session, anonymous ones first.
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

func (s *sessions) delete(id string) {
	s.mu.Lock()
	delete(s.byID, id)
	s.mu.Unlock()
}

// expire drops the sessions past their limits.
func (s *sessions) expire() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, se := range s.byID {
		if now.Sub(se.seen) > SessionIdle || now.Sub(se.created) > SessionMax {
			delete(s.byID, id)
		}
	}
}

// loginLimiter counts failed logins in fixed windows, so that guessing
// tokens through the form is slow.
type loginLimiter struct {
	mu       sync.Mutex
	start    time.Time
	failures int
}

// allow reports whether a login may be tried now.
func (l *loginLimiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= loginWindow {
		l.start, l.failures = now, 0
	}
	return l.failures < maxLoginFailures
}

// failed counts a failed login.
func (l *loginLimiter) failed(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= loginWindow {
		l.start, l.failures = now, 0
	}
	l.failures++
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
// session when no tokens are configured, otherwise one that logged in with
// a token that is still configured, unchanged.
func loggedIn(se session, cfg *config.Config) bool {
	tokens := cfg.Gateway.Tokens
	if len(tokens) == 0 {
		return true
	}
	if !se.authed {
		return false
	}
	for _, t := range tokens {
		if t.Name == se.token && t.User == se.user && fingerprint(t) == se.fingerprint {
			return true
		}
	}
	return false
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
		if se, ok := c.sessions.get(ck.Value); ok {
			return se
		}
	}
	se := c.sessions.create(nil)
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
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, se)))
	})
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
}

// loginPage shows the login form, or goes on when no login is needed.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	se := c.session(w, r)
	next := safeNext(r.URL.Query().Get("next"))
	if loggedIn(se, c.opts.Config()) {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.render(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, se)), http.StatusOK, "login", &loginData{Next: next})
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
	if len(cfg.Gateway.Tokens) == 0 {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if !c.logins.allow(c.now()) {
		c.logger.Warn("console login refused: too many failed logins")
		writeFault(w, http.StatusTooManyRequests, fault.New(fault.LimitExceeded, "too many failed logins; logins are refused for up to a minute").
			WithSuggestions("wait a minute, then log in with a valid token"))
		return
	}
	presented := strings.TrimSpace(r.PostFormValue("token"))
	for _, t := range cfg.Gateway.Tokens {
		if presented != "" && t.Matches(presented) {
			c.sessions.delete(se.id)
			ns := c.sessions.create(&t)
			setCookie(w, r, ns.id)
			c.logger.Info("console login", "token", t.Name, "user", t.User)
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	c.logins.failed(c.now())
	c.logger.Warn("console login refused")
	c.render(w, r, http.StatusUnauthorized, "login", &loginData{Next: next, Error: "That token is not valid. Use one of the tokens in gateway.tokens."})
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	c.sessions.delete(sessionOf(r).id)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
