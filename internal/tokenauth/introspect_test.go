package tokenauth_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// introAuth returns an authenticator that introspects every token at as.
func introAuth(t testing.TB, as *authServer, clk *testClock, mod func(*tokenauth.Options)) *tokenauth.Authenticator {
	t.Helper()
	o := tokenauth.Options{
		Resource:      gatewayURL,
		Issuer:        as.issuer,
		Introspection: &tokenauth.Introspection{URL: as.issuer + "/introspect"},
		Now:           clk.Now,
	}
	if mod != nil {
		mod(&o)
	}
	return newAuth(t, o)
}

// TestIntrospection checks active and inactive tokens, and that answers are
// cached: a token seen before costs no request until the cache's TTL or
// the token's expiry, whichever comes first; an inactive one is refused
// without asking again for NegativeTTL.
func TestIntrospection(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	a := introAuth(t, as, clk, func(o *tokenauth.Options) {
		o.CacheTTL = time.Minute
		o.NegativeTTL = 5 * time.Second
		o.GroupsClaim = "groups"
		o.GroupViews = map[string][]string{"eng": {"default"}}
	})
	as.activate("tok-alice", claimsFor(as, clk, map[string]any{"groups": []string{"eng"}}))

	got := identityOf(t, serve(t, a, "/mcp", "tok-alice"))
	if got.User != "alice" || got.Method != tokenauth.MethodIntrospection || len(got.Groups) != 1 {
		t.Errorf("identity %+v: want alice by introspection, in group eng", got)
	}
	for range 5 {
		identityOf(t, serve(t, a, "/mcp", "tok-alice"))
	}
	if n := as.introHits.Load(); n != 1 {
		t.Errorf("6 requests with one token: %d introspections, want 1", n)
	}

	// Revoked at the server: still accepted from the cache until its TTL.
	as.revoke("tok-alice")
	clk.Add(59 * time.Second)
	identityOf(t, serve(t, a, "/mcp", "tok-alice"))
	clk.Add(time.Second)
	rec := serve(t, a, "/mcp", "tok-alice")
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Header().Get("WWW-Authenticate"), `error="invalid_token", error_description="the token is not active`) {
		t.Fatalf("after the cache TTL a revoked token: status %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	if n := as.introHits.Load(); n != 2 {
		t.Errorf("introspections %d, want 2", n)
	}

	// Inactive answers are cached briefly.
	for range 3 {
		serve(t, a, "/mcp", "tok-alice")
	}
	if n := as.introHits.Load(); n != 2 {
		t.Errorf("an inactive token within NegativeTTL was introspected again: %d, want 2", n)
	}
	clk.Add(5 * time.Second)
	serve(t, a, "/mcp", "tok-alice")
	if n := as.introHits.Load(); n != 3 {
		t.Errorf("after NegativeTTL: introspections %d, want 3", n)
	}
}

// TestIntrospectionExpiry checks that a cached answer does not outlive the
// token's exp.
func TestIntrospectionExpiry(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	a := introAuth(t, as, clk, func(o *tokenauth.Options) { o.CacheTTL = time.Hour; o.Leeway = time.Second })
	as.activate("short", claimsFor(as, clk, map[string]any{"exp": clk.Now().Add(10 * time.Second).Unix()}))
	identityOf(t, serve(t, a, "/mcp", "short"))
	clk.Add(10 * time.Second)
	identityOf(t, serve(t, a, "/mcp", "short")) // within the leeway, from the cache
	if n := as.introHits.Load(); n != 1 {
		t.Fatalf("introspections %d, want 1", n)
	}
	clk.Add(2 * time.Second)
	// Past exp and leeway: the cache entry is gone, and the server (which
	// still calls it active, as some do until they clean up) is asked and
	// its exp checked here.
	rec := serve(t, a, "/mcp", "short")
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Header().Get("WWW-Authenticate"), "the token has expired") {
		t.Errorf("expired token: status %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	if n := as.introHits.Load(); n != 2 {
		t.Errorf("introspections %d, want 2", n)
	}
}

// TestIntrospectionChecks checks what an active token must also satisfy.
func TestIntrospectionChecks(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	a := introAuth(t, as, clk, nil)
	tests := []struct {
		name  string
		extra map[string]any
		desc  string
	}{
		{"wrong audience", map[string]any{"aud": "https://other.example.com"}, "not for this gateway"},
		{"no audience", map[string]any{"aud": nil}, "no audience"},
		{"wrong issuer", map[string]any{"iss": "https://evil.example.com"}, "issued by 'https://evil.example.com'"},
		{"expired", map[string]any{"exp": clk.Now().Add(-time.Hour).Unix()}, "has expired"},
		{"not yet valid", map[string]any{"nbf": clk.Now().Add(time.Hour).Unix()}, "not valid yet"},
		{"no user", map[string]any{"sub": nil}, "no 'sub' claim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := "tok-" + strings.ReplaceAll(tt.name, " ", "-")
			as.activate(token, claimsFor(as, clk, tt.extra))
			rec := serve(t, a, "/mcp", token)
			if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Header().Get("WWW-Authenticate"), tt.desc) {
				t.Errorf("status %d, WWW-Authenticate %q: want 401 saying %q", rec.Code, rec.Header().Get("WWW-Authenticate"), tt.desc)
			}
		})
	}
	// No iss and no exp in the answer: both are optional in RFC 7662.
	as.activate("minimal", map[string]any{"sub": "carol", "aud": gatewayURL, "scope": "a b"})
	if got := identityOf(t, serve(t, a, "/mcp", "minimal")); got.User != "carol" || len(got.Scopes) != 2 {
		t.Errorf("minimal answer: identity %+v", got)
	}
}

// TestIntrospectionClientAuth checks both ways of authenticating the
// gateway to the endpoint, and that wrong credentials are the gateway's
// problem (503, logged with the fix), not the client's.
func TestIntrospectionClientAuth(t *testing.T) {
	t.Parallel()
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			as := newAuthServer(t)
			as.clientID, as.clientSecret, as.postAuth = "switchboard", "s3cr3t:&=", method == "client_secret_post"
			const token = "opaque-4f1c9a7e"
			as.activate(token, claimsFor(as, clk, nil))
			good := introAuth(t, as, clk, func(o *tokenauth.Options) {
				o.Introspection.ClientID, o.Introspection.ClientSecret, o.Introspection.AuthMethod = "switchboard", "s3cr3t:&=", method
			})
			identityOf(t, serve(t, good, "/mcp", token))

			var logs logBuffer
			bad := introAuth(t, as, clk, func(o *tokenauth.Options) {
				o.Introspection.ClientID, o.Introspection.ClientSecret, o.Introspection.AuthMethod = "switchboard", "wrong-secret", method
				o.Logger = logs.logger()
			})
			rec := serve(t, bad, "/mcp", token)
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("WWW-Authenticate") != "" || rec.Header().Get("Retry-After") == "" {
				t.Errorf("wrong client secret: status %d, WWW-Authenticate %q, Retry-After %q: want 503, no challenge, a Retry-After",
					rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Header().Get("Retry-After"))
			}
			if !strings.Contains(logs.String(), "check the introspection client id and secret") {
				t.Errorf("log does not say how to fix it:\n%s", logs.String())
			}
			for _, secret := range []string{"wrong-secret", token} {
				if strings.Contains(logs.String(), secret) || strings.Contains(rec.Body.String(), secret) {
					t.Errorf("%q appears in the log or the response", secret)
				}
			}
		})
	}
}

// TestIntrospectionSharedInFlight checks that concurrent requests with the
// same new token cause one introspection.
func TestIntrospectionSharedInFlight(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	as.introGate = make(chan struct{})
	release := sync.OnceFunc(func() { close(as.introGate) })
	t.Cleanup(release) // before the server's Close, which waits for its handlers
	as.activate("tok", claimsFor(as, clk, nil))
	a := introAuth(t, as, clk, nil)
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() { codes[i] = serve(t, a, "/mcp", "tok").Code })
	}
	// Let the one introspection through once it has arrived.
	deadline := time.Now().Add(10 * time.Second)
	for as.introHits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	if got := as.introHits.Load(); got != 1 {
		t.Errorf("%d concurrent requests: %d introspections, want 1", n, got)
	}
}

// TestCacheSizeBound checks that the cache holds at most CacheSize tokens.
func TestCacheSizeBound(t *testing.T) {
	t.Parallel()
	clk := newClock()
	as := newAuthServer(t)
	a := introAuth(t, as, clk, func(o *tokenauth.Options) { o.CacheSize = 2 })
	for _, tok := range []string{"t1", "t2", "t3"} {
		as.activate(tok, claimsFor(as, clk, nil))
		identityOf(t, serve(t, a, "/mcp", tok))
	}
	identityOf(t, serve(t, a, "/mcp", "t3"))
	identityOf(t, serve(t, a, "/mcp", "t2"))
	if n := as.introHits.Load(); n != 3 {
		t.Fatalf("introspections %d, want 3 (t2 and t3 cached)", n)
	}
	identityOf(t, serve(t, a, "/mcp", "t1"))
	if n := as.introHits.Load(); n != 4 {
		t.Errorf("t1, the least recently used, should have been evicted: introspections %d, want 4", n)
	}
}
