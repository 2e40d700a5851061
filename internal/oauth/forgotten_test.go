package oauth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// TestLoginRegistersAgainWhenForgotten: an authorization server that
// forgot Switchboard's dynamic registration refuses the authorization
// request itself (a browser would show its error page and never come
// back); the next sign-in sees that before opening the browser, registers
// again once, and signs in, instead of waiting out the login timeout.
func TestLoginRegistersAgainWhenForgotten(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	// Long enough that waiting it out fails the test's deadline.
	m, _ := newManager(t, "allow", func(o *oauth.Options) { o.LoginTimeout = 10 * time.Minute })
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	clear(f.clients)
	f.mu.Unlock()

	var out syncBuffer
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{Out: &out}); err != nil {
		t.Fatalf("Login after the authorization server forgot the client: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "no longer accepts Switchboard's client registration") || !strings.Contains(out.String(), "registering again") {
		t.Errorf("Login's output: got %q, want it to say the registration was refused and made again", out.String())
	}
	if n := f.registrationCount(); n != 2 {
		t.Errorf("registrations: got %d, want 2 (the forgotten one and a new one)", n)
	}
	if az, _ := f.requests(); len(az) != 2 {
		t.Errorf("authorization requests from the browser: got %d, want 2 (one per sign-in)", len(az))
	}
	mustCall(t, ctx, m, srv, "echo")
}

// TestLoginFailsAtOnceWhenRefusedAgain: when the authorization server
// refuses the registration it has just made too, the sign-in fails at
// once, saying so and what to do, without opening the browser; nothing
// is left registered for the next sign-in to trust.
func TestLoginFailsAtOnceWhenRefusedAgain(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow", func(o *oauth.Options) { o.LoginTimeout = 10 * time.Minute })
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.forgetsClients = true
	f.mu.Unlock()

	_, err := m.Login(ctx, srv, oauth.LoginOptions{})
	if err == nil {
		t.Fatal("Login against an authorization server that refuses every client: got nil error")
	}
	for _, want := range []string{"signing in to fake", "refused the sign-in request", "HTTP 400", "unknown client", "refused the client it had just registered", "oauth.client_id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Login's error: got %q, want it to contain %q", err, want)
		}
	}
	if az, _ := f.requests(); len(az) != 1 {
		t.Errorf("authorization requests from the browser: got %d, want only the first sign-in's", len(az))
	}
	if n := f.registrationCount(); n != 2 {
		t.Errorf("registrations: got %d, want 2", n)
	}
}
