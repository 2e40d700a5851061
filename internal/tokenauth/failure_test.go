package tokenauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// TestKeysUnavailable checks an authorization server whose key set cannot
// be fetched: JWTs get 503 (the token may be fine) with the cause in the
// log and not in the response, opaque tokens keep working by
// introspection, and once the set can be fetched again JWTs are accepted.
func TestKeysUnavailable(t *testing.T) {
	t.Parallel()
	k := newSigningKey(t, "k1")
	clk := newClock()
	as := newAuthServer(t, k)
	as.jwksStatus.Store(http.StatusBadGateway)
	var logs logBuffer
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) {
		o.Introspection = &tokenauth.Introspection{URL: as.issuer + "/introspect"}
		o.Logger = logs.logger()
	})
	jwtToken := k.sign(t, claimsFor(as, clk, nil))
	rec := serve(t, a, "/mcp", jwtToken)
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", rec.Code, rec.Body)
	}
	if !strings.Contains(rec.Body.String(), "signing keys are not available") || strings.Contains(rec.Body.String(), as.issuer) {
		t.Errorf("body %s: want the reason, without the server's address", rec.Body)
	}
	if !strings.Contains(logs.String(), "HTTP 502") || !strings.Contains(logs.String(), as.issuer+"/jwks") {
		t.Errorf("the log does not give the cause:\n%s", logs.String())
	}

	as.activate("opaque-1", claimsFor(as, clk, map[string]any{"sub": "bob"}))
	if got := identityOf(t, serve(t, a, "/mcp", "opaque-1")); got.User != "bob" {
		t.Errorf("introspection while the key set is down: user %q, want bob", got.User)
	}

	// Within KeysMinInterval the set is not fetched again for requests.
	serve(t, a, "/mcp", jwtToken)
	if n := as.jwksHits.Load(); n != 1 {
		t.Errorf("key set fetched %d times, want 1", n)
	}
	as.jwksStatus.Store(0)
	clk.Add(tokenauth.DefaultKeysMinInterval)
	identityOf(t, serve(t, a, "/mcp", jwtToken))
}

// TestDiscovery checks that the key set is found through the authorization
// server's metadata when no URL is configured — RFC 8414 with path
// insertion, and OpenID discovery appended to the issuer (Keycloak, Entra
// ID, Okta) — and that metadata naming another issuer is refused, logged
// with the fix.
func TestDiscovery(t *testing.T) {
	t.Parallel()
	k := newSigningKey(t, "k1")
	for _, layout := range []string{"/.well-known/oauth-authorization-server/realms/team", "/realms/team/.well-known/openid-configuration"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			as := newAuthServer(t, k)
			issuer := as.issuer + "/realms/team"
			mux := http.NewServeMux()
			mux.HandleFunc("GET "+layout, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"issuer": issuer, "jwks_uri": as.issuer + "/jwks"})
			})
			disc := httptest.NewServer(mux)
			t.Cleanup(disc.Close)
			issuer = disc.URL + "/realms/team"
			a := newAuth(t, tokenauth.Options{Resource: gatewayURL, Issuer: issuer, Now: clk.Now})
			tok := k.sign(t, claimsFor(as, clk, map[string]any{"iss": issuer}))
			identityOf(t, serve(t, a, "/mcp", tok))
		})
	}

	t.Run("wrong issuer", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		as := newAuthServer(t, k)
		as.metaIssuer = "https://login.example.com/other-tenant"
		var logs logBuffer
		a := newAuth(t, tokenauth.Options{Resource: gatewayURL, Issuer: as.issuer, Now: clk.Now, Logger: logs.logger()})
		rec := serve(t, a, "/mcp", k.sign(t, claimsFor(as, clk, nil)))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", rec.Code)
		}
		want := `names the issuer \"https://login.example.com/other-tenant\", not \"` + as.issuer + `\": set the issuer to exactly the server's issuer`
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
		if as.jwksHits.Load() != 0 {
			t.Error("the key set named by metadata of another issuer was fetched")
		}
	})

	t.Run("no metadata", func(t *testing.T) {
		t.Parallel()
		clk := newClock()
		srv := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(srv.Close)
		var logs logBuffer
		a := newAuth(t, tokenauth.Options{Resource: gatewayURL, Issuer: srv.URL + "/tenant", Now: clk.Now, Logger: logs.logger()})
		k := newSigningKey(t, "k")
		rec := serve(t, a, "/mcp", k.sign(t, map[string]any{"iss": srv.URL + "/tenant"}))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(logs.String(), "publishes no metadata (tried "+srv.URL+"/.well-known/oauth-authorization-server/tenant") {
			t.Errorf("status %d; log:\n%s", rec.Code, logs.String())
		}
	})
}

// TestRun checks that Run fetches the keys at once and on schedule, logs
// what it accepts, and returns nil, promptly, when cancelled.
func TestRun(t *testing.T) {
	t.Parallel()
	k := newSigningKey(t, "k1")
	as := newAuthServer(t, k)
	var logs logBuffer
	a := newAuth(t, tokenauth.Options{Resource: gatewayURL, Issuer: as.issuer, JWKSURL: as.issuer + "/jwks",
		KeysRefresh: 20 * time.Millisecond, Logger: logs.logger()})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = a.Run(ctx) })
	deadline := time.Now().Add(10 * time.Second)
	for as.jwksHits.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := as.jwksHits.Load(); n < 3 {
		t.Errorf("Run fetched the key set %d times in 10s with a 20ms refresh", n)
	}
	cancel()
	wg.Wait()
	if runErr != nil {
		t.Errorf("Run returned %v after cancellation, want nil", runErr)
	}
	if !strings.Contains(logs.String(), "signing keys loaded") {
		t.Errorf("log:\n%s", logs.String())
	}
	// A token with a known key needs no fetch after Run has loaded the set.
	before := as.jwksHits.Load()
	identityOf(t, serve(t, a, "/mcp", k.sign(t, map[string]any{"iss": as.issuer, "aud": gatewayURL, "sub": "x", "exp": time.Now().Add(time.Hour).Unix(), "scope": ""})))
	if as.jwksHits.Load() != before {
		t.Error("a request fetched the key set Run had loaded")
	}
}

// TestOptionsErrors checks that each mistake in the options is named, with
// what to do.
func TestOptionsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*tokenauth.Options)
		want string
	}{
		{"no resource", func(o *tokenauth.Options) { o.Resource = "" }, "Resource: required"},
		{"http resource", func(o *tokenauth.Options) { o.Resource = "http://gw.example.com" }, "uses http on a non-loopback host"},
		{"resource with query", func(o *tokenauth.Options) { o.Resource = "https://gw.example.com/?x=1" }, "has a query or fragment"},
		{"relative issuer", func(o *tokenauth.Options) { o.Issuer = "/realms/x" }, "Issuer: \"/realms/x\" is not an absolute http(s) URL"},
		{"alg none", func(o *tokenauth.Options) { o.Algorithms = []string{"none"} }, `"none" means unsigned tokens`},
		{"HMAC", func(o *tokenauth.Options) { o.Algorithms = []string{"RS256", "HS256"} }, "HS256 needs a secret shared"},
		{"unknown alg", func(o *tokenauth.Options) { o.Algorithms = []string{"RS1"} }, `"RS1" is not a JWS signature algorithm`},
		{"group views without claim", func(o *tokenauth.Options) { o.GroupViews = map[string][]string{"eng": {"eng"}} }, "no groups claim is set"},
		{"claim without views", func(o *tokenauth.Options) { o.GroupsClaim = "groups" }, "no view is granted to any group"},
		{"bad scope", func(o *tokenauth.Options) { o.Scopes = []string{`a"b`} }, "is not a valid scope"},
		{"huge leeway", func(o *tokenauth.Options) { o.Leeway = time.Hour }, "a leeway tolerates clock differences"},
		{"half a client", func(o *tokenauth.Options) { o.Introspection = &tokenauth.Introspection{ClientID: "x"} }, "give both the client id and the client secret"},
		{"auth method", func(o *tokenauth.Options) {
			o.Introspection = &tokenauth.Introspection{AuthMethod: "private_key_jwt"}
		}, `"private_key_jwt" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tokenauth.Options{Resource: gatewayURL, Issuer: "https://login.example.com"}
			tt.mod(&o)
			_, err := tokenauth.New(o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error with %q", err, tt.want)
			}
			var oe *tokenauth.OptionsError
			if !errors.As(err, &oe) {
				t.Errorf("error %v is no *OptionsError", err)
			}
		})
	}
}

// TestNoGoroutineLeft checks that once Run has returned and requests are
// answered, no goroutine of the package is left: validation, key fetches
// and introspection run on the caller's goroutine. It is not parallel, so
// that no other test's request is in the package while it looks.
func TestNoGoroutineLeft(t *testing.T) {
	k := newSigningKey(t, "k1")
	clk := newClock()
	as := newAuthServer(t, k)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) {
		o.Introspection = &tokenauth.Introspection{URL: as.issuer + "/introspect"}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	as.activate("opaque", claimsFor(as, clk, nil))
	identityOf(t, serve(t, a, "/mcp", "opaque"))
	identityOf(t, serve(t, a, "/mcp", k.sign(t, claimsFor(as, clk, nil))))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "internal/tokenauth.(") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the package remain:\n%s", stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRequestWaitsForRunsFetch checks that a request arriving while Run's
// first fetch of the key set is under way waits for it, rather than being
// refused because a fetch started moments ago.
func TestRequestWaitsForRunsFetch(t *testing.T) {
	t.Parallel()
	k := newSigningKey(t, "k1")
	clk := newClock()
	as := newAuthServer(t, k)
	as.jwksGate = make(chan struct{})
	release := sync.OnceFunc(func() { close(as.jwksGate) })
	t.Cleanup(release) // before the server's Close, which waits for its handlers
	a := jwtAuth(t, as, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for as.jwksHits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	codes := make(chan int, 1)
	go func() { codes <- serve(t, a, "/mcp", k.sign(t, claimsFor(as, clk, nil))).Code }()
	select {
	case c := <-codes:
		t.Fatalf("the request was answered %d while the key set was still being fetched", c)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if c := <-codes; c != http.StatusOK {
		t.Errorf("status %d, want 200", c)
	}
	if n := as.jwksHits.Load(); n != 1 {
		t.Errorf("key set fetched %d times, want 1", n)
	}
}
