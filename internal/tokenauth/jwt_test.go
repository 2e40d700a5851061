package tokenauth_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// jwtAuth returns an authenticator that validates JWTs from as.
func jwtAuth(t testing.TB, as *authServer, clk *testClock, mod func(*tokenauth.Options)) *tokenauth.Authenticator {
	t.Helper()
	o := tokenauth.Options{
		Resource: gatewayURL,
		Issuer:   as.issuer,
		JWKSURL:  as.issuer + "/jwks",
		Scopes:   []string{"mcp:tools"},
		Now:      clk.Now,
	}
	if mod != nil {
		mod(&o)
	}
	return newAuth(t, o)
}

// TestJWTAccepted checks that a valid token signed with each kind of key is
// accepted and mapped to its identity, which reaches the handler both
// directly and as the MCP SDK's TokenInfo.
func TestJWTAccepted(t *testing.T) {
	t.Parallel()
	rs, ps, es, ed := testKeys(t)
	for _, k := range []signingKey{rs, ps, es, ed} {
		t.Run(string(k.alg), func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			as := newAuthServer(t, rs, es, ed)
			a := jwtAuth(t, as, clk, nil)
			got := identityOf(t, serve(t, a, "/mcp", k.sign(t, claimsFor(as, clk, nil))))
			want := seen{User: "alice", Method: tokenauth.MethodJWT, Scopes: []string{"mcp:tools"}, SDK: "alice"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJWTRefused is the table of tokens that must be refused, each with the
// reason the client is told.
func TestJWTRefused(t *testing.T) {
	t.Parallel()
	rs, _, es, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs, es)
	now := clk.Now()
	valid := func(extra map[string]any) string { return rs.sign(t, claimsFor(as, clk, extra)) }

	tests := []struct {
		name  string
		token string
		desc  string // a part of the challenge's error_description
	}{
		{"expired", valid(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), "the token has expired"},
		{"not yet valid", valid(map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}), "not valid yet"},
		{"issued in the future", valid(map[string]any{"iat": now.Add(2 * time.Minute).Unix()}), "issued in the future"},
		{"no expiry", valid(map[string]any{"exp": nil}), "no expiry"},
		{"wrong audience", valid(map[string]any{"aud": "https://other.example.com/mcp"}), "issued for 'https://other.example.com/mcp', not for this gateway"},
		{"audience of a non-endpoint path", valid(map[string]any{"aud": gatewayURL + "/admin"}), "not for this gateway"},
		{"no audience", valid(map[string]any{"aud": nil}), "no audience"},
		{"wrong issuer", valid(map[string]any{"iss": "https://evil.example.com"}), "issued by 'https://evil.example.com'"},
		{"missing sub", valid(map[string]any{"sub": nil}), `no 'sub' claim`},
		{"alg none", unsigned(t, claimsFor(as, clk, nil)), `signed with 'none'`},
		{"HS256 with the public key as secret", hmacWithPublicKey(t, rs, claimsFor(as, clk, nil)), `signed with 'HS256'`},
		{"tampered signature", tamperSignature(valid(nil)), "signature does not verify"},
		{"tampered claims", tamperClaims(t, valid(nil), map[string]any{"sub": "mallory"}), "signature does not verify"},
		{"signed by a key the server does not publish", newSigningKey(t, "ec-1").sign(t, claimsFor(as, clk, nil)), "signature does not verify"},
		{"unknown key id", newSigningKey(t, "stranger").sign(t, claimsFor(as, clk, nil)), "unknown key id"},
		{"not a JWT", "opaque-token-value", "validates JWT access tokens only"},
		{"JWT shape with a broken signature part", "eyJhbGciOiJSUzI1NiJ9.e30.!!!", "not a well-formed signed JWT"},
	}
	a := jwtAuth(t, as, clk, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(t, a, "/mcp", tt.token)
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401; body %s", rec.Code, rec.Body)
			}
			ch := rec.Header().Get("WWW-Authenticate")
			for _, part := range []string{
				`Bearer error="invalid_token"`,
				`resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`,
				`scope="mcp:tools"`,
			} {
				if !strings.Contains(ch, part) {
					t.Errorf("WWW-Authenticate %q lacks %s", ch, part)
				}
			}
			if !strings.Contains(ch, tt.desc) {
				t.Errorf("WWW-Authenticate %q: want error_description with %q", ch, tt.desc)
			}
			var body struct {
				Type    string `json:"error_type"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Type != "authentication_error" {
				t.Errorf("body %s: want an authentication_error (decode error %v)", rec.Body, err)
			}
			if strings.Contains(rec.Body.String(), tt.token) {
				t.Errorf("the response repeats the token: %s", rec.Body)
			}
		})
	}
	if n := as.jwksHits.Load(); n > 1 {
		// The first token fetched the set; the unknown key id came within
		// KeysMinInterval of it, so it did not cause another fetch.
		t.Errorf("JWK set fetched %d times, want 1", n)
	}
}

// TestJWTLeeway checks the clock tolerance on either side of exp.
func TestJWTLeeway(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.Leeway = 30 * time.Second })
	now := clk.Now()
	identityOf(t, serve(t, a, "/mcp", rs.sign(t, claimsFor(as, clk, map[string]any{"exp": now.Add(-20 * time.Second).Unix()}))))
	identityOf(t, serve(t, a, "/mcp", rs.sign(t, claimsFor(as, clk, map[string]any{"nbf": now.Add(20 * time.Second).Unix()}))))
	if rec := serve(t, a, "/mcp", rs.sign(t, claimsFor(as, clk, map[string]any{"exp": now.Add(-40 * time.Second).Unix()}))); rec.Code != http.StatusUnauthorized {
		t.Errorf("a token 40s past exp with 30s leeway: status %d, want 401", rec.Code)
	}
}

// TestJWTAudiences checks which aud values name the gateway.
func TestJWTAudiences(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.Audiences = []string{"api://switchboard"} })
	for _, aud := range []any{
		gatewayURL,
		gatewayURL + "/",
		gatewayURL + "/mcp",
		gatewayURL + "/mcp/eng",
		gatewayURL + "/sse",
		[]string{"https://other.example.com", gatewayURL + "/mcp/"},
		"api://switchboard",
	} {
		tok := rs.sign(t, claimsFor(as, clk, map[string]any{"aud": aud}))
		if rec := serve(t, a, "/mcp", tok); rec.Code != http.StatusOK {
			t.Errorf("aud %v: status %d, want 200; %s", aud, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
}

// TestKeyRotation checks that a token signed with a key id the cached set
// lacks makes the authenticator refetch the set — but not more than once
// per KeysMinInterval, however many such tokens arrive — and that the new
// key is then accepted.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	old := newSigningKey(t, "2025")
	next := newSigningKey(t, "2026")
	clk := newClock()
	as := newAuthServer(t, old)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.KeysMinInterval = time.Minute })

	identityOf(t, serve(t, a, "/mcp", old.sign(t, claimsFor(as, clk, nil))))
	if n := as.jwksHits.Load(); n != 1 {
		t.Fatalf("after the first token: JWK set fetched %d times, want 1", n)
	}
	// The server starts signing with a key it has not published yet: an
	// attacker's random key ids look the same. Within the interval no
	// refetch happens.
	rotated := next.sign(t, claimsFor(as, clk, nil))
	for range 20 {
		if rec := serve(t, a, "/mcp", rotated); rec.Code != http.StatusUnauthorized {
			t.Fatalf("unpublished key: status %d, want 401", rec.Code)
		}
	}
	if n := as.jwksHits.Load(); n != 1 {
		t.Fatalf("20 tokens with an unknown key id within the interval fetched the set %d times, want 1 in all", n)
	}
	// The server publishes the new key; once the interval has passed, the
	// next such token refetches the set and is accepted.
	as.setKeys(old, next)
	clk.Add(time.Minute)
	identityOf(t, serve(t, a, "/mcp", next.sign(t, claimsFor(as, clk, nil))))
	if n := as.jwksHits.Load(); n != 2 {
		t.Errorf("after the rotation: JWK set fetched %d times, want 2", n)
	}
	identityOf(t, serve(t, a, "/mcp", old.sign(t, claimsFor(as, clk, map[string]any{"sub": "bob"}))))
	if n := as.jwksHits.Load(); n != 2 {
		t.Errorf("a known key refetched the set: %d fetches, want 2", n)
	}
}

// TestWithdrawnKey checks that a token checked with a key the server later
// withdraws is not trusted from the cache once the set is refetched.
func TestWithdrawnKey(t *testing.T) {
	t.Parallel()
	k1, k2 := newSigningKey(t, "k1"), newSigningKey(t, "k2")
	clk := newClock()
	as := newAuthServer(t, k1, k2)
	a := jwtAuth(t, as, clk, func(o *tokenauth.Options) { o.KeysMinInterval = time.Second })
	tok := k1.sign(t, claimsFor(as, clk, nil))
	identityOf(t, serve(t, a, "/mcp", tok))

	k3 := newSigningKey(t, "k3")
	as.setKeys(k2, k3)
	clk.Add(time.Second)
	// A token with the new key id makes the set refetch, without k1.
	identityOf(t, serve(t, a, "/mcp", k3.sign(t, claimsFor(as, clk, nil))))
	if rec := serve(t, a, "/mcp", tok); rec.Code != http.StatusUnauthorized {
		t.Errorf("a token signed with a withdrawn key: status %d, want 401", rec.Code)
	}
}

// unsigned returns an "alg": "none" token.
func unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return head + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
}

// hmacWithPublicKey signs with HS256, using the RSA public key (PEM, as it
// is published) as the shared secret: the algorithm-confusion attack.
func hmacWithPublicKey(t testing.TB, k signingKey, claims map[string]any) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return signJWT(t, jose.HS256, secret, k.kid, claims)
}

// tamperSignature flips one bit of the signature.
func tamperSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.')
	sig, _ := base64.RawURLEncoding.DecodeString(tok[i+1:])
	sig[len(sig)/2] ^= 1
	return tok[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}

// tamperClaims replaces claims in the payload, keeping the signature.
func tamperClaims(t testing.TB, tok string, changes map[string]any) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	for k, v := range changes {
		c[k] = v
	}
	raw, _ = json.Marshal(c)
	parts[1] = base64.RawURLEncoding.EncodeToString(raw)
	return strings.Join(parts, ".")
}

// TestKeyUse checks that a published key is used only as the JWK set
// allows: for its own algorithm, and for signatures.
func TestKeyUse(t *testing.T) {
	t.Parallel()
	rs, ps, _, _ := testKeys(t)
	enc := newSigningKey(t, "enc-1")
	clk := newClock()
	as := newAuthServer(t)
	pinned := rs.public()
	pinned.Algorithm = "RS256"
	encryption := enc.public()
	encryption.Use = "enc"
	as.mu.Lock()
	as.keys = []jose.JSONWebKey{pinned, encryption}
	as.mu.Unlock()
	a := jwtAuth(t, as, clk, nil)

	identityOf(t, serve(t, a, "/mcp", rs.sign(t, claimsFor(as, clk, nil))))
	for _, tt := range []struct {
		name, token, desc string
	}{
		{"PS256 with an RS256 key", ps.sign(t, claimsFor(as, clk, nil)), "not a signing key for PS256"},
		{"an encryption key", enc.sign(t, claimsFor(as, clk, nil)), "unknown key id"},
	} {
		rec := serve(t, a, "/mcp", tt.token)
		if ch := rec.Header().Get("WWW-Authenticate"); rec.Code != http.StatusUnauthorized || !strings.Contains(ch, tt.desc) {
			t.Errorf("%s: status %d, WWW-Authenticate %q: want 401 with %q", tt.name, rec.Code, ch, tt.desc)
		}
	}
}

// TestLongClaimsInMessages checks that values a client chooses are
// shortened in the challenge.
func TestLongClaimsInMessages(t *testing.T) {
	t.Parallel()
	rs, _, _, _ := testKeys(t)
	clk := newClock()
	as := newAuthServer(t, rs)
	a := jwtAuth(t, as, clk, nil)
	long := "https://" + strings.Repeat("a", 5000) + ".example.com"
	auds := []string{long, "b", "c", "d", "e"}
	rec := serve(t, a, "/mcp", rs.sign(t, claimsFor(as, clk, map[string]any{"aud": auds})))
	ch := rec.Header().Get("WWW-Authenticate")
	if len(ch) > 600 || !strings.Contains(ch, "and 2 more") {
		t.Errorf("challenge of %d bytes: %.300s", len(ch), ch)
	}
}
