package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
)

// oauthResource is the URL the gateway's OAuth tests say clients reach it
// at (the audience of their tokens); requests go to its loopback address.
const oauthResource = "https://mcp.example.com"

// oauthConfig is a gateway of alpha and beta, with the views eng (alpha)
// and ops (beta), that accepts the issuer's tokens: every signed-in user
// may use the default view, the group engineers also eng, admins all;
// every token needs mcp:tools, and eng also eng:write. alpha and beta are
// in-process servers: the tests of it are about the gateway's sign-in.
func oauthConfig(t *testing.T, issuer string) *config.Config {
	cfg := testConfig(okHTTPServer(t, "alpha"), okHTTPServer(t, "beta"))
	cfg.Gateway.Views = []config.View{
		{Name: "eng", Servers: []string{"alpha"}, Prefix: config.PrefixAlways},
		{Name: "ops", Servers: []string{"beta"}, Prefix: config.PrefixAlways},
	}
	cfg.Gateway.OAuth = &config.OAuth{
		Resource: oauthResource, Issuer: issuer,
		UserClaim: "sub", GroupsClaim: "groups",
		Views:      []string{"default"},
		GroupViews: map[string][]string{"engineers": {"eng"}, "admins": {"*"}},
		Scopes:     []string{"mcp:tools"},
		ViewScopes: map[string][]string{"eng": {"eng:write"}},
	}
	return cfg
}

// bearer is an Authorization header with a bearer token.
func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// postAnswer sends an initialize request and returns the response (its
// body read).
func postAnswer(t *testing.T, url string, h http.Header) (*http.Response, string) {
	t.Helper()
	return send(t, http.MethodPost, url, initializeBody("t"), h)
}

// send sends a request (an MCP one when it has a body) and returns the
// response, its body read.
func send(t *testing.T, method, url, body string, h http.Header) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8192))
	return resp, string(b)
}

// TestGatewayOAuthJWT runs a gateway that accepts an authorization
// server's JWTs beside a static token: every way a token can be wrong is
// refused with the challenge a client signs in from, views and scopes
// are enforced per endpoint, and a signed-in user is who the calls are
// made for, whatever the client claims in _meta.
func TestGatewayOAuthJWT(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	cfg := oauthConfig(t, is.URL)
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "ci-bot", Secret: "ci-secret"}}
	r := start(t, cfg)

	claims := func(aud string, extra map[string]any) map[string]any {
		c := is.Claims("alice", oauthResource+aud, map[string]any{"scope": "mcp:tools", "groups": []string{"staff"}})
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	valid := is.Token(t, claims("/mcp", nil))
	parts := strings.Split(valid, ".")
	// The signature of another token: a valid signature, not of these
	// header and claims.
	other := strings.Split(is.Token(t, claims("/mcp", map[string]any{"sub": "mallory"})), ".")
	tampered := parts[0] + "." + other[1] + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + "."

	const challenge = `Bearer error="invalid_token", error_description="`
	tests := []struct {
		name    string
		path    string
		token   string
		status  int
		wwwAuth string // a part of WWW-Authenticate
		body    string // a part of the body
	}{
		{"no token", "/mcp", "", 401, `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`, `"authentication_error"`},
		{"valid", "/mcp", valid, 200, "", ""},
		{"static token beside OAuth", "/mcp", "ci-secret", 200, "", ""},
		{"expired", "/mcp", is.Token(t, claims("/mcp", map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()})), 401, challenge + "the token has expired", ""},
		{"another audience", "/mcp", is.Token(t, claims("", map[string]any{"aud": "https://other.example.com/mcp"})), 401, challenge, "issued for"},
		{"another issuer", "/mcp", is.Token(t, claims("/mcp", map[string]any{"iss": "https://evil.example.com"})), 401, challenge, "issued by"},
		{"alg none", "/mcp", none, 401, challenge, ""},
		{"unknown key id", "/mcp", is.Foreign(t, "nope", claims("/mcp", nil)), 401, challenge, "key"},
		{"known key id, another key", "/mcp", is.Foreign(t, oauthtest.KeyID, claims("/mcp", nil)), 401, challenge, "signature"},
		{"tampered", "/mcp", tampered, 401, challenge, ""},
		{"view the groups do not grant", "/mcp/eng", is.Token(t, claims("/mcp/eng", map[string]any{"scope": "mcp:tools eng:write"})), 403, "", `may not use the view \"eng\"`},
		{"view without its scope", "/mcp/eng", is.Token(t, claims("/mcp/eng", map[string]any{"groups": []string{"engineers"}})), 403, `Bearer error="insufficient_scope", error_description="the token lacks the scope eng:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp/eng", scope="mcp:tools eng:write"`, ""},
		{"group grants the view", "/mcp/eng", is.Token(t, claims("/mcp/eng", map[string]any{"groups": []string{"engineers"}, "scope": "mcp:tools eng:write"})), 200, "", ""},
		{"group does not grant another view", "/mcp/ops", is.Token(t, claims("/mcp/ops", map[string]any{"groups": []string{"engineers"}})), 403, "", "may not use the view"},
		{"admins may use every view", "/mcp/ops", is.Token(t, claims("/mcp/ops", map[string]any{"groups": []string{"admins"}})), 200, "", ""},
		{"no user claim", "/mcp", is.Token(t, claims("/mcp", map[string]any{"sub": ""})), 401, challenge + `the token has no 'sub' claim`, ""},
		{"missing the gateway's scope", "/mcp", is.Token(t, claims("/mcp", map[string]any{"scope": "openid"})), 403, `error="insufficient_scope"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h http.Header
			if tt.token != "" {
				h = bearer(tt.token)
			}
			resp, body := postAnswer(t, r.url+tt.path, h)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			got := resp.Header.Get("WWW-Authenticate")
			if !strings.Contains(got, tt.wwwAuth) {
				t.Errorf("WWW-Authenticate %q, want it to contain %q", got, tt.wwwAuth)
			}
			if tt.wwwAuth == "" && got != "" {
				t.Errorf("WWW-Authenticate %q, want none (no sign-in would help)", got)
			}
			if !strings.Contains(body, tt.body) {
				t.Errorf("body %s, want it to contain %s", body, tt.body)
			}
			if tt.token != "" && strings.Contains(body, tt.token) {
				t.Errorf("the answer repeats the token: %s", body)
			}
		})
	}

	// The go-sdk client with a bearer token: the token's user is the
	// caller, on the fast path and through the SDK alike, and a claim in
	// _meta changes nothing.
	cs := r.connect(t, "/mcp", bearer(valid), nil)
	waitTools(t, cs, "alpha's and beta's tools", has("alpha__whoami", "beta__whoami"))
	for _, name := range []string{"alpha__whoami", "beta__whoami"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{},
			Meta: mcp.Meta{"user_id": "mallory", "session_id": "forged"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", name, err, res)
		}
		var meta map[string]any
		if err := json.Unmarshal([]byte(textOf(res)), &meta); err != nil {
			t.Fatalf("%s answered %q: %v", name, textOf(res), err)
		}
		if meta["user_id"] != "alice" || meta["session_id"] != cs.ID() {
			t.Errorf("%s: upstream _meta %v, want user_id alice and the gateway's session id %s", name, meta, cs.ID())
		}
	}
	r.waitRecords(t, store.CallFilter{Identity: "alice"}, func(recs []store.CallRecord) bool { return len(recs) == 2 })
	if recs, err := r.store.Calls(context.Background(), store.CallFilter{Identity: "mallory"}); err != nil || len(recs) != 0 {
		t.Errorf("calls recorded as mallory: %d (%v), want none", len(recs), err)
	}

	// Another user's token cannot use alice's session.
	bob := is.Token(t, is.Claims("bob", oauthResource+"/mcp", map[string]any{"scope": "mcp:tools"}))
	resp, body := postAnswerSession(t, r.url+"/mcp", cs.ID(), bearer(bob))
	if resp.StatusCode < 400 {
		t.Errorf("bob's token on alice's session: status %d, want a refusal; body %s", resp.StatusCode, body)
	}

	// The metadata is public: no token, and any Host.
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource":         `"resource":"https://mcp.example.com"`,
		"/.well-known/oauth-protected-resource/mcp":     `"resource":"https://mcp.example.com/mcp"`,
		"/.well-known/oauth-protected-resource/mcp/eng": `"scopes_supported":["mcp:tools","eng:write"]`,
		"/.well-known/oauth-protected-resource/sse":     `"authorization_servers":["` + is.URL + `"]`,
	} {
		resp, b := getWith(t, r.url+path, http.Header{"Host": {"mcp.example.com"}, "Origin": {"https://app.example.net"}})
		if resp.StatusCode != 200 || !strings.Contains(b, want) {
			t.Errorf("GET %s: %d %s, want 200 with %s", path, resp.StatusCode, b, want)
		}
	}
	if resp, _ := getWith(t, r.url+"/.well-known/oauth-protected-resource/nope", nil); resp.StatusCode != 404 {
		t.Errorf("metadata of no endpoint: %d, want 404", resp.StatusCode)
	}

	// Metrics need a token: an OAuth one will do.
	if resp, _ := getWith(t, r.url+"/metrics", nil); resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Errorf("/metrics without a token: %d %q, want 401 with an OAuth challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp, _ := getWith(t, r.url+"/metrics", bearer(valid)); resp.StatusCode != 200 {
		t.Errorf("/metrics with an OAuth token: %d, want 200", resp.StatusCode)
	}

	// Tokens are checked once: the key set was fetched at start, not per
	// request.
	if n := is.JWKSHits(); n > 3 {
		t.Errorf("the key set was fetched %d times, want it cached", n)
	}
}

// postAnswerSession posts a tools/list on a session.
func postAnswerSession(t *testing.T, url, session string, h http.Header) (*http.Response, string) {
	t.Helper()
	h = h.Clone()
	h.Set("Mcp-Session-Id", session)
	h.Set("Mcp-Protocol-Version", "2025-06-18")
	return send(t, http.MethodPost, url, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, h)
}

// getWith sends a GET with headers and returns the response and its body.
func getWith(t *testing.T, url string, h http.Header) (*http.Response, string) {
	t.Helper()
	return send(t, http.MethodGet, url, "", h)
}

// TestGatewayOAuthStatelessClaimsIgnored checks stateless mode, on the
// fast path and through the SDK: the signed-in user is the caller, whatever
// user id the client puts in _meta.
func TestGatewayOAuthStatelessClaimsIgnored(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast path", false: "SDK path"}[fast], func(t *testing.T) {
			cfg := oauthConfig(t, is.URL)
			cfg.Gateway.Stateless = true
			cfg.Gateway.DisableFastPath = !fast
			r := start(t, cfg)
			tok := is.Token(t, is.Claims("carol", oauthResource+"/mcp", map[string]any{"scope": "mcp:tools"}))
			cs := r.connect(t, "/mcp", bearer(tok), nil)
			waitTools(t, cs, "alpha's tools", has("alpha__whoami"))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__whoami", Arguments: map[string]any{},
				Meta: mcp.Meta{"user_id": "mallory", "session_id": "forged"}})
			if err != nil || res.IsError {
				t.Fatalf("whoami: %v %v", err, res)
			}
			var meta map[string]any
			if err := json.Unmarshal([]byte(textOf(res)), &meta); err != nil {
				t.Fatal(err)
			}
			if meta["user_id"] != "carol" {
				t.Errorf("upstream saw _meta %v, want user_id carol", meta)
			}
		})
	}
}

// TestGatewayOAuthSSE: the legacy SSE transport with OAuth: a session is
// its signed-in user's, another user's token cannot post to it, and the
// calls run as that user.
func TestGatewayOAuthSSE(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	r := start(t, oauthConfig(t, is.URL))
	tokenOf := func(user string) string {
		return is.Token(t, is.Claims(user, oauthResource+"/sse", map[string]any{"scope": "mcp:tools"}))
	}
	alice, bob := tokenOf("alice"), tokenOf("bob")
	// With OAuth alone and no console sign-in (gateway.oauth.console),
	// the console's pages stay closed; its API takes the OAuth access
	// token of a script (TestConsoleAPIOAuthBearer).
	if resp, _ := getWith(t, r.url+"/ui/api/stats", nil); resp.StatusCode != 401 {
		t.Errorf("the console's API without a login: %d, want 401", resp.StatusCode)
	}
	admin := is.Token(t, is.Claims("ada", oauthResource+"/sse", map[string]any{"scope": "mcp:tools", "groups": []string{"admins"}}))
	if resp, _ := getWith(t, r.url+"/ui/api/stats", bearer(admin)); resp.StatusCode != 200 {
		t.Errorf("the console's API with the OAuth token of a user of every view: %d, want 200", resp.StatusCode)
	}
	if resp, _ := getWith(t, r.url+"/sse", nil); resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "oauth-protected-resource/sse") {
		t.Errorf("/sse without a token: %d %q, want 401 naming the /sse metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	postAs := openSSEAs(t, r.url, alice)
	if got := postAs(bob); got != http.StatusForbidden {
		t.Errorf("bob posting to alice's SSE session: %d, want 403", got)
	}
	if got := postAs(alice); got != http.StatusAccepted {
		t.Errorf("alice posting to her own SSE session: %d, want 202", got)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "sse", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: r.url + "/sse",
		HTTPClient: &http.Client{Transport: headerTransport{bearer(bob), http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "alpha over SSE", has("alpha__whoami"))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__whoami", Arguments: map[string]any{}, Meta: mcp.Meta{"user_id": "mallory"}})
	if err != nil || !strings.Contains(textOf(res), `"user_id":"bob"`) {
		t.Errorf("whoami over SSE as bob: %v %s", err, textOf(res))
	}
}

// reserve returns a free loopback address, and its listener.
func reserve(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// TestGatewayOAuthIssuerUnreachableAtStart: with the authorization server
// down, the daemon starts and serves; a JWT gets 503 saying the gateway
// cannot check tokens now (static tokens keep working), and once the
// server is up, the keys are fetched and the token accepted.
func TestGatewayOAuthIssuerUnreachableAtStart(t *testing.T) {
	t.Parallel()
	ln := reserve(t)
	addr := ln.Addr().String()
	ln.Close() // nothing answers there until the issuer starts
	cfg := oauthConfig(t, "http://"+addr)
	cfg.Gateway.OAuth.KeysMinInterval = 50 * time.Millisecond
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "ci-bot", Secret: "ci-secret"}}
	var logs lockedBuffer
	r := start(t, cfg, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})

	sign := func(is *oauthtest.Issuer) string {
		return is.Token(t, is.Claims("dora", oauthResource+"/mcp", map[string]any{"scope": "mcp:tools", "iss": "http://" + addr}))
	}
	// A token signed by the issuer's key, made before it is reachable.
	early := oauthtest.New(t)
	token := sign(early)

	resp, body := postAnswer(t, r.url+"/mcp", bearer(token))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "cannot check access tokens right now") {
		t.Errorf("a JWT while the issuer is down: %d %q %s, want 503 with Retry-After and the reason", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if resp, body := postAnswer(t, r.url+"/mcp", bearer("ci-secret")); resp.StatusCode != 200 {
		t.Errorf("a static token while the issuer is down: %d %s, want 200", resp.StatusCode, body)
	}
	if resp, _ := getWith(t, r.url+"/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz: %d, want 200", resp.StatusCode)
	}

	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on the issuer's address again: %v", err)
	}
	oauthtest.Start(t, ln2)
	eventually(t, "the token is accepted once the issuer is up", func() bool {
		resp, _ := postAnswer(t, r.url+"/mcp", bearer(token))
		return resp.StatusCode == 200
	})
	if strings.Contains(logs.String(), token) {
		t.Error("the log holds the token")
	}
	if !strings.Contains(logs.String(), "oauth: ") {
		t.Errorf("the log says nothing of the unreachable issuer:\n%s", logs.String())
	}
}

// TestGatewayOAuthReload: a reload that changes gateway.oauth swaps the
// authenticator (the old one stops), a bad one keeps the running one, and
// one that removes it opens the loopback gateway again; no authenticator
// is left running after the daemon stops. Not parallel: it counts the
// process's authenticator goroutines, which another test's daemon with
// gateway.oauth would add to.
func TestGatewayOAuthReload(t *testing.T) {
	a, b := oauthtest.New(t), oauthtest.New(t)
	next := oauthConfig(t, a.URL)
	load := func() (*config.Config, error) { c := *next; return &c, nil }
	r := start(t, oauthConfig(t, a.URL), func(o *Options) { o.Load = load })
	tokenOf := func(is *oauthtest.Issuer) string {
		return is.Token(t, is.Claims("erin", oauthResource+"/mcp", map[string]any{"scope": "mcp:tools"}))
	}
	status := func(token string) int {
		var h http.Header
		if token != "" {
			h = bearer(token)
		}
		resp, _ := postAnswer(t, r.url+"/mcp", h)
		return resp.StatusCode
	}
	if got := status(tokenOf(a)); got != 200 {
		t.Fatalf("a's token before the reload: %d, want 200", got)
	}
	eventually(t, "one authenticator running", func() bool { return runningAuthenticators() == 1 })

	next = oauthConfig(t, b.URL)
	if _, err := r.d.Reload(context.Background()); err != nil {
		t.Fatalf("reload to issuer b: %v", err)
	}
	if got := status(tokenOf(a)); got != 401 {
		t.Errorf("a's token after switching to b: %d, want 401", got)
	}
	if got := status(tokenOf(b)); got != 200 {
		t.Errorf("b's token after switching to b: %d, want 200", got)
	}
	eventually(t, "the old authenticator stopped", func() bool { return runningAuthenticators() == 1 })

	bad := oauthConfig(t, b.URL)
	bad.Gateway.OAuth.Issuer = "http://login.example.com" // http beyond loopback
	next = bad
	if _, err := r.d.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "gateway.oauth") {
		t.Errorf("reload with a bad gateway.oauth: %v, want an error naming gateway.oauth", err)
	}
	if got := status(tokenOf(b)); got != 200 {
		t.Errorf("b's token after a refused reload: %d, want 200", got)
	}

	open := oauthConfig(t, b.URL)
	open.Gateway.OAuth = nil
	next = open
	if _, err := r.d.Reload(context.Background()); err != nil {
		t.Fatalf("reload without OAuth: %v", err)
	}
	if got := status(""); got != 200 {
		t.Errorf("no token on loopback without OAuth: %d, want 200", got)
	}
	if resp, _ := getWith(t, r.url+"/.well-known/oauth-protected-resource/mcp", nil); resp.StatusCode != 404 {
		t.Errorf("metadata without OAuth: %d, want 404", resp.StatusCode)
	}
	eventually(t, "no authenticator running without OAuth", func() bool { return runningAuthenticators() == 0 })

	next = oauthConfig(t, a.URL)
	if _, err := r.d.Reload(context.Background()); err != nil {
		t.Fatalf("reload back to a: %v", err)
	}
	eventually(t, "one authenticator running again", func() bool { return runningAuthenticators() == 1 })
	r.stop(t)
	if n := runningAuthenticators(); n != 0 {
		t.Errorf("%d authenticators still running after the daemon stopped", n)
	}
}

// runningAuthenticators counts the goroutines running an authenticator's
// Run.
func runningAuthenticators() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "tokenauth.(*Authenticator).Run(")
}

// TestGatewayOAuthTypeScriptClient: the TypeScript SDK's demo
// authorization server is the gateway's issuer (introspection), and the
// TypeScript SDK's client signs in to the gateway on its own — the 401,
// the metadata, registration, PKCE, the resource indicator — and calls a
// tool, which runs as the user the token names; then the go-sdk's OAuth
// client does the same.
func TestGatewayOAuthTypeScriptClient(t *testing.T) {
	t.Parallel()
	demo := testpeer.StartOAuthExample(t, false)
	ln := reserve(t)
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Listen = addr
	cfg.Gateway.OAuth = &config.OAuth{
		Resource: "http://" + addr, Issuer: demo.Issuer,
		Introspection: &config.OAuthIntrospection{URL: demo.Issuer + "introspect"},
		UserClaim:     "client_id", // the demo's tokens have no sub
		Scopes:        []string{"mcp:tools"},
	}
	r := start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("..", "tokenauth", "testdata", "ts-oauth-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	eventually(t, "the TypeScript client signs in and calls alpha__whoami", func() bool {
		cmd := exec.CommandContext(ctx, testpeer.Node(t), script, r.url+"/mcp", "alpha__whoami")
		cmd.Env = append(os.Environ(), "SDK_DIR="+filepath.Join(testpeer.Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm"))
		var err error
		out, err = cmd.Output()
		return err == nil && strings.Contains(string(out), `"ok":true`)
	})
	var res struct {
		OK           bool   `json:"ok"`
		Text         string `json:"text"`
		AuthorizeURL string `json:"authorizeUrl"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("the TypeScript client printed %q: %v", out, err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(res.Text), &meta); err != nil {
		t.Fatalf("whoami answered %q: %v", res.Text, err)
	}
	user, _ := meta["user_id"].(string)
	if user == "" {
		t.Fatalf("the upstream saw no user: %v", meta)
	}
	if !strings.Contains(res.AuthorizeURL, "resource=http%3A%2F%2F"+strings.ReplaceAll(addr, ":", "%3A")+"%2Fmcp") {
		t.Errorf("the client asked for %s, want the resource %s/mcp", res.AuthorizeURL, r.url)
	}
	r.waitRecords(t, store.CallFilter{Identity: user}, func(recs []store.CallRecord) bool { return len(recs) >= 1 })

	// The go-sdk's own OAuth client signs in the same way.
	const redirect = "http://127.0.0.1:1/callback"
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "go-sdk client", TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, err
			}
			if got, want := u.Query().Get("resource"), r.url+"/mcp"; got != want {
				return nil, fmt.Errorf("the client asked for the resource %q, want %q (from the gateway's metadata)", got, want)
			}
			code, state, err := oauthtest.Approve(args.URL)
			return &auth.AuthorizationResult{Code: code, State: state}, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	gc, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk client", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", OAuthHandler: handler}, nil)
	if err != nil {
		t.Fatalf("the go-sdk client signing in: %v", err)
	}
	defer gc.Close()
	gres, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__whoami", Arguments: map[string]any{}})
	if err != nil || gres.IsError {
		t.Fatalf("whoami from the go-sdk client: %v %v", err, gres)
	}
	if err := json.Unmarshal([]byte(textOf(gres)), &meta); err != nil || meta["user_id"] == "" || meta["user_id"] == user {
		t.Errorf("the go-sdk client's call ran as %v, want its own registration's client id (not %q)", meta["user_id"], user)
	}
}
