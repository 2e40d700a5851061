package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// TestScopeSelection: the challenge's scope, else the resource's
// scopes_supported, else none; configured scopes win; offline_access only
// when the authorization server offers it.
func TestScopeSelection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                string
		challenge           string
		prmScopes, asScopes []string
		configured          []string
		want                string
	}{
		{name: "challenge scope first", challenge: "files:read", prmScopes: []string{"a", "b"}, want: "files:read"},
		{name: "else scopes_supported", prmScopes: []string{"a", "b"}, want: "a b"},
		{name: "else none", want: ""},
		{name: "offline_access when offered", prmScopes: []string{"a"}, asScopes: []string{"a", "offline_access"}, want: "a offline_access"},
		{name: "configured scopes replace discovered", challenge: "x", configured: []string{"mine"}, want: "mine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, func(f *fakeAS) {
				f.challengeScope, f.prmScopes, f.asScopes = tc.challenge, tc.prmScopes, tc.asScopes
			})
			m, _ := newManager(t, "allow")
			srv := oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: oauth.Settings{Scopes: tc.configured}}
			st, err := m.Login(testCtx(t), srv, oauth.LoginOptions{})
			if err != nil {
				t.Fatalf("Login: %v", err)
			}
			az, _ := f.requests()
			if got := az[0].Get("scope"); got != tc.want {
				t.Errorf("requested scope: got %q, want %q", got, tc.want)
			}
			if _, has := az[0]["scope"]; tc.want == "" && has {
				t.Errorf("a scope parameter was sent with no scope to ask for")
			}
			if got := strings.Join(st.Scopes, " "); got != tc.want {
				t.Errorf("granted scopes in status: got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStepUp: a 403 insufficient_scope records the scope and asks for a
// sign-in (daemon), or signs in again for the union (interactive); the
// steps are bounded.
func TestStepUp(t *testing.T) {
	t.Parallel()
	t.Run("daemon", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) {
			f.prmScopes = []string{"read"}
			f.toolScopes = map[string]string{"admin": "admin"}
		})
		m, _ := newManager(t, "allow")
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
		if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
			t.Fatal(err)
		}
		mustCall(t, ctx, m, srv, "echo")
		_, err := call(ctx, m, srv, oauth.HandlerOptions{}, "admin")
		e, ok := oauth.AsNeedsSignIn(err)
		if !ok || e.Reason != oauth.ReasonMoreScopes || strings.Join(e.Scopes, " ") != "admin" {
			t.Fatalf("admin call: got %v, want a NeedsSignInError for more scopes (admin)", err)
		}
		if st, _ := m.Status(srv, ""); st.State != oauth.StateNeedsAuth || !strings.Contains(st.Problem, "admin") {
			t.Errorf("status after the step-up challenge: got %+v, want needs_auth naming admin", st)
		}
		if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
			t.Fatal(err)
		}
		az, _ := f.requests()
		if got := az[len(az)-1].Get("scope"); got != "read admin" {
			t.Errorf("step-up sign-in asked for %q, want the union %q", got, "read admin")
		}
		mustCall(t, ctx, m, srv, "admin")
	})
	t.Run("interactive", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) {
			f.prmScopes = []string{"read"}
			f.toolScopes = map[string]string{"admin": "admin"}
		})
		m, _ := newManager(t, "allow")
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
		res, err := call(ctx, m, srv, oauth.HandlerOptions{Interactive: true}, "admin")
		if err != nil || res.IsError {
			t.Fatalf("interactive admin call: %v %+v", err, res)
		}
		az, _ := f.requests()
		if len(az) != 2 || az[1].Get("scope") != "read admin" {
			t.Errorf("authorize requests: got %v, want a sign-in then a step-up for \"read admin\"", az)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) { f.alwaysStepUp = true })
		clk := &clock{t: time.Now()}
		m, _ := newManager(t, "allow", func(o *oauth.Options) { o.Now = clk.Now })
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
		// Raw requests through the round tripper: the go-sdk's transport
		// gives up on a connection whose retried request is refused again.
		hc := &http.Client{Transport: m.Handler(srv, oauth.HandlerOptions{Interactive: true}).RoundTripper(nil)}
		post := func() error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		var last error
		for range 6 {
			if last = post(); errors.As(last, new(*oauth.InsufficientScopeError)) {
				break
			}
		}
		if !errors.As(last, new(*oauth.InsufficientScopeError)) || !strings.Contains(last.Error(), "gave up after 3 step-up authorizations within 10m0s") {
			t.Fatalf("endless step-ups: got %v, want an InsufficientScopeError after 3", last)
		}
		if az, _ := f.requests(); len(az) != 4 { // the sign-in and 3 step-ups
			t.Errorf("authorize requests: got %d, want 4", len(az))
		}
		// Past the window, a step-up is allowed again.
		clk.Add(11 * time.Minute)
		_ = post()
		if az, _ := f.requests(); len(az) != 5 {
			t.Errorf("authorize requests after the window: got %d, want 5", len(az))
		}
	})
	t.Run("already granted", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) {
			f.prmScopes = []string{"admin"}
			f.toolScopes = map[string]string{"admin": "admin"}
		})
		m, _ := newManager(t, "allow")
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
		if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
			t.Fatal(err)
		}
		// The server now wants a scope the grant has: a step-up cannot help.
		f.mu.Lock()
		for k, tok := range f.access {
			tok.scopes = nil
			f.access[k] = tok
		}
		f.mu.Unlock()
		_, err := call(ctx, m, srv, oauth.HandlerOptions{Interactive: true}, "admin")
		var ise *oauth.InsufficientScopeError
		if !errors.As(err, &ise) || !strings.Contains(err.Error(), "already granted") {
			t.Fatalf("got %v, want an InsufficientScopeError saying the scopes were already granted", err)
		}
	})
}

// TestTokenEndpointAuthMethods: each method reaches the token endpoint as
// registered.
func TestTokenEndpointAuthMethods(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		supported  []string
		settings   func(redirect string) oauth.Settings
		preSecret  string
		preMethod  string
		dcrMethod  string
		wantMethod string
	}{
		{name: "pre-registered, basic", supported: []string{"client_secret_basic"}, preSecret: "s3cret-basic", preMethod: "client_secret_basic", wantMethod: "client_secret_basic"},
		{name: "pre-registered, post only", supported: []string{"client_secret_post"}, preSecret: "s3cret-post", preMethod: "client_secret_post", wantMethod: "client_secret_post"},
		{name: "pre-registered public client", supported: []string{"none"}, preMethod: "none", wantMethod: "none"},
		{name: "dynamic, none", dcrMethod: "", wantMethod: "none"},
		{name: "dynamic, the server imposes basic", dcrMethod: "client_secret_basic", wantMethod: "client_secret_basic"},
		{name: "dynamic, the server imposes post", dcrMethod: "client_secret_post", wantMethod: "client_secret_post"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, func(f *fakeAS) {
				if tc.supported != nil {
					f.authMethods = tc.supported
				}
				f.dcrMethod = tc.dcrMethod
			})
			var set oauth.Settings
			if tc.preMethod != "" {
				port := freePort(t)
				f.addClient("pre-client", tc.preSecret, tc.preMethod, fmt.Sprintf("http://127.0.0.1:%d/callback", port))
				set = oauth.Settings{ClientID: "pre-client", ClientSecret: tc.preSecret, RedirectPort: port}
			}
			m, _ := newManager(t, "allow")
			ctx := testCtx(t)
			srv := oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: set}
			st, err := m.Login(ctx, srv, oauth.LoginOptions{})
			if err != nil {
				t.Fatalf("Login: %v", err)
			}
			// Expire the access token so the next call refreshes.
			f.mu.Lock()
			for k := range f.access {
				delete(f.access, k)
			}
			f.mu.Unlock()
			mustCall(t, ctx, m, srv, "echo")
			_, tk := f.requests()
			if len(tk) != 2 {
				t.Fatalf("token requests: got %d, want the exchange and a refresh", len(tk))
			}
			for i, r := range tk {
				if r.method != tc.wantMethod {
					t.Errorf("token request %d (%s) authenticated by %s, want %s", i, r.form.Get("grant_type"), r.method, tc.wantMethod)
				}
			}
			if tc.preMethod != "" && (st.Registration != oauth.RegistrationConfigured || f.registrationCount() != 0) {
				t.Errorf("a pre-registered client: got registration %q and %d dynamic registrations, want configured and none", st.Registration, f.registrationCount())
			}
		})
	}
}

// TestRegistrationOrder: a configured client first, then a client ID
// metadata document where supported, else dynamic registration, stored and
// reused.
func TestRegistrationOrder(t *testing.T) {
	t.Parallel()
	const cimdURL = "https://switchboard.example.com/oauth/client.json"
	t.Run("configured beats metadata document and DCR", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) { f.cimd = true })
		port := freePort(t)
		f.addClient("mine", "", "none", fmt.Sprintf("http://127.0.0.1:%d/callback", port))
		m, _ := newManager(t, "allow")
		st, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: oauth.Settings{ClientID: "mine", ClientMetadataURL: cimdURL, RedirectPort: port}}, oauth.LoginOptions{})
		if err != nil || st.ClientID != "mine" || st.Registration != oauth.RegistrationConfigured || f.registrationCount() != 0 {
			t.Fatalf("got %+v, %v, %d registrations; want the configured client and no registration", st, err, f.registrationCount())
		}
	})
	t.Run("metadata document where supported", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, func(f *fakeAS) { f.cimd = true })
		m, _ := newManager(t, "allow")
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: oauth.Settings{ClientMetadataURL: cimdURL}}
		st, err := m.Login(ctx, srv, oauth.LoginOptions{})
		if err != nil || st.ClientID != cimdURL || st.Registration != oauth.RegistrationMetadataDocument || f.registrationCount() != 0 {
			t.Fatalf("got %+v, %v, %d registrations; want the metadata document URL as client ID", st, err, f.registrationCount())
		}
		mustCall(t, ctx, m, srv, "echo")
	})
	t.Run("dynamic where metadata documents are not supported, once", func(t *testing.T) {
		t.Parallel()
		f := newFakeAS(t, nil)
		m, _ := newManager(t, "allow")
		ctx := testCtx(t)
		srv := oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: oauth.Settings{ClientMetadataURL: cimdURL}}
		st1, err := m.Login(ctx, srv, oauth.LoginOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Another server on the same authorization server, and a sign-in
		// again: the registration is reused.
		st2, err := m.Login(ctx, oauth.Server{Name: "other", URL: f.mcpURL()}, oauth.LoginOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st3, err := m.Login(ctx, srv, oauth.LoginOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			mustCall(t, ctx, m, srv, "echo")
		}
		if st1.Registration != oauth.RegistrationDynamic || st1.ClientID != st2.ClientID || st1.ClientID != st3.ClientID || f.registrationCount() != 1 {
			t.Errorf("clients %q %q %q, %d registrations; want one dynamic registration reused", st1.ClientID, st2.ClientID, st3.ClientID, f.registrationCount())
		}
	})
}

// TestRefreshAndRotation: tokens are refreshed before they expire, with the
// resource indicator, and a rotated refresh token replaces the old one; a
// refused refresh token turns into needs sign-in.
func TestRefreshAndRotation(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, func(f *fakeAS) { f.accessTTL = 10 * time.Minute })
	clk := &clock{t: time.Now()}
	m, dir := newManager(t, "allow", func(o *oauth.Options) { o.Now = clk.Now })
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	h := m.Handler(srv, oauth.HandlerOptions{})
	token := func() string {
		t.Helper()
		ts, err := h.TokenSource(ctx)
		if err != nil {
			t.Fatalf("TokenSource: %v", err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatalf("Token: %v", err)
		}
		return tok.AccessToken
	}
	first := token()
	if again := token(); again != first {
		t.Fatal("a fresh token was refreshed")
	}
	clk.Add(9*time.Minute + 30*time.Second) // inside the minute before expiry
	second := token()
	if second == first {
		t.Fatal("a token about to expire was not refreshed")
	}
	clk.Add(9*time.Minute + 30*time.Second)
	third := token()
	if third == second {
		t.Fatal("the second refresh did not happen")
	}
	_, tk := f.requests()
	if len(tk) != 3 || tk[1].form.Get("grant_type") != "refresh_token" || tk[2].form.Get("grant_type") != "refresh_token" {
		t.Fatalf("token requests: got %d, want the exchange and two refreshes", len(tk))
	}
	if tk[1].form.Get("refresh_token") == tk[2].form.Get("refresh_token") {
		t.Error("the rotated refresh token was not used: both refreshes sent the same one")
	}
	for _, r := range tk[1:] {
		if r.form.Get("resource") != f.mcpURL() {
			t.Errorf("refresh resource: got %q, want %q", r.form.Get("resource"), f.mcpURL())
		}
	}
	mustCall(t, ctx, m, srv, "echo")

	// The authorization server forgets the refresh token (expired, revoked).
	f.mu.Lock()
	clear(f.refreshes)
	f.mu.Unlock()
	clk.Add(time.Hour)
	ts, err := h.TokenSource(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.Token()
	e, ok := oauth.AsNeedsSignIn(err)
	if !ok || e.Reason != oauth.ReasonRefreshRefused || !strings.Contains(err.Error(), "switchboard auth login fake") {
		t.Fatalf("refused refresh: got %v, want needs sign-in with the login command", err)
	}
	if st, _ := m.Status(srv, ""); st.State != oauth.StateNeedsAuth || st.Command != "switchboard auth login fake" {
		t.Errorf("status: got %+v, want needs_auth with the command", st)
	}
	// A new handler (a reconnect, another process) knows at once.
	if _, err := m.Handler(srv, oauth.HandlerOptions{}).TokenSource(ctx); err == nil {
		t.Error("TokenSource after a refused refresh: got nil error")
	}
	checkSealed(t, dir, third, tk[2].form.Get("refresh_token"))
	if strings.Contains(err.Error(), tk[2].form.Get("refresh_token")) {
		t.Error("the error shows the refresh token")
	}
	// Signing in again clears it.
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCall(t, ctx, m, srv, "echo")
}

// TestRevokedRegistration: the authorization server forgets the dynamic
// registration; the refresh says so, and the next sign-in registers again.
func TestRevokedRegistration(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	clear(f.clients)
	clear(f.access) // the server now refuses the token, and the refresh meets an unknown client
	f.mu.Unlock()
	_, err := call(ctx, m, srv, oauth.HandlerOptions{}, "echo")
	e, ok := oauth.AsNeedsSignIn(err)
	if !ok || e.Reason != oauth.ReasonRegistrationGone {
		t.Fatalf("call with a revoked registration: got %v, want needs sign-in (registration gone)", err)
	}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := f.registrationCount(); n != 2 {
		t.Errorf("registrations: got %d, want 2 (the revoked one and a new one)", n)
	}
	mustCall(t, ctx, m, srv, "echo")
}

// TestClientCredentials: a machine-to-machine server gets tokens without a
// person, with the resource indicator; wrong credentials say so.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, func(f *fakeAS) { f.prmScopes = []string{"jobs"}; f.authMethods = []string{"client_secret_basic"} })
	f.addClient("robot", "robot-secret-123", "client_secret_basic")
	m, _ := newManager(t, "allow", func(o *oauth.Options) { o.OpenBrowser = nil })
	ctx := testCtx(t)
	srv := oauth.Server{Name: "robot", URL: f.mcpURL(), Settings: oauth.Settings{Grant: oauth.GrantClientCredentials, ClientID: "robot", ClientSecret: "robot-secret-123"}}
	mustCall(t, ctx, m, srv, "echo")
	_, tk := f.requests()
	if len(tk) != 1 || tk[0].form.Get("grant_type") != "client_credentials" || tk[0].form.Get("resource") != f.mcpURL() || tk[0].form.Get("scope") != "jobs" || tk[0].method != "client_secret_basic" {
		t.Fatalf("token requests: got %+v, want one client_credentials request with resource, scope jobs, basic auth", tk)
	}
	st, err := m.Status(srv, "")
	if err != nil || st.State != oauth.StateSignedIn || !st.Refreshable || st.Subject != "client robot" {
		t.Errorf("status: got %+v, %v", st, err)
	}
	// The token expires: a new one is fetched without a person.
	f.mu.Lock()
	clear(f.access)
	f.mu.Unlock()
	mustCall(t, ctx, m, srv, "echo")
	if _, tk := f.requests(); len(tk) != 2 {
		t.Errorf("token requests after expiry: got %d, want 2", len(tk))
	}

	bad := srv
	bad.Name = "robot2"
	bad.Settings.ClientSecret = "wrong-secret-456"
	_, err = call(ctx, m, bad, oauth.HandlerOptions{}, "echo")
	if e, ok := oauth.AsNeedsSignIn(err); !ok || e.Reason != oauth.ReasonClientCredsRefused {
		t.Fatalf("wrong secret: got %v, want needs sign-in (client credentials refused)", err)
	}
	if strings.Contains(err.Error(), "wrong-secret-456") {
		t.Error("the error shows the client secret")
	}
}

// TestLogoutRevokes: logout revokes the refresh and the access token
// (RFC 7009) and forgets them.
func TestLogoutRevokes(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Logout(ctx, srv, "")
	if err != nil || !res.Revoked || !res.WasSignedIn {
		t.Fatalf("Logout: got %+v, %v; want revoked", res, err)
	}
	f.mu.Lock()
	revoked, access, refresh := append([]string(nil), f.revoked...), len(f.access), len(f.refreshes)
	f.mu.Unlock()
	if strings.Join(revoked, ",") != "refresh_token,access_token" || access != 0 || refresh != 0 {
		t.Errorf("revocations: got %v (left %d access, %d refresh), want refresh then access, none left", revoked, access, refresh)
	}
	if st, _ := m.Status(srv, ""); st.State != oauth.StateNotSignedIn {
		t.Errorf("status after logout: %+v", st)
	}
	if res, err := m.Logout(ctx, srv, ""); err != nil || res.WasSignedIn {
		t.Errorf("second Logout: got %+v, %v; want nothing to do", res, err)
	}
}

// TestRedirectErrors: a declined sign-in and a redirect with another state
// fail clearly, and no code is exchanged.
func TestRedirectErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		want string
		is   error
	}{
		{mode: "deny", want: "access_denied (the user said no): the sign-in was declined"},
		{mode: "wrongstate", is: oauth.ErrStateMismatch},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, nil)
			m, _ := newManager(t, tc.mode)
			_, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL()}, oauth.LoginOptions{})
			if err == nil {
				t.Fatal("Login: got nil error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("got %v, want %v", err, tc.is)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to contain %q", err, tc.want)
			}
			if _, tk := f.requests(); len(tk) != 0 {
				t.Errorf("token requests: got %d, want none", len(tk))
			}
			if st, _ := m.Status(oauth.Server{Name: "fake", URL: f.mcpURL()}, ""); st.State != oauth.StateNotSignedIn {
				t.Errorf("status: %+v", st)
			}
		})
	}
}

// TestIssParameter: RFC 9207: an advertised iss is checked: a matching
// one signs in; a redirect naming another issuer (a mix-up) or none is
// refused, saying so, and its code is never exchanged. An iss that comes
// though the server does not advertise it is checked all the same
// (RFC 9207 §2.4; the conformance scenario auth/iss-unexpected).
func TestIssParameter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode       string
		advertised bool
		want       string
	}{
		{"allow", true, ""},
		{"wrongiss", true, `the redirect's issuer "https://evil.example.com" is not the authorization server`},
		{"noiss", true, "advertises the iss parameter (RFC 9207) but the redirect has none"},
		{"wrongiss", false, `the redirect's issuer "https://evil.example.com" is not the authorization server`},
	} {
		name := tc.mode
		if !tc.advertised {
			name += " not advertised"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, func(f *fakeAS) { f.issParam = tc.advertised })
			m, _ := newManager(t, tc.mode)
			srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
			_, err := m.Login(testCtx(t), srv, oauth.LoginOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Login with a matching iss: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Login: got %v, want it to say %q", err, tc.want)
			}
			if _, tk := f.requests(); len(tk) != 0 {
				t.Errorf("token requests: got %d, want none (the code is not used)", len(tk))
			}
			if st, _ := m.Status(srv, ""); st.State != oauth.StateNotSignedIn {
				t.Errorf("status: got %s, want not signed in", st.State)
			}
		})
	}
}

// TestIssNormalized: an iss that differs from the issuer only by a
// trailing slash is the same issuer (RFC 9207 compares identifiers; the
// conformance scenario auth/iss-normalized).
func TestIssNormalized(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, func(f *fakeAS) { f.issParam, f.issuerPath = true, "/tenant" })
	f.mu.Lock()
	f.issSent = f.issuer() + "/"
	f.mu.Unlock()
	m, _ := newManager(t, "allow")
	if _, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL()}, oauth.LoginOptions{}); err != nil {
		t.Fatalf("Login with iss %q for issuer %q: %v", f.issSent, f.issuer(), err)
	}
}

// TestResourceMismatch: protected resource metadata naming another
// resource than the server (RFC 9728 §3.3; the conformance scenario
// auth/resource-mismatch) is not used: no authorization server it names
// sees a request, no browser opens, and the error says why.
func TestResourceMismatch(t *testing.T) {
	t.Parallel()
	other := newFakeAS(t, nil) // an authorization server the bad metadata names
	f := newFakeAS(t, func(f *fakeAS) { f.prmResource, f.namedAS = "https://elsewhere.example.com/mcp", other.issuer() })
	opened := false
	m, _ := newManager(t, "allow", func(o *oauth.Options) {
		o.OpenBrowser = func(context.Context, string) (<-chan error, error) { opened = true; return nil, errors.New("no") }
	})
	_, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL()}, oauth.LoginOptions{})
	if err == nil || !strings.Contains(err.Error(), "elsewhere.example.com") {
		t.Fatalf("Login: got %v, want an error naming the mismatched resource", err)
	}
	if opened {
		t.Error("a browser was opened for metadata of another resource")
	}
	if az, tk := other.requests(); len(az)+len(tk) != 0 || other.registrationCount() != 0 {
		t.Errorf("the authorization server named by the mismatched metadata got %d authorize, %d token requests and %d registrations, want none",
			len(az), len(tk), other.registrationCount())
	}
}

// TestAuthorizationServerMigration: the server moves to another
// authorization server (its metadata names the new one, and tokens of the
// old one are refused; the conformance scenario
// auth/authorization-server-migration). The stored sign-in cannot be
// renewed: the call says to sign in again, and the sign-in discovers the
// new server, registers there, and never shows it the old server's
// client or tokens.
func TestAuthorizationServerMigration(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	first, err := m.Login(ctx, srv, oauth.LoginOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustCall(t, ctx, m, srv, "echo")

	moved := newFakeAS(t, func(b *fakeAS) { b.grantsFor = f.mcpURL() })
	f.mu.Lock()
	f.namedAS, f.trusted = moved.issuer(), moved // the old server's tokens are no longer accepted
	f.mu.Unlock()
	_, err = call(ctx, m, srv, oauth.HandlerOptions{}, "echo")
	if _, ok := oauth.AsNeedsSignIn(err); !ok || !strings.Contains(err.Error(), "switchboard auth login fake") {
		t.Fatalf("a call after the move: got %v, want needs sign-in naming the command", err)
	}
	second, err := m.Login(ctx, srv, oauth.LoginOptions{})
	if err != nil {
		t.Fatalf("signing in after the move: %v", err)
	}
	if strings.TrimSuffix(second.Issuer, "/") != moved.issuer() || second.ClientID == first.ClientID || moved.registrationCount() != 1 {
		t.Errorf("after the move: issuer %q, client %q (before %q), %d registrations at the new server; want the new issuer and a new registration there",
			second.Issuer, second.ClientID, first.ClientID, moved.registrationCount())
	}
	mustCall(t, ctx, m, srv, "echo")
	az, tk := moved.requests()
	for _, q := range az {
		if q.Get("client_id") == first.ClientID {
			t.Error("the new authorization server was shown the old client id")
		}
	}
	for _, r := range tk {
		if r.form.Get("grant_type") != "authorization_code" {
			t.Errorf("the new authorization server got a %s request, want only the code exchange (no old refresh token)", r.form.Get("grant_type"))
		}
	}
}

// TestPerUserAndURLBinding: sign-ins are kept per user, and a token is
// never sent to another URL than the one it was obtained for.
func TestPerUserAndURLBinding(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{User: "ada"}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(ctx, m, srv, oauth.HandlerOptions{User: "ada"}, "echo"); err != nil {
		t.Fatalf("ada's call: %v", err)
	}
	_, err := call(ctx, m, srv, oauth.HandlerOptions{User: "bob"}, "echo")
	if e, ok := oauth.AsNeedsSignIn(err); !ok || e.User != "bob" || e.Command() != "switchboard auth login fake --user bob" {
		t.Fatalf("bob's call: got %v, want needs sign-in for bob", err)
	}
	if _, err := call(ctx, m, srv, oauth.HandlerOptions{}, "echo"); err == nil {
		t.Fatal("a shared call used a user's sign-in")
	}
	moved := srv
	moved.URL = f.srv.URL + "/elsewhere/mcp"
	if _, err := m.Handler(moved, oauth.HandlerOptions{User: "ada"}).TokenSource(ctx); err == nil || !strings.Contains(err.Error(), oauth.ReasonResourceChanged) {
		t.Errorf("a moved server: got %v, want needs sign-in because the URL changed", err)
	}
	sts, err := m.Statuses()
	if err != nil || len(sts) != 1 || sts[0].User != "ada" {
		t.Errorf("Statuses: got %+v, %v", sts, err)
	}
}

// TestNothingSecretShows: settings, statuses and errors carry no secret, in
// text or JSON.
func TestNothingSecretShows(t *testing.T) {
	t.Parallel()
	set := oauth.Settings{ClientID: "c", ClientSecret: "very-secret-value"}
	for _, s := range []string{set.String(), fmt.Sprintf("%v", set), fmt.Sprintf("%+v", set), fmt.Sprintf("%#v", set)} {
		if strings.Contains(s, "very-secret-value") {
			t.Errorf("settings print the secret: %s", s)
		}
	}
	f := newFakeAS(t, func(f *fakeAS) { f.dcrMethod = "client_secret_basic" })
	m, dir := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	st, err := m.Login(ctx, srv, oauth.LoginOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	var secrets []string
	for k := range f.access {
		secrets = append(secrets, k)
	}
	for k := range f.refreshes {
		secrets = append(secrets, k)
	}
	for _, c := range f.clients {
		secrets = append(secrets, c.secret)
	}
	f.mu.Unlock()
	js, _ := json.Marshal(st)
	for _, sec := range secrets {
		if sec != "" && (strings.Contains(string(js), sec) || strings.Contains(fmt.Sprintf("%+v", st), sec)) {
			t.Errorf("the status shows a secret: %s", js)
		}
	}
	checkSealed(t, dir, secrets...)

	// Secrets gives the redactor every one of them.
	known, err := m.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secrets {
		if sec != "" && !slices.Contains(known, sec) {
			t.Errorf("Secrets() misses a stored secret (of %d known)", len(known))
		}
	}
}

// TestStoreKeyReplaced: records that no longer decrypt are a clear
// needs-sign-in, not garbage.
func TestStoreKeyReplaced(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, dir := newManager(t, "allow")
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "oauth", "key"), make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	m2, err := oauth.New(oauth.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m2.Handler(srv, oauth.HandlerOptions{}).TokenSource(ctx)
	if e, ok := oauth.AsNeedsSignIn(err); !ok || e.Reason != oauth.ReasonStoreUnreadable || !strings.Contains(err.Error(), "does not decrypt") {
		t.Fatalf("got %v, want needs sign-in: the store does not decrypt", err)
	}
}

// TestLoginLeavesNothing: once a sign-in returns, its redirect listener is
// closed, and the browser command has ended.
func TestLoginLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, _ := newManager(t, "allow")
	var shown string
	if _, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL()}, oauth.LoginOptions{OnURL: func(u string) { shown = u }}); err != nil {
		t.Fatal(err)
	}
	az, _ := f.requests()
	if !strings.HasPrefix(shown, f.srv.URL+"/authorize?") || !strings.Contains(shown, "state=") {
		t.Errorf("OnURL got %q, want the authorization URL", shown)
	}
	redirect, err := url.Parse(az[0].Get("redirect_uri"))
	if err != nil || redirect.Hostname() != "127.0.0.1" || redirect.Path != "/callback" {
		t.Fatalf("redirect_uri %q: want http://127.0.0.1:PORT/callback", az[0].Get("redirect_uri"))
	}
	if c, err := net.Dial("tcp", redirect.Host); err == nil {
		c.Close()
		t.Errorf("the redirect listener %s still accepts connections after Login returned", redirect.Host)
	}
}

// TestLoginTimeoutForgetsRegistration: an authorization server that shows
// an error page instead of redirecting (it forgot the client) ends the
// sign-in at the timeout, and the next sign-in registers again.
//
// Only the sign-in that must time out has a short timeout (a second manager
// on the same state directory): the two that must succeed start a browser
// process each, which a loaded machine can take longer than that to run.
func TestLoginTimeoutForgetsRegistration(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	m, dir := newManager(t, "allow")
	short, err := oauth.New(oauth.Options{StateDir: dir, OpenBrowser: scriptedBrowser(t, "allow"), LoginTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	clear(f.clients)
	f.mu.Unlock()
	_, err = short.Login(ctx, srv, oauth.LoginOptions{})
	if err == nil || !strings.Contains(err.Error(), "no redirect arrived within 1s") || !strings.Contains(err.Error(), "registers again") {
		t.Fatalf("Login against a forgotten client: got %v, want a timeout that says the next login registers again", err)
	}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatalf("Login after the timeout: %v", err)
	}
	if n := f.registrationCount(); n != 2 {
		t.Errorf("registrations: got %d, want 2", n)
	}
}

// TestConcurrentRefresh: many requests, in two processes' worth of managers
// on one state directory, find the token expired at once; the refresh
// token is spent once, and all of them get the new access token.
func TestConcurrentRefresh(t *testing.T) {
	t.Parallel()
	f := newFakeAS(t, nil)
	clk := &clock{t: time.Now()}
	m1, dir := newManager(t, "allow", func(o *oauth.Options) { o.Now = clk.Now })
	m2, err := oauth.New(oauth.Options{StateDir: dir, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m1.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Hour)
	var wg sync.WaitGroup
	tokens := make([]string, 16)
	errs := make([]error, 16)
	for i := range tokens {
		m := m1
		if i%2 == 1 {
			m = m2
		}
		wg.Go(func() {
			ts, err := m.Handler(srv, oauth.HandlerOptions{}).TokenSource(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			tok, err := ts.Token()
			if err != nil {
				errs[i] = err
				return
			}
			tokens[i] = tok.AccessToken
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if tokens[i] != tokens[0] {
			t.Errorf("request %d got another token than request 0", i)
		}
	}
	if _, tk := f.requests(); len(tk) != 2 {
		t.Errorf("token requests: got %d, want the exchange and one refresh", len(tk))
	}
}
