package web

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
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
	tok := config.Token{Name: "ci", User: "alice", Secret: "one"}
	cfg := func(tokens ...config.Token) *config.Config {
		c := config.Default()
		c.Gateway.Tokens = tokens
		return c
	}
	s := newSessions(time.Now)
	authed := s.create(&tok)
	anon := s.create(nil)
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
	}
	for _, c := range cases {
		if got := loggedIn(c.se, c.cfg); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSessionsExpireAndEvict(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newSessions(func() time.Time { return now })
	tok := config.Token{Name: "ci", User: "alice", Secret: "one"}
	kept := s.create(&tok)
	for range maxSessions - 1 {
		now = now.Add(time.Millisecond)
		s.create(nil)
	}
	// Full: a new session evicts the least recently used anonymous one,
	// never the logged-in one, although it is older.
	s.create(nil)
	if _, ok := s.get(kept.id); !ok {
		t.Fatal("evicting dropped the logged-in session before anonymous ones")
	}
	if n := len(s.byID); n != maxSessions {
		t.Errorf("sessions held: got %d, want %d", n, maxSessions)
	}
	now = now.Add(SessionIdle + time.Second)
	if _, ok := s.get(kept.id); ok {
		t.Error("a session idle past SessionIdle is still valid")
	}
	s.expire()
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
		if !l.allow(now) {
			t.Fatalf("login %d refused, want allowed", i+1)
		}
		l.failed(now)
	}
	if l.allow(now.Add(time.Second)) {
		t.Errorf("after %d failures within the window a login is allowed", maxLoginFailures)
	}
	if !l.allow(now.Add(loginWindow)) {
		t.Error("a login is refused after the window ended")
	}
}
