package oauth_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeAS is an authorization server and a protected MCP server in one
// httptest server, configurable to play the cases the TypeScript example
// cannot: where metadata lives, what the server supports, and how it
// answers. It checks what a strict server checks (PKCE S256, the resource
// indicator, client authentication by the registered method) and records
// every request for the tests to inspect.
type fakeAS struct {
	t   testing.TB
	srv *httptest.Server

	// What to publish, and where.
	prmAt          string  // "path", "root", "challenge" (only the header names it), "none" (a 2025-03-26 server)
	metaAt         string  // "oauth", "openid-insert", "openid-append", "none"
	issuerPath     string  // "" or e.g. "/tenant"
	issuerOverride string  // an issuer the metadata claims instead of its own
	namedAS        string  // the authorization server the PRM names instead of this one
	prmResource    string  // a resource the PRM names instead of its own (a mismatch)
	issSent        string  // the iss the redirect carries instead of the issuer (with issParam)
	trusted        *fakeAS // another authorization server, the only one whose tokens the MCP server accepts
	grantsFor      string  // a resource this authorization server issues tokens for besides its own
	pkce           []string
	dcr            bool
	dcrMethod      string // the token endpoint auth method registration imposes; "" keeps the requested one
	cimd           bool
	authMethods    []string // token_endpoint_auth_methods_supported
	asScopes       []string // scopes_supported of the authorization server
	prmScopes      []string // scopes_supported of the resource
	challengeScope string   // scope in the 401's challenge
	issParam       bool
	refresh        bool // issue refresh tokens
	rotate         bool // a refresh issues a new refresh token and retires the old
	accessTTL      time.Duration
	revocation     bool
	toolScopes     map[string]string // tool → scope it needs (403 insufficient_scope without it)
	alwaysStepUp   bool              // every tool call is refused for a new scope
	forgetsClients bool              // every authorization request meets an unknown client, even one just registered

	mu            sync.Mutex
	clients       map[string]*fakeClient
	codes         map[string]fakeCode
	access        map[string]fakeToken
	refreshes     map[string]fakeToken
	registrations int
	authorizeReqs []url.Values // a browser's, not Switchboard's own check (probes)
	probes        int
	tokenReqs     []tokenReq
	revoked       []string
	stepUpN       int
}

type fakeClient struct {
	secret, method string
	redirects      []string
}

type fakeCode struct {
	client, challenge, resource, redirect string
	scopes                                []string
}

type fakeToken struct {
	client, resource string
	scopes           []string
	expiry           time.Time
}

// tokenReq is one request to the token endpoint: its form and how the
// client authenticated.
type tokenReq struct {
	form   url.Values
	method string
}

func newFakeAS(t testing.TB, configure func(*fakeAS)) *fakeAS {
	f := &fakeAS{
		t: t, prmAt: "path", metaAt: "oauth", pkce: []string{"S256"}, dcr: true,
		authMethods: []string{"none", "client_secret_basic", "client_secret_post"},
		accessTTL:   time.Hour, refresh: true, rotate: true, revocation: true,
		clients: map[string]*fakeClient{}, codes: map[string]fakeCode{},
		access: map[string]fakeToken{}, refreshes: map[string]fakeToken{},
	}
	if configure != nil {
		configure(f)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAS) mcpURL() string           { return f.srv.URL + "/mcp" }
func (f *fakeAS) issuer() string           { return f.srv.URL + f.issuerPath }
func (f *fakeAS) endpoint(p string) string { return f.issuer() + p }

// prmURL is where the protected resource metadata is, and the resource it
// names.
func (f *fakeAS) prmURL() (string, string) {
	switch f.prmAt {
	case "root":
		return f.srv.URL + "/.well-known/oauth-protected-resource", f.srv.URL
	case "challenge":
		return f.srv.URL + "/meta/resource.json", f.mcpURL()
	}
	return f.srv.URL + "/.well-known/oauth-protected-resource/mcp", f.mcpURL()
}

func (f *fakeAS) metaPath() string {
	switch f.metaAt {
	case "oauth":
		return "/.well-known/oauth-authorization-server" + f.issuerPath
	case "openid-insert":
		return "/.well-known/openid-configuration" + f.issuerPath
	case "openid-append":
		return f.issuerPath + "/.well-known/openid-configuration"
	}
	return "/no-metadata"
}

func (f *fakeAS) serve(w http.ResponseWriter, r *http.Request) {
	prm, resource := f.prmURL()
	switch p := r.URL.Path; {
	case p == "/mcp":
		f.serveMCP(w, r)
	case f.prmAt != "none" && r.URL.String() == strings.TrimPrefix(prm, f.srv.URL):
		as := f.issuer()
		f.mu.Lock()
		if f.namedAS != "" {
			as = f.namedAS
		}
		f.mu.Unlock()
		if f.prmResource != "" {
			resource = f.prmResource
		}
		writeJSON(w, 200, map[string]any{"resource": resource, "authorization_servers": []string{as}, "scopes_supported": f.prmScopes})
	case p == f.metaPath():
		iss := f.issuer()
		if f.issuerOverride != "" {
			iss = f.issuerOverride
		}
		meta := map[string]any{
			"issuer": iss, "authorization_endpoint": f.endpoint("/authorize"), "token_endpoint": f.endpoint("/token"),
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": f.pkce,
			"token_endpoint_auth_methods_supported": f.authMethods, "scopes_supported": f.asScopes,
			"client_id_metadata_document_supported": f.cimd, "authorization_response_iss_parameter_supported": f.issParam,
		}
		if f.dcr {
			meta["registration_endpoint"] = f.endpoint("/register")
		}
		if f.revocation {
			meta["revocation_endpoint"] = f.endpoint("/revoke")
		}
		writeJSON(w, 200, meta)
	case p == f.issuerPath+"/register" && f.dcr:
		f.serveRegister(w, r)
	case p == f.issuerPath+"/authorize":
		f.serveAuthorize(w, r)
	case p == f.issuerPath+"/token":
		f.serveToken(w, r)
	case p == f.issuerPath+"/revoke" && f.revocation:
		f.serveRevoke(w, r)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func randomString() string { return rand.Text() }

func (f *fakeAS) serveRegister(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		Method       string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		oauthError(w, 400, "invalid_client_metadata", "redirect_uris required")
		return
	}
	method := meta.Method
	if f.dcrMethod != "" {
		method = f.dcrMethod
	}
	c := &fakeClient{method: method, redirects: meta.RedirectURIs}
	if method != "none" {
		c.secret = randomString()
	}
	id := "dcr-" + randomString()
	f.mu.Lock()
	f.clients[id] = c
	f.registrations++
	f.mu.Unlock()
	resp := map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": method}
	if c.secret != "" {
		resp["client_secret"] = c.secret
	}
	writeJSON(w, 201, resp)
}

// addClient pre-registers a client.
func (f *fakeAS) addClient(id, secret, method string, redirects ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clients[id] = &fakeClient{secret: secret, method: method, redirects: redirects}
}

func (f *fakeAS) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	if strings.HasPrefix(r.UserAgent(), "Switchboard (checking") {
		f.probes++
	} else {
		f.authorizeReqs = append(f.authorizeReqs, q)
	}
	c, known := f.clients[q.Get("client_id")]
	known = known && !f.forgetsClients
	f.mu.Unlock()
	redirect := q.Get("redirect_uri")
	cimd := f.cimd && strings.HasPrefix(q.Get("client_id"), "https://")
	if !known && !cimd {
		http.Error(w, "unknown client", http.StatusBadRequest) // no redirect to an unknown client
		return
	}
	if known && len(c.redirects) > 0 && !slices.Contains(c.redirects, redirect) {
		http.Error(w, "unregistered redirect_uri", http.StatusBadRequest)
		return
	}
	back := func(v url.Values) {
		v.Set("state", q.Get("state"))
		if f.issParam {
			f.mu.Lock()
			v.Set("iss", cmp.Or(f.issSent, f.issuer()))
			f.mu.Unlock()
		}
		http.Redirect(w, r, redirect+"?"+v.Encode(), http.StatusFound)
	}
	_, resource := f.prmURL()
	switch {
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE S256 required"}})
		return
	case q.Get("resource") != resource && (f.grantsFor == "" || q.Get("resource") != f.grantsFor):
		back(url.Values{"error": {"invalid_target"}, "error_description": {"resource " + q.Get("resource")}})
		return
	}
	code := randomString()
	f.mu.Lock()
	f.codes[code] = fakeCode{client: q.Get("client_id"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), redirect: redirect, scopes: strings.Fields(q.Get("scope"))}
	f.mu.Unlock()
	back(url.Values{"code": {code}})
}

// authenticate checks the client's authentication at the token and
// revocation endpoints, by the method it registered.
func (f *fakeAS) authenticate(r *http.Request) (string, string, bool) {
	method, id, secret := "none", r.PostForm.Get("client_id"), ""
	if u, p, ok := r.BasicAuth(); ok {
		method = "client_secret_basic"
		id, _ = url.QueryUnescape(u)
		secret, _ = url.QueryUnescape(p)
	} else if s := r.PostForm.Get("client_secret"); s != "" {
		method, secret = "client_secret_post", s
	}
	f.mu.Lock()
	c, ok := f.clients[id]
	f.mu.Unlock()
	if strings.HasPrefix(id, "https://") && f.cimd && method == "none" {
		return id, method, true
	}
	if !ok || c.method != method || c.secret != secret {
		return id, method, false
	}
	return id, method, true
}

func (f *fakeAS) issue(client, resource string, scopes []string, withRefresh bool) map[string]any {
	at := "at-" + randomString()
	tok := fakeToken{client: client, resource: resource, scopes: scopes, expiry: time.Now().Add(f.accessTTL)}
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(f.accessTTL / time.Second), "scope": strings.Join(scopes, " ")}
	f.access[at] = tok
	if withRefresh {
		rt := "rt-" + randomString()
		f.refreshes[rt] = tok
		resp["refresh_token"] = rt
	}
	return resp
}

func (f *fakeAS) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", err.Error())
		return
	}
	client, method, ok := f.authenticate(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenReqs = append(f.tokenReqs, tokenReq{form: r.PostForm, method: method})
	if !ok {
		oauthError(w, 401, "invalid_client", "client authentication failed")
		return
	}
	_, resource := f.prmURL()
	if f.grantsFor != "" && r.PostForm.Get("resource") == f.grantsFor {
		resource = f.grantsFor
	}
	if r.PostForm.Get("resource") != resource {
		oauthError(w, 400, "invalid_target", "resource must be "+resource)
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		c, ok := f.codes[r.PostForm.Get("code")]
		delete(f.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !ok || c.client != client || c.redirect != r.PostForm.Get("redirect_uri"):
			oauthError(w, 400, "invalid_grant", "bad code")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			oauthError(w, 400, "invalid_grant", "PKCE verification failed")
		default:
			writeJSON(w, 200, f.issue(client, resource, c.scopes, f.refresh))
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		tok, ok := f.refreshes[rt]
		if !ok || tok.client != client {
			oauthError(w, 400, "invalid_grant", "refresh token unknown, expired or revoked")
			return
		}
		if f.rotate {
			delete(f.refreshes, rt)
		}
		resp := f.issue(client, resource, tok.scopes, f.rotate)
		writeJSON(w, 200, resp)
	case "client_credentials":
		if method == "none" {
			oauthError(w, 401, "invalid_client", "confidential clients only")
			return
		}
		writeJSON(w, 200, f.issue(client, resource, strings.Fields(r.PostForm.Get("scope")), false))
	default:
		oauthError(w, 400, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	}
}

func (f *fakeAS) serveRevoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, 400, "invalid_request", err.Error())
		return
	}
	if _, _, ok := f.authenticate(r); !ok {
		oauthError(w, 401, "invalid_client", "client authentication failed")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	tok := r.PostForm.Get("token")
	f.revoked = append(f.revoked, r.PostForm.Get("token_type_hint"))
	delete(f.access, tok)
	delete(f.refreshes, tok)
	w.WriteHeader(200)
}

// serveMCP is the protected MCP server: a go-sdk server with the tools
// echo and admin, behind bearer checks that answer 401 and 403 as the
// specification says.
func (f *fakeAS) serveMCP(w http.ResponseWriter, r *http.Request) {
	prm, _ := f.prmURL()
	challenge := func(status int, extra string) {
		h := "Bearer"
		var params []string
		if f.prmAt == "challenge" {
			params = append(params, fmt.Sprintf("resource_metadata=%q", prm))
		}
		if extra != "" {
			params = append(params, extra)
		} else if f.challengeScope != "" {
			params = append(params, fmt.Sprintf("scope=%q", f.challengeScope))
		}
		if len(params) > 0 {
			h += " " + strings.Join(params, ", ")
		}
		w.Header().Set("WWW-Authenticate", h)
		http.Error(w, http.StatusText(status), status)
	}
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	tok, ok := f.access[bearer]
	trusted := f.trusted
	f.mu.Unlock()
	if trusted != nil { // moved: only the other server's tokens count
		trusted.mu.Lock()
		tok, ok = trusted.access[bearer]
		trusted.mu.Unlock()
	}
	_, resource := f.prmURL()
	if !ok || time.Now().After(tok.expiry) || tok.resource != resource {
		challenge(http.StatusUnauthorized, "")
		return
	}
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			need := f.toolScopes[msg.Params.Name]
			if f.alwaysStepUp {
				f.mu.Lock()
				f.stepUpN++
				need = fmt.Sprintf("extra%d", f.stepUpN)
				f.mu.Unlock()
			}
			if need != "" && !slices.Contains(tok.scopes, need) {
				challenge(http.StatusForbidden, fmt.Sprintf("error=\"insufficient_scope\", scope=%q", need))
				return
			}
		}
	}
	mcpHandler.ServeHTTP(w, r)
}

// mcpHandler is the MCP server behind the fake's bearer checks.
var mcpHandler = func() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	for _, name := range []string{"echo", "admin"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ": " + a.Text}}}, nil, nil
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
}()

// requests returns copies of the recorded requests.
func (f *fakeAS) requests() (authorize []url.Values, token []tokenReq) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.authorizeReqs), slices.Clone(f.tokenReqs)
}

func (f *fakeAS) registrationCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registrations
}
