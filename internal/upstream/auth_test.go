package upstream

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// allowBrowser is an oauth.Options.OpenBrowser that plays a person's
// browser clicking "Allow": it follows the authorization server's
// redirects to the loopback redirect URI (the TS example approves at once).
func allowBrowser(t *testing.T) func(context.Context, string) (<-chan error, error) {
	return func(ctx context.Context, u string) (<-chan error, error) {
		done := make(chan error, 1)
		go func() {
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = errors.New("the redirect page answered " + resp.Status)
				}
			}
			done <- err
		}()
		return done, nil
	}
}

func greetOnce(t *testing.T, c *Client, ctx context.Context) string {
	t.Helper()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}}, nil)
	if err != nil {
		t.Fatalf("greet: %v", err)
	}
	return textOf(t, res)
}

// TestSupervisorNeedsAuth: a server that answers 401 with an OAuth
// challenge (no oauth: block configured) is needs_auth with the exact
// command, never a failure (it is not auto-disabled however long it
// waits), and connects once a sign-in is stored, without a restart.
func TestSupervisorNeedsAuth(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, true)
	m, err := oauth.New(oauth.Options{StateDir: t.TempDir(), OpenBrowser: allowBrowser(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := config.Server{Name: "demo", Transport: config.TransportHTTP, URL: ex.URL, Enabled: true, TerminateOnClose: true, ConnectTimeout: 30 * time.Second}
	h := fastHealth()
	h.MaxFailures = 1
	h.PingTimeout = 10 * time.Second // a ping is slow under -race on a busy machine; a timeout is a failure
	s := NewSupervisor(SupervisorOptions{Server: srv, Health: h, Dial: DialOptions{Auth: NewAuth(m, srv)}})
	runSupervisor(t, s)

	snap := waitSnapshot(t, s, 30*time.Second, "needs_auth", func(sn Snapshot) bool { return sn.State == StateNeedsAuth })
	if !strings.Contains(snap.LastError, "server demo needs sign-in: not signed in") ||
		len(snap.Suggestions) != 1 || snap.Suggestions[0] != "run: switchboard auth login demo" {
		t.Errorf("needs_auth snapshot: got error %q suggestions %q, want why and `run: switchboard auth login demo`", snap.LastError, snap.Suggestions)
	}
	if snap.Status != StatusUnavailable || snap.ConsecutiveFailures != 0 || snap.AutoDisabled || !snap.Enabled {
		t.Errorf("needs_auth snapshot: got %+v, want unavailable, no failures, enabled", snap)
	}
	_, err = s.Client()
	if fault.KindOf(err) != fault.Authentication || !strings.Contains(err.Error(), "switchboard auth login demo") {
		t.Errorf("Client while needs_auth: got %v (kind %s), want an authentication error naming the command", err, fault.KindOf(err))
	}

	// A sign-in elsewhere (here: the same store, as the CLI writes it).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := m.Login(ctx, OAuthServer(srv), oauth.LoginOptions{}); err != nil {
		t.Fatalf("Login: %v\n%s", err, ex.Output())
	}
	start := time.Now()
	waitSnapshot(t, s, 5*time.Second, "the sign-in noticed", func(sn Snapshot) bool { return sn.State != StateNeedsAuth })
	if d := time.Since(start); d > time.Second {
		t.Errorf("the sign-in was noticed %v after it was stored, want within a second", d)
	}
	waitSnapshot(t, s, 30*time.Second, "connected after sign-in", func(sn Snapshot) bool { return sn.State == StateConnected })
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	if got := greetOnce(t, c, ctx); !strings.Contains(got, "Ada") {
		t.Errorf("greet: got %q", got)
	}
	if snap := s.Snapshot(); snap.ConsecutiveFailures != 0 || snap.AutoDisabled {
		t.Errorf("after sign-in: got %+v, want no failures counted", snap)
	}

	// Logout: the health check's next ping has no token, and the server is
	// needs_auth again, still without a failure counted.
	if _, err := m.Logout(ctx, OAuthServer(srv), ""); err != nil {
		t.Fatal(err)
	}
	snap = waitSnapshot(t, s, 5*time.Second, "needs_auth after logout", func(sn Snapshot) bool { return sn.State == StateNeedsAuth })
	if snap.ConsecutiveFailures != 0 || !snap.Enabled {
		t.Errorf("after logout: got %+v, want needs_auth without failures", snap)
	}
}

// TestAuthPerUser: for a server with auth: per_user, a call made for a
// user carries that user's token and nobody else's; a user who has not
// signed in gets an authentication error naming their sign-in command;
// the connection itself uses the shared sign-in.
func TestAuthPerUser(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, false)
	m, err := oauth.New(oauth.Options{StateDir: t.TempDir(), OpenBrowser: allowBrowser(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv := config.Server{Name: "demo", Transport: config.TransportHTTP, URL: ex.URL, Enabled: true, TerminateOnClose: true,
		OAuth: &config.ServerOAuth{}, Auth: config.AuthPerUser}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	osrv := OAuthServer(srv)
	tokens := map[string]string{}
	for _, user := range []string{"", "alice"} {
		if _, err := m.Login(ctx, osrv, oauth.LoginOptions{User: user}); err != nil {
			t.Fatalf("Login %q: %v", user, err)
		}
		ts, err := m.Handler(osrv, oauth.HandlerOptions{User: user}).TokenSource(ctx)
		if err != nil || ts == nil {
			t.Fatalf("TokenSource %q: %v", user, err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		tokens[user] = tok.AccessToken
	}
	if tokens[""] == tokens["alice"] {
		t.Fatal("the shared and alice's sign-ins got the same token")
	}
	c, err := Dial(ctx, srv, DialOptions{Auth: NewAuth(m, srv)})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()

	// The example logs each request's token ("Authenticated user: {token: ...}")
	// on its stdout, which reaches us after the answer does, and after the
	// lines of any earlier request not yet read: the call just made is the
	// last request, so wait until the last line is one, and name its user.
	lastToken := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			got := "?"
			out := ex.Output()
			if i := strings.LastIndex(out, "Authenticated user:"); i >= 0 {
				for user, tok := range tokens {
					if strings.Contains(out[i:], tok) {
						got = user
					}
				}
			}
			if got == want || time.Now().After(deadline) {
				return got
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	greetOnce(t, c, WithIdentity(ctx, Identity{User: "alice"}))
	if got := lastToken("alice"); got != "alice" {
		t.Errorf("alice's call went with the token of %q, want alice's", got)
	}
	greetOnce(t, c, ctx)
	if got := lastToken(""); got != "" {
		t.Errorf("a call for nobody went with the token of %q, want the shared sign-in's", got)
	}

	_, err = c.CallTool(WithIdentity(ctx, Identity{User: "bob"}), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Bob"}}, nil)
	if fault.KindOf(err) != fault.Authentication || !strings.Contains(err.Error(), "server demo needs sign-in for user bob") ||
		!strings.Contains(err.Error(), "switchboard auth login demo --user bob") {
		t.Fatalf("bob's call: got %v (kind %s), want an authentication error with bob's sign-in command", err, fault.KindOf(err))
	}
	for _, tok := range tokens {
		if strings.Contains(err.Error(), tok) {
			t.Error("bob's error shows a token")
		}
	}
	// Bob's refusal did not break the connection for the others.
	greetOnce(t, c, WithIdentity(ctx, Identity{User: "alice"}))
	if got := lastToken("alice"); got != "alice" {
		t.Errorf("alice's second call went with the token of %q", got)
	}
}
