package web

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestSafeNext(t *testing.T) {
	cases := map[string]string{
		"":                      "/",
		"/ui/history?x=1":       "/ui/history?x=1",
		"//evil.example/":       "/",
		"/\\evil.example":       "/",
		"https://evil.example/": "/",
		"ui/tools":              "/",
		"javascript:alert(1)":   "/",
	}
	for in, want := range cases {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestLoggedIn(t *testing.T) {
	ctx := context.Background()
	tok := config.Token{Name: "ci", User: "alice", Secret: "one"}
	cfg := func(tokens ...config.Token) *config.Config {
		c := config.Default()
		c.Gateway.Tokens = tokens
		return c
	}
	s := newSessions(time.Now, nil, nil)
	authed := s.create(ctx, &tok, true)
	anon := s.create(ctx, nil, true)
	cases := []struct {
		name string
		se   session
		cfg  *config.Config
		want bool
	}{
		{"no tokens, anonymous", anon, cfg(), true},
		{"tokens, anonymous", anon, cfg(tok), false},
		{"tokens, logged in", authed, cfg(tok), true},
		{"token removed", authed, cfg(config.Token{Name: "other", User: "bob", Secret: "two"}), false},
		{"secret changed", authed, cfg(config.Token{Name: "ci", User: "alice", Secret: "rotated"}), false},
		{"user changed", authed, cfg(config.Token{Name: "ci", User: "mallory", Secret: "one"}), false},
		{"same token as a hash", authed, cfg(config.Token{Name: "ci", User: "alice", SHA256: fingerprint(tok)}), true},
		{"token narrowed to a view", authed, cfg(config.Token{Name: "ci", User: "alice", Secret: "one", Views: []string{"mem"}}), false},
		{"token of every view", authed, cfg(config.Token{Name: "ci", User: "alice", Secret: "one", Views: []string{"*"}}), true},
	}
	for _, c := range cases {
		if got := loggedIn(c.se, c.cfg); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSessionsExpireAndEvict(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now }, nil, nil)
	tok := config.Token{Name: "ci", User: "alice", Secret: "one"}
	kept := s.create(ctx, &tok, true)
	for range maxSessions - 1 {
		now = now.Add(time.Millisecond)
		s.create(ctx, nil, true)
	}
	// Full: a new session evicts the least recently used anonymous one,
	// never the logged-in one, although it is older.
	s.create(ctx, nil, true)
	if _, ok := s.get(ctx, kept.id); !ok {
		t.Fatal("evicting dropped the logged-in session before anonymous ones")
	}
	if n := len(s.byID); n != maxSessions {
		t.Errorf("sessions held: got %d, want %d", n, maxSessions)
	}
	now = now.Add(SessionIdle + time.Second)
	if _, ok := s.get(ctx, kept.id); ok {
		t.Error("a session idle past SessionIdle is still valid")
	}
	s.expire(ctx)
	if n := len(s.byID); n != 0 {
		t.Errorf("after expiry: got %d sessions, want 0", n)
	}
}

func TestParseFields(t *testing.T) {
	got, err := parseFields("a=1\n\n b = two words \n")
	if err != nil || got["a"] != 1.0 || got["b"] != "two words" || len(got) != 2 {
		t.Errorf("got %v %v", got, err)
	}
	if _, err := parseFields("novalue"); err == nil {
		t.Error("a line without = was accepted")
	}
}

func TestLoginLimiter(t *testing.T) {
	var l loginLimiter
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxLoginFailures {
		if !l.allow("10.0.0.1", now) {
			t.Fatalf("login %d refused, want allowed", i+1)
		}
		l.failed("10.0.0.1", now)
	}
	if l.allow("10.0.0.1", now.Add(time.Second)) {
		t.Errorf("after %d failures within the window a login is allowed", maxLoginFailures)
	}
	// Another address is not locked out by the first one's guessing.
	if !l.allow("10.0.0.2", now.Add(time.Second)) {
		t.Error("another address is refused because of the first one's failures")
	}
	if !l.allow("10.0.0.1", now.Add(loginWindow)) {
		t.Error("a login is refused after the window ended")
	}
	// Memory is bounded: past maxLoginAddresses active windows, new
	// addresses share one; once the windows end, they are forgotten.
	for i := range maxLoginAddresses + 10 {
		l.failed(fmt.Sprintf("a%d", i), now)
	}
	if n := len(l.windows); n > maxLoginAddresses+1 {
		t.Errorf("%d windows held, want at most %d", n, maxLoginAddresses+1)
	}
	l.failed("late", now.Add(2*loginWindow))
	if n := len(l.windows); n != 1 {
		t.Errorf("after every window ended: %d windows held, want 1", n)
	}
}

// TestSessionsInTheStore: a session started on one console is known to
// another on the same store, and a logout on one ends it on the other
// within touchEvery.
func TestSessionsInTheStore(t *testing.T) {
	ctx := context.Background()
	db, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	one, two := newSessions(clock, db, nil), newSessions(clock, db, nil)
	tok := config.Token{Name: "ci", User: "alice", Secret: "one"}
	se := one.create(ctx, &tok, true)
	got, ok := two.get(ctx, se.id)
	if !ok || got.user != "alice" || got.csrf != se.csrf || !got.authed {
		t.Fatalf("the other console: got %+v, %v, want alice's session", got, ok)
	}
	anon := one.create(ctx, nil, false)
	if _, ok := two.get(ctx, anon.id); ok {
		t.Error("a session created without persist reached the other console")
	}
	one.delete(ctx, se.id)
	now = now.Add(touchEvery)
	if _, ok := two.get(ctx, se.id); ok {
		t.Error("a session logged out on one console still works on the other after touchEvery")
	}
}

// TestConsoleRefusesNarrowTokens: the console reaches every server's tools,
// stops all calls and edits the configuration, so a gateway token that may
// use only some views neither logs in nor calls its API; a token that may
// use every view does both.
func TestConsoleRefusesNarrowTokens(t *testing.T) {
	cfg := config.Default()
	cfg.Gateway.Tokens = []config.Token{
		{Name: "alice", User: "alice", Secret: "narrow-secret", Views: []string{"mem"}},
		{Name: "ops", User: "ops", Secret: "wide-secret", Views: []string{"*"}},
	}
	c, err := New(Options{Backend: &fakeBackend{}, Catalog: catalog.New(catalog.Options{}), Config: func() *config.Config { return cfg }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(c.Handler())
	t.Cleanup(ts.Close)
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	bearer := func(secret string) (int, string) {
		req, _ := http.NewRequest("POST", ts.URL+Prefix+"api/stop", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := bearer("narrow-secret"); code != http.StatusForbidden || !strings.Contains(body, `token \"alice\" of user \"alice\" may use only the views mem`) {
		t.Errorf("a narrow bearer token stopping all calls: got %d %s, want 403 saying the token may use only the views mem", code, body)
	}
	if code, body := bearer("wide-secret"); code != http.StatusOK {
		t.Errorf("a bearer token of every view stopping all calls: got %d %s, want 200", code, body)
	}

	login := func(secret string) (*http.Client, int, string) {
		jar, _ := cookiejar.New(nil)
		cl := &http.Client{Jar: jar, CheckRedirect: noRedirect}
		res, err := cl.Get(ts.URL + Prefix + "login")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("no CSRF token on the login page:\n%s", page)
		}
		res, err = cl.PostForm(ts.URL+Prefix+"login", url.Values{"csrf": {string(m[1])}, "next": {"/"}, "token": {secret}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return cl, res.StatusCode, html.UnescapeString(string(body))
	}
	cl, code, body := login("narrow-secret")
	if code != http.StatusForbidden || !strings.Contains(body, "That token may use only the views mem") {
		t.Errorf("logging in with a narrow token: got %d, want 403 saying why:\n%s", code, body)
	}
	if res, err := cl.Get(ts.URL + Prefix + "history"); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Errorf("a page after the refused login: got %v %v, want a redirect to the login", res.StatusCode, err)
	}
	cl, code, _ = login("wide-secret")
	if code != http.StatusSeeOther {
		t.Errorf("logging in with a token of every view: got %d, want 303", code)
	}
	if res, err := cl.Get(ts.URL + Prefix + "history"); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("a page after the login: got %v %v, want 200", res.StatusCode, err)
	}
}
