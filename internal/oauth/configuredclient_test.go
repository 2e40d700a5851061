package oauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestLoginRefusedConfiguredClientFailsAtOnce signs in to the TypeScript
// SDK's OAuth example with an oauth.client_id it never registered: its
// authorization endpoint answers 400 invalid_client instead of a sign-in
// page, and the sign-in fails at once, naming the client ID, the key that
// set it and what to do, without opening the browser. Before, it waited
// out the whole login timeout for a redirect that never comes.
func TestLoginRefusedConfiguredClientFailsAtOnce(t *testing.T) {
	t.Parallel()
	ex := testpeer.SharedOAuthExample(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opened := make(chan string, 1)
	m, err := oauth.New(oauth.Options{
		StateDir: t.TempDir(),
		// Far longer than the test's deadline: waiting it out fails the test.
		LoginTimeout: 10 * time.Minute,
		OpenBrowser: func(_ context.Context, u string) (<-chan error, error) {
			opened <- u
			return nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := oauth.Server{Name: "demo", URL: ex.URL, Settings: oauth.Settings{ClientID: "no-such-client"}}
	_, err = m.Login(ctx, srv, oauth.LoginOptions{})
	if err == nil {
		t.Fatalf("Login with a client ID the authorization server does not know: got nil error\n%s", ex.Output())
	}
	if ctx.Err() != nil {
		t.Fatalf("Login waited until the test's deadline: %v", err)
	}
	for _, want := range []string{"signing in to demo", `client "no-such-client"`, "refused the sign-in request", "HTTP 400", "invalid_client",
		"check oauth.client_id of server demo", "oauth.redirect_port", "or remove oauth.client_id to let Switchboard register itself"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Login's error: got %q, want it to contain %q", err, want)
		}
	}
	select {
	case u := <-opened:
		t.Errorf("the browser was opened at %s, want no browser for a refused client", u)
	default:
	}
}
