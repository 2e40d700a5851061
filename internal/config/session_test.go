package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerSession(t *testing.T) {
	file := filepath.Join(t.TempDir(), "switchboard.yaml")
	src := `servers:
  - name: browser
    command: npx
    session: per_client
    max_sessions: 3
  - name: crm
    command: npx
    session: per_user
  - name: plain
    command: npx
`
	cfg, err := Parse(file, []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(cfg *Config, when string) {
		t.Helper()
		for i, want := range []struct {
			mode SessionMode
			max  int
		}{{SessionPerClient, 3}, {SessionPerUser, 0}, {"", 0}} {
			s := cfg.Servers[i]
			if s.Session != want.mode || s.MaxSessions != want.max {
				t.Errorf("%s: %s has session %q, max_sessions %d; want %q, %d", when, s.Name, s.Session, s.MaxSessions, want.mode, want.max)
			}
		}
	}
	check(cfg, "parsed")
	out, err := MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(file, out, Options{})
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", out, err)
	}
	check(again, "read back")
}

func TestServerSessionErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "switchboard.yaml")
	src := `servers:
  - name: a
    command: npx
    session: per_request
  - name: b
    command: npx
    session: per_client
    max_sessions: 0
`
	_, err := Parse(file, []byte(src), Options{})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a validation error", err)
	}
	got := err.Error()
	for _, want := range []string{
		"switchboard.yaml:4:14: servers.a.session:",
		"per_client",
		"switchboard.yaml:8:19: servers.b.max_sessions:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the errors lack %q:\n%s", want, got)
		}
	}

	// max_sessions on a shared server is a warning: it does nothing.
	cfg, err := Parse(file, []byte("servers:\n  - name: c\n    command: npx\n    max_sessions: 4\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), "no effect on a shared session") {
		t.Errorf("warnings: %v, want one saying max_sessions has no effect on a shared session", cfg.Warnings)
	}
}
