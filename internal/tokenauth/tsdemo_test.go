package tokenauth_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// startDemoAS runs the TypeScript SDK's example server with --oauth, whose
// in-memory authorization server (dynamic registration, PKCE, an
// authorization endpoint that approves at once, introspection at
// /introspect) listens on MCP_AUTH_PORT, and returns that server's issuer,
// http://localhost:PORT/. The child and its process group are killed at
// cleanup.
func startDemoAS(t *testing.T) string {
	t.Helper()
	node := testpeer.Node(t)
	script := filepath.Join(testpeer.Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the TypeScript SDK's example server is missing (%v): run `make peers`", err)
	}
	var failures []string
	for attempt := 0; attempt < 3; attempt++ {
		mcpPort, authPort := freePort(t), freePort(t)
		issuer := fmt.Sprintf("http://localhost:%d/", authPort)
		var out logBuffer
		cmd := exec.Command(node, script, "--oauth")
		cmd.Env = append(os.Environ(), "MCP_PORT="+strconv.Itoa(mcpPort), "MCP_AUTH_PORT="+strconv.Itoa(authPort))
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", script, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		stop := sync.OnceFunc(func() {
			select {
			case <-done:
				return // reaped: the group id may be reused
			default:
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		})
		t.Cleanup(stop)
		err := waitMetadata(issuer, done, time.Now().Add(60*time.Second))
		if err == nil {
			return issuer
		}
		stop()
		failures = append(failures, fmt.Sprintf("attempt %d (ports %d, %d): %v; output:\n%s", attempt+1, mcpPort, authPort, err, out.String()))
		if !errors.Is(err, errExited) {
			break
		}
	}
	t.Fatalf("the TypeScript SDK's demo authorization server did not start:\n%s", strings.Join(failures, "\n"))
	return ""
}

var errExited = errors.New("the server exited")

// waitMetadata polls the authorization server's metadata until it answers,
// the child exits, or the deadline passes.
func waitMetadata(issuer string, done <-chan struct{}, deadline time.Time) error {
	client := &http.Client{Timeout: time.Second}
	for {
		res, err := client.Get(issuer + ".well-known/oauth-authorization-server")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-done:
			return errExited
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no metadata at %s by the deadline (last error %v)", issuer, err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(authURL)
	if err != nil {
		t.Fatalf("authorization request: %v", err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound || loc.Query().Get("code") == "" {
		t.Fatalf("authorization answered %s, Location %q: want a redirect with a code", res.Status, res.Header.Get("Location"))
	}
	if got := loc.Query().Get("state"); got != "state-1" {
		t.Fatalf("state %q, want state-1", got)
	}
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
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
