package config_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
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
	cfg, err := config.Parse(file, []byte(src), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(cfg *config.Config, when string) {
		t.Helper()
		for i, want := range []struct {
			mode config.SessionMode
			max  int
		}{{config.SessionPerClient, 3}, {config.SessionPerUser, 0}, {"", 0}} {
			s := cfg.Servers[i]
			if s.Session != want.mode || s.MaxSessions != want.max {
				t.Errorf("%s: %s has session %q, max_sessions %d; want %q, %d", when, s.Name, s.Session, s.MaxSessions, want.mode, want.max)
			}
		}
	}
	check(cfg, "parsed")
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse(file, out, config.Options{})
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
	_, err := config.Parse(file, []byte(src), config.Options{})
	var ve *config.ValidationError
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
	cfg, err := config.Parse(file, []byte("servers:\n  - name: c\n    command: npx\n    max_sessions: 4\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0].String(), "no effect on a shared session") {
		t.Errorf("warnings: %v, want one saying max_sessions has no effect on a shared session", cfg.Warnings)
	}
}
