package oauth_test

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// connect opens a go-sdk client session over streamable HTTP with the
// handler as its OAuthHandler, or, with viaRoundTripper, with the handler
// wrapping the HTTP client's transport.
func connect(ctx context.Context, url string, h *oauth.Handler, viaRoundTripper bool) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if viaRoundTripper {
		tr.HTTPClient = &http.Client{Transport: h.RoundTripper(nil)}
	} else {
		tr.OAuthHandler = h
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	return c.Connect(ctx, tr, nil)
}

// greet lists the example's tools and calls greet.
func greet(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "greet") {
		t.Fatalf("tools: got %v, want greet among them", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		t.Fatalf("tools/call greet: %v", err)
	}
	if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Ada") {
		t.Fatalf("greet: got %+v, want a greeting for Ada", res.Content)
	}
}

// TestTSExampleEndToEnd signs in to the TypeScript SDK's OAuth example
// (strict: it checks the resource indicator) through $BROWSER, then lists
// and calls its tools through both ways of wiring the handler.
func TestTSExampleEndToEnd(t *testing.T) {
	ex := testpeer.StartOAuthExample(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	state := t.TempDir()
	m, err := oauth.New(oauth.Options{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	srv := oauth.Server{Name: "demo", URL: ex.URL}

	// Before sign-in: the connection fails with the typed error and its command.
	h := m.Handler(srv, oauth.HandlerOptions{})
	if _, err := connect(ctx, ex.URL, h, false); err == nil {
		t.Fatal("connect before sign-in: got nil error, want needs sign-in")
	} else if e, ok := oauth.AsNeedsSignIn(err); !ok || e.Command() != "switchboard auth login demo" {
		t.Fatalf("connect before sign-in: got %v, want a NeedsSignInError with `switchboard auth login demo`", err)
	}
	if h.NeedsSignIn() == nil {
		t.Error("Handler.NeedsSignIn after a refused connection: got nil")
	}

	t.Setenv("BROWSER", browserScript(t, "allow"))
	var out bytes.Buffer
	st, err := m.Login(ctx, srv, oauth.LoginOptions{Out: &out})
	if err != nil {
		t.Fatalf("Login: %v\nexample output:\n%s", err, ex.Output())
	}
	if !strings.Contains(out.String(), "http://localhost:") || !strings.Contains(out.String(), "code_challenge_method=S256") || !strings.Contains(out.String(), "resource=") {
		t.Errorf("Login printed %q, want the authorization URL with PKCE S256 and the resource", out.String())
	}
	if st.State != oauth.StateSignedIn || st.Registration != oauth.RegistrationDynamic || strings.Join(st.Scopes, " ") != "mcp:tools" {
		t.Errorf("status after login: got %+v, want signed_in, dynamic registration, scopes mcp:tools", st)
	}
	if st.ExpiresAt.IsZero() || st.Refreshable {
		t.Errorf("status: got expires %v refreshable %v, want an expiry and no refresh token (the demo issues none)", st.ExpiresAt, st.Refreshable)
	}

	for _, viaRT := range []bool{false, true} {
		h := m.Handler(srv, oauth.HandlerOptions{})
		cs, err := connect(ctx, ex.URL, h, viaRT)
		if err != nil {
			t.Fatalf("connect after sign-in (round tripper %v): %v", viaRT, err)
		}
		greet(t, ctx, cs)
		cs.Close()
	}

	// A second sign-in reuses the stored registration.
	st2, err := m.Login(ctx, srv, oauth.LoginOptions{})
	if err != nil {
		t.Fatalf("second Login: %v", err)
	}
	if st2.ClientID != st.ClientID {
		t.Errorf("second login registered again: client %q, then %q", st.ClientID, st2.ClientID)
	}

	// Nothing of the token is readable at rest, and every file is 0600.
	ts, err := m.Handler(srv, oauth.HandlerOptions{}).TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("TokenSource: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	checkSealed(t, state, tok.AccessToken, st.ClientID)

	// Logout: the demo offers no revocation, and says so.
	res, err := m.Logout(ctx, srv, "")
	if err != nil || !res.WasSignedIn || res.Revoked || !strings.Contains(res.Note, "no revocation") {
		t.Fatalf("Logout: got %+v, %v; want signed out, not revoked, a note on revocation", res, err)
	}
	if st, _ := m.Status(srv, ""); st.State != oauth.StateNotSignedIn {
		t.Errorf("status after logout: got %s, want %s", st.State, oauth.StateNotSignedIn)
	}
}

// TestTSExampleInteractive: an interactive handler (an ad hoc call from a
// terminal) runs the sign-in itself on the first 401.
func TestTSExampleInteractive(t *testing.T) {
	t.Parallel()
	ex := testpeer.SharedOAuthExample(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := oauth.New(oauth.Options{StateDir: t.TempDir(), OpenBrowser: scriptedBrowser(t, "allow")})
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	h := m.Handler(oauth.Server{Name: "demo", URL: ex.URL}, oauth.HandlerOptions{Interactive: true, Out: &out})
	cs, err := connect(ctx, ex.URL, h, false)
	if err != nil {
		t.Fatalf("connect: %v\noutput: %s", err, out.String())
	}
	defer cs.Close()
	greet(t, ctx, cs)
	if !strings.Contains(out.String(), "Signed in to demo") {
		t.Errorf("output: got %q, want the sign-in's progress", out.String())
	}
}

// checkSealed fails if any file under the store holds one of the secrets
// in clear, or is readable by others.
func checkSealed(t *testing.T, state string, secrets ...string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(state, "oauth"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, info.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if s != "" && bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds a secret in clear", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
