package tokenauth_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
)

// gatewayURL is the resource base URL the tests' authenticators serve.
const gatewayURL = "https://gw.example.com"

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: time.Now().Truncate(time.Second)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// signingKey is a key pair of the test's authorization server.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

var (
	keyOnce sync.Once
	rsaKey  *rsa.PrivateKey
	ecKey   *ecdsa.PrivateKey
	edKey   ed25519.PrivateKey
)

// testKeys returns one key of each type, generated once per test binary
// (RSA generation is slow under the race detector).
func testKeys(t testing.TB) (rs, ps, es, ed signingKey) {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if _, edKey, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
	})
	return signingKey{"rsa-1", jose.RS256, rsaKey},
		signingKey{"rsa-1", jose.PS256, rsaKey},
		signingKey{"ec-1", jose.ES256, ecKey},
		signingKey{"ed-1", jose.EdDSA, edKey}
}

// newSigningKey generates a fresh EC key (fast) with the given key id.
func newSigningKey(t testing.TB, kid string) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid, jose.ES256, k}
}

// public returns the key as it is published in a JWK set.
func (k signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Use: "sig"}
}

// sign makes a JWT of the claims.
func (k signingKey) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return signJWT(t, k.alg, k.priv, k.kid, claims)
}

// signJWT makes a JWT of the claims, signed with key (a private key, or
// the secret of an HMAC algorithm) under the key id.
func signJWT(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	return oauthtest.Sign(t, alg, key, kid, claims)
}

// authServer is an authorization server on 127.0.0.1: metadata (RFC 8414),
// a JWK set and an introspection endpoint, each counting its requests.
type authServer struct {
	srv    *httptest.Server
	issuer string

	mu           sync.Mutex
	keys         []jose.JSONWebKey
	metaIssuer   string                    // the issuer the metadata names (default: issuer)
	active       map[string]map[string]any // introspection answers by token
	clientID     string                    // when set, introspection requires these credentials
	clientSecret string
	postAuth     bool // credentials in the form rather than the header

	jwksHits   atomic.Int32
	metaHits   atomic.Int32
	introHits  atomic.Int32
	jwksStatus atomic.Int32  // when not 0, the JWK set answers with this status
	jwksGate   chan struct{} // when set, the JWK set answers once it is closed
	introGate  chan struct{}
}

func newAuthServer(t testing.TB, keys ...signingKey) *authServer {
	t.Helper()
	as := &authServer{active: map[string]map[string]any{}}
	for _, k := range keys {
		as.keys = append(as.keys, k.public())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		as.metaHits.Add(1)
		as.mu.Lock()
		iss := as.metaIssuer
		as.mu.Unlock()
		if iss == "" {
			iss = as.issuer
		}
		writeJSON(w, map[string]any{
			"issuer":                           iss,
			"authorization_endpoint":           as.issuer + "/authorize",
			"token_endpoint":                   as.issuer + "/token",
			"jwks_uri":                         as.issuer + "/jwks",
			"introspection_endpoint":           as.issuer + "/introspect",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		as.jwksHits.Add(1)
		if as.jwksGate != nil {
			<-as.jwksGate
		}
		if s := as.jwksStatus.Load(); s != 0 {
			http.Error(w, "unavailable", int(s))
			return
		}
		as.mu.Lock()
		set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), as.keys...)}
		as.mu.Unlock()
		writeJSON(w, set)
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		as.introHits.Add(1)
		if as.introGate != nil {
			<-as.introGate
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		as.mu.Lock()
		defer as.mu.Unlock()
		if as.clientID != "" {
			id, secret, ok := r.BasicAuth()
			// RFC 6749 §2.3.1: both are form-encoded inside Basic.
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
			if as.postAuth {
				id, secret, ok = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), true
			}
			if !ok || id != as.clientID || secret != as.clientSecret {
				w.WriteHeader(http.StatusUnauthorized)
				writeJSON(w, map[string]any{"error": "invalid_client"})
				return
			}
		}
		if r.PostForm.Get("token_type_hint") != "access_token" {
			http.Error(w, "want token_type_hint=access_token", http.StatusBadRequest)
			return
		}
		answer, ok := as.active[r.PostForm.Get("token")]
		if !ok {
			writeJSON(w, map[string]any{"active": false})
			return
		}
		out := map[string]any{"active": true}
		for k, v := range answer {
			out[k] = v
		}
		writeJSON(w, out)
	})
	as.srv = httptest.NewServer(mux)
	as.issuer = as.srv.URL
	t.Cleanup(as.srv.Close)
	return as
}

func (as *authServer) setKeys(keys ...signingKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.keys = nil
	for _, k := range keys {
		as.keys = append(as.keys, k.public())
	}
}

// activate makes the introspection endpoint call token active, answering
// with the claims.
func (as *authServer) activate(token string, claims map[string]any) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.active[token] = claims
}

func (as *authServer) revoke(token string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.active, token)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// logBuffer collects log output for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// claimsFor returns the claims of a valid token for the test gateway.
func claimsFor(as *authServer, clk *testClock, extra map[string]any) map[string]any {
	now := clk.Now()
	c := map[string]any{
		"iss":   as.issuer,
		"aud":   gatewayURL + "/mcp",
		"sub":   "alice",
		"exp":   now.Add(time.Hour).Unix(),
		"iat":   now.Unix(),
		"scope": "mcp:tools",
	}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// newAuth builds an Authenticator, failing the test on error.
func newAuth(t testing.TB, o tokenauth.Options) *tokenauth.Authenticator {
	t.Helper()
	a, err := tokenauth.New(o)
	if err != nil {
		t.Fatalf("tokenauth.New: %v", err)
	}
	return a
}

// seen is what the handler behind the middleware saw.
type seen struct {
	User   string   `json:"user"`
	Method string   `json:"method"`
	Scopes []string `json:"scopes"`
	Groups []string `json:"groups"`
	SDK    string   `json:"sdk_user"` // the MCP SDK's TokenInfo.UserID
}

// serve sends one request through the authenticator's middleware to a
// handler that echoes the identity it got.
func serve(t testing.TB, a *tokenauth.Authenticator, path, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, gatewayURL+path, strings.NewReader("{}"))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	a.Middleware(echoIdentity()).ServeHTTP(rec, req)
	return rec
}

func echoIdentity() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := tokenauth.IdentityFromContext(r.Context())
		s := seen{User: id.User, Method: id.Method, Scopes: id.Scopes, Groups: id.Groups}
		if info := auth.TokenInfoFromContext(r.Context()); info != nil {
			s.SDK = info.UserID
			if tokenauth.FromTokenInfo(info) != id {
				s.SDK += " (TokenInfo carries another identity)"
			}
		}
		writeJSON(w, s)
	})
}

// identityOf decodes what the echo handler saw, failing unless the
// request was let through.
func identityOf(t testing.TB, rec *httptest.ResponseRecorder) seen {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200; WWW-Authenticate %q; body %s", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	var s seen
	if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	return s
}
