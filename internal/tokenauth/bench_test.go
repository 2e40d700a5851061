package tokenauth_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// benchAuthenticate measures Authenticate for one request carrying token,
// after one warm-up request, and fails if a measured request reached the
// authorization server.
func benchAuthenticate(b *testing.B, a *tokenauth.Authenticator, as *authServer, token string) {
	req := httptest.NewRequest(http.MethodPost, gatewayURL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if _, refusal := a.Authenticate(req); refusal != nil {
		b.Fatalf("warm-up: %v", refusal)
	}
	before := as.jwksHits.Load() + as.introHits.Load() + as.metaHits.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, refusal := a.Authenticate(req); refusal != nil {
			b.Fatal(refusal)
		}
	}
	b.StopTimer()
	if n := as.jwksHits.Load() + as.introHits.Load() + as.metaHits.Load() - before; n != 0 {
		b.Fatalf("%d requests reached the authorization server while measuring", n)
	}
}

// BenchmarkAuthenticate is the cost of validating a request's token with a
// warm cache: a JWT whose key set is cached and whose check is cached,
// and an opaque token whose introspection is cached. Neither makes a
// network round trip per request.
func BenchmarkAuthenticate(b *testing.B) {
	rs, _, es, ed := testKeys(b)
	for _, k := range []signingKey{rs, es, ed} {
		b.Run("jwt-"+string(k.alg), func(b *testing.B) {
			clk := newClock()
			as := newAuthServer(b, k)
			a := jwtAuth(b, as, clk, nil)
			benchAuthenticate(b, a, as, k.sign(b, claimsFor(as, clk, nil)))
		})
	}
	b.Run("introspection", func(b *testing.B) {
		clk := newClock()
		as := newAuthServer(b)
		as.activate("opaque-bench-token-0123456789abcdef", claimsFor(as, clk, nil))
		a := introAuth(b, as, clk, nil)
		benchAuthenticate(b, a, as, "opaque-bench-token-0123456789abcdef")
	})
}

// BenchmarkFirstSight is the cost of a JWT the cache does not hold (the
// key set cached): the signature check, paid once per token per CacheTTL.
// The cache holds one token and the loop cycles through 64.
func BenchmarkFirstSight(b *testing.B) {
	rs, _, es, ed := testKeys(b)
	for _, k := range []signingKey{rs, es, ed} {
		b.Run("jwt-"+string(k.alg), func(b *testing.B) {
			clk := newClock()
			as := newAuthServer(b, k)
			a := jwtAuth(b, as, clk, func(o *tokenauth.Options) { o.CacheSize = 1 })
			reqs := make([]*http.Request, 64)
			for i := range reqs {
				reqs[i] = httptest.NewRequest(http.MethodPost, gatewayURL+"/mcp", nil)
				reqs[i].Header.Set("Authorization", "Bearer "+k.sign(b, claimsFor(as, clk, map[string]any{"jti": strconv.Itoa(i)})))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, refusal := a.Authenticate(reqs[i%len(reqs)]); refusal != nil {
					b.Fatal(refusal)
				}
				i++
			}
			if n := as.jwksHits.Load(); n != 1 {
				b.Fatalf("the key set was fetched %d times, want 1", n)
			}
		})
	}
}
