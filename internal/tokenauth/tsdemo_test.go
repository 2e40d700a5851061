package tokenauth_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
)

// startDemoAS runs the TypeScript SDK's example server with --oauth and
// returns its demo authorization server's issuer, http://localhost:PORT/
// (dynamic registration, PKCE, an authorization endpoint that approves at
// once, introspection at /introspect).
func startDemoAS(t *testing.T) string {
	t.Helper()
	return testpeer.StartOAuthExample(t, false).Issuer
}

// demoToken gets an access token from the demo authorization server the
// way an MCP client does: dynamic registration (RFC 7591), then the
// authorization-code flow with PKCE and the resource indicator (RFC 8707),
// following the authorization endpoint's redirect as a browser would after
// "Allow".
func demoToken(t *testing.T, issuer, resource string) (token, clientID string) {
	t.Helper()
	ctx := context.Background()
	const redirect = "http://127.0.0.1:1/callback" // never visited: the code is read from the redirect
	reg, err := oauthex.RegisterClient(ctx, issuer+"register", &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirect},
		TokenEndpointAuthMethod: "none",
		GrantTypes:              []string{"authorization_code"},
		ResponseTypes:           []string{"code"},
		ClientName:              "switchboard tokenauth test",
		Scope:                   "mcp:tools",
	}, nil)
	if err != nil {
		t.Fatalf("registering a client: %v", err)
	}
	cfg := &oauth2.Config{
		ClientID:    reg.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: issuer + "authorize", TokenURL: issuer + "token", AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: redirect,
		Scopes:      []string{"mcp:tools"},
	}
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	code, state, err := oauthtest.Approve(authURL)
	if err != nil {
		t.Fatal(err)
	}
	if state != "state-1" {
		t.Fatalf("state %q, want state-1", state)
	}
	tok, err := cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		t.Fatalf("exchanging the code: %v", err)
	}
	return tok.AccessToken, reg.ClientID
}

// demoAuth returns an authenticator for a gateway at resource that trusts
// the demo authorization server: its tokens are introspected, and name
// their user in client_id (they have no sub).
func demoAuth(t *testing.T, issuer, resource string, client *http.Client) *tokenauth.Authenticator {
	t.Helper()
	return newAuth(t, tokenauth.Options{
		Resource:      resource,
		Issuer:        issuer,
		Introspection: &tokenauth.Introspection{URL: issuer + "introspect"},
		UserClaim:     "client_id",
		Scopes:        []string{"mcp:tools"},
		HTTPClient:    client,
	})
}

// countingTransport counts the requests the authenticator makes.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTypeScriptDemoAuthorizationServer validates real tokens of the
// TypeScript SDK's demo authorization server by introspection: one it
// issued for this gateway is accepted (the user from client_id, as the
// demo issues tokens without sub) and cached; one issued for another
// resource, and one it never issued, are refused.
func TestTypeScriptDemoAuthorizationServer(t *testing.T) {
	t.Parallel()
	issuer := startDemoAS(t)
	rt := &countingTransport{}
	a := demoAuth(t, issuer, gatewayURL, &http.Client{Transport: rt, Timeout: 10 * time.Second})

	token, clientID := demoToken(t, issuer, gatewayURL+"/mcp")
	got := identityOf(t, serve(t, a, "/mcp", token))
	if got.User != clientID || got.Method != tokenauth.MethodIntrospection || strings.Join(got.Scopes, " ") != "mcp:tools" {
		t.Errorf("identity %+v: want user %s by introspection with scope mcp:tools", got, clientID)
	}
	for range 10 {
		identityOf(t, serve(t, a, "/mcp/eng", token))
	}
	if n := rt.n.Load(); n != 1 {
		t.Errorf("11 requests with one token: %d introspection requests, want 1", n)
	}

	other, _ := demoToken(t, issuer, "https://other.example.com/mcp")
	rec := serve(t, a, "/mcp", other)
	if ch := rec.Header().Get("WWW-Authenticate"); rec.Code != http.StatusUnauthorized || !strings.Contains(ch, "issued for 'https://other.example.com/mcp', not for this gateway") {
		t.Errorf("a token for another resource: status %d, WWW-Authenticate %q", rec.Code, ch)
	}

	// The demo answers 401 {"active": false} for a token it does not know.
	rec = serve(t, a, "/mcp", "never-issued-6d1f")
	if ch := rec.Header().Get("WWW-Authenticate"); rec.Code != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token", error_description="the token is not active`) {
		t.Errorf("an unknown token: status %d, WWW-Authenticate %q", rec.Code, ch)
	}
}
