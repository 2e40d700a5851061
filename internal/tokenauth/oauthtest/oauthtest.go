// Package oauthtest is an OAuth authorization server for tests of the
// gateway's sign-in: a real HTTP server on 127.0.0.1 that publishes its
// metadata (RFC 8414) and its signing keys (a JWK set), answers token
// introspection (RFC 7662), and signs JWT access tokens (RFC 9068) with
// keys generated per test binary — so that a test can make valid tokens
// and every kind of wrong one (expired, another audience or issuer, alg
// none, an unknown key, a tampered signature). It also signs people in:
// dynamic registration (RFC 7591), an authorization endpoint that
// approves at once as the person [Issuer.SetLogin] names (or denies), and
// a token endpoint for the authorization-code grant that checks PKCE S256
// and the client's secret, and issues a JWT for the requested resource.
package oauthtest

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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

	login   Login                // whom /authorize signs in
	clients map[string]string    // client id → secret ("" for a public client)
	codes   map[string]codeGrant // issued, unused codes
}

// Login is whom the authorization endpoint signs in, or that it denies.
type Login struct {
	// User is the token's sub.
	User string
	// Claims are added to the access token's claims (groups, scope …).
	Claims map[string]any
	// Deny makes the endpoint redirect with error=access_denied, as when
	// the person clicks "Deny".
	Deny bool
}

// codeGrant is what an authorization code stands for.
type codeGrant struct {
	client, redirect, challenge, resource, scope string
	login                                        Login
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
	is := &Issuer{key: key, active: map[string]map[string]any{}, clients: map[string]string{}, codes: map[string]codeGrant{},
		login: Login{User: "alice"}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                           is.URL,
			"authorization_endpoint":           is.URL + "/authorize",
			"token_endpoint":                   is.URL + "/token",
			"jwks_uri":                         is.URL + "/jwks",
			"introspection_endpoint":           is.URL + "/introspect",
			"registration_endpoint":            is.URL + "/register",
			"response_types_supported":         []string{"code"},
			"code_challenge_methods_supported": []string{"S256"},
			"authorization_response_iss_parameter_supported": true,
		})
	})
	mux.HandleFunc("POST /register", is.register)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
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
	tok, err := signJWT(alg, key, kid, claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func signJWT(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
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

// SetLogin makes the authorization endpoint sign in as l from now on.
func (is *Issuer) SetLogin(l Login) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.login = l
}

// AddClient registers a client by hand (a pre-registered client); an empty
// secret makes it public.
func (is *Issuer) AddClient(id, secret string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.clients[id] = secret
}

// register is dynamic client registration: a public client.
func (is *Issuer) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "dyn-" + rand.Text()
	is.AddClient(id, "")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize approves at once as the configured login (or denies), with
// PKCE S256 required, and redirects to the client's redirect URI.
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	is.mu.Lock()
	_, known := is.clients[q.Get("client_id")]
	login := is.login
	is.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if !known || err != nil || redirect.Host == "" {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	back.Set("iss", is.URL)
	switch {
	case login.Deny:
		back.Set("error", "access_denied")
		back.Set("error_description", "the person declined")
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back.Set("error", "invalid_request")
		back.Set("error_description", "PKCE S256 is required")
	default:
		code := rand.Text()
		is.mu.Lock()
		is.codes[code] = codeGrant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
			resource: q.Get("resource"), scope: q.Get("scope"), login: login}
		is.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// token exchanges a code (once) for a JWT access token for the requested
// resource, checking the client, its secret, the redirect URI and PKCE.
func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	fail := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		fail("unsupported_grant_type", "only authorization_code")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	is.mu.Lock()
	want, known := is.clients[id]
	g, ok := is.codes[r.PostForm.Get("code")]
	delete(is.codes, r.PostForm.Get("code"))
	is.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !known || secret != want:
		fail("invalid_client", "unknown client or wrong secret")
	case !ok || g.client != id || g.redirect != r.PostForm.Get("redirect_uri"):
		fail("invalid_grant", "unknown or used code, or another client or redirect URI")
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		fail("invalid_grant", "the code verifier does not match the challenge")
	default:
		aud := cmp.Or(r.PostForm.Get("resource"), g.resource, is.URL)
		claims := is.Claims(g.login.User, aud, map[string]any{"scope": g.scope, "client_id": id})
		maps.Copy(claims, g.login.Claims)
		key, _ := keys()
		tok, err := signJWT(jose.ES256, key, KeyID, claims)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": g.scope})
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
