// Package oauthtest is an OAuth authorization server for tests of the
// gateway's sign-in: a real HTTP server on 127.0.0.1 that publishes its
// metadata (RFC 8414) and its signing keys (a JWK set), answers token
// introspection (RFC 7662), and signs JWT access tokens (RFC 9068) with
// keys generated per test binary — so that a test can make valid tokens
// and every kind of wrong one (expired, another audience or issuer, alg
// none, an unknown key, a tampered signature).
package oauthtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// KeyID is the key id of the issuer's signing key.
const KeyID = "es1"

// Issuer is a running authorization server.
type Issuer struct {
	// URL is the issuer identifier and base URL: http://127.0.0.1:PORT.
	URL string

	srv    *httptest.Server
	key    *ecdsa.PrivateKey
	mu     sync.Mutex
	active map[string]map[string]any // introspection answers by token

	jwksHits  atomic.Int32
	introHits atomic.Int32
}

var (
	keyOnce sync.Once
	esKey   *ecdsa.PrivateKey
	otherEC *ecdsa.PrivateKey
)

func keys() (*ecdsa.PrivateKey, *ecdsa.PrivateKey) {
	keyOnce.Do(func() {
		var err error
		if esKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if otherEC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
	return esKey, otherEC
}

// New starts an issuer on a free loopback port until the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	return Start(t, nil)
}

// Start starts an issuer on ln (a free loopback port when nil) until the
// test ends; a test that needs the issuer's address before the issuer
// answers reserves the listener first.
func Start(t testing.TB, ln net.Listener) *Issuer {
	t.Helper()
	key, _ := keys()
	is := &Issuer{key: key, active: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                           is.URL,
			"authorization_endpoint":           is.URL + "/authorize",
			"token_endpoint":                   is.URL + "/token",
			"jwks_uri":                         is.URL + "/jwks",
			"introspection_endpoint":           is.URL + "/introspect",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: KeyID, Use: "sig", Algorithm: "ES256"}}})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		is.introHits.Add(1)
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		is.mu.Lock()
		answer, ok := is.active[r.PostForm.Get("token")]
		is.mu.Unlock()
		out := map[string]any{"active": ok}
		maps.Copy(out, answer)
		writeJSON(w, out)
	})
	is.srv = httptest.NewUnstartedServer(mux)
	if ln != nil {
		is.srv.Listener.Close()
		is.srv.Listener = ln
	}
	is.srv.Start()
	is.URL = is.srv.URL
	t.Cleanup(is.srv.Close)
	return is
}

// Claims returns the claims of a valid token of the issuer for user and
// audience (the gateway's resource URL of an endpoint), valid for an hour,
// with extra claims added or replacing these.
func (is *Issuer) Claims(user, audience string, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": is.URL, "sub": user, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"client_id": "test-client",
	}
	maps.Copy(c, extra)
	return c
}

// Token signs claims with the issuer's key (ES256, key id KeyID).
func (is *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, jose.ES256, is.key, KeyID, claims)
}

// Foreign signs claims with a key the issuer does not publish, under key
// id kid.
func (is *Issuer) Foreign(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	_, other := keys()
	return Sign(t, jose.ES256, other, kid, claims)
}

// Sign makes a JWT of the claims, signed with key under the algorithm and
// key id.
func Sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Activate makes the introspection endpoint call token active, answering
// with the claims.
func (is *Issuer) Activate(token string, claims map[string]any) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.active[token] = claims
}

// JWKSHits and IntrospectionHits count the requests for the key set and
// for introspection.
func (is *Issuer) JWKSHits() int { return int(is.jwksHits.Load()) }

// IntrospectionHits counts the introspection requests.
func (is *Issuer) IntrospectionHits() int { return int(is.introHits.Load()) }

// Approve plays a person's browser at an authorization endpoint that
// approves at once (the TypeScript SDK's demo does): it requests authURL
// without following the redirect, and returns the code and state of the
// redirect's query, as the client's redirect URI would receive them.
func Approve(authURL string) (code, state string, err error) {
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(authURL)
	if err != nil {
		return "", "", fmt.Errorf("authorization request: %w", err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound || loc.Query().Get("code") == "" {
		return "", "", fmt.Errorf("the authorization endpoint answered %s, Location %q: want a redirect with a code", res.Status, res.Header.Get("Location"))
	}
	return loc.Query().Get("code"), loc.Query().Get("state"), nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
