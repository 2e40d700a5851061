package web_test

import (
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// freeAddr returns a loopback address nobody listens on now: the
// gateway's resource URL must be configured before it listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// oidcDaemon runs a daemon whose gateway accepts the issuer's JWTs (users'
// groups in "groups") and whose console signs people in there, with
// console configured as given; no static tokens.
func oidcDaemon(t *testing.T, is *oauthtest.Issuer, console *config.OAuthConsole) *running {
	t.Helper()
	addr := freeAddr(t)
	cfg := testConfig(testserver.Server(t, "alpha", "ok"))
	cfg.Gateway.Listen = addr
	cfg.Gateway.OAuth = &config.OAuth{
		Resource: "http://" + addr, Issuer: is.URL, UserClaim: "sub", GroupsClaim: "groups",
		GroupViews: map[string][]string{"admins": {"*"}, "staff": {"*"}}, Scopes: []string{"mcp:tools"},
		Leeway: tokenauth.DefaultLeeway, CacheSize: tokenauth.DefaultCacheSize, CacheTTL: tokenauth.DefaultCacheTTL,
		NegativeTTL: tokenauth.DefaultNegativeTTL, KeysRefresh: tokenauth.DefaultKeysRefresh,
		KeysMinInterval: tokenauth.DefaultKeysMinInterval, ResourceName: tokenauth.DefaultResourceName,
		Console: console,
	}
	return startDaemon(t, cfg)
}

// TestBrowserOAuthLogin: with gateway.oauth and no static tokens, the
// console signs people in at the authorization server in Chromium — the
// login page's button, the authorization server's redirect back to the
// console's callback, the token checked by the gateway's authenticator
// (the user from sub, the console's groups from the groups claim) — and
// the person lands on the page they asked for, logged in. A declined
// sign-in and a user outside the console's groups get the login page
// again, saying what happened.
func TestBrowserOAuthLogin(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	is.AddClient("console", "console-secret")
	is.SetLogin(oauthtest.Login{User: "alice", Claims: map[string]any{"groups": []string{"admins"}}})
	r := oidcDaemon(t, is, &config.OAuthConsole{ClientID: "console", ClientSecret: "console-secret", ClientSecretEnv: "X", Groups: []string{"admins"}})
	ctx := browser(t, 1280, 900)

	do(t, ctx, "opening the history", chromedp.Navigate(r.url+web.Prefix+"history"))
	waitJS(t, ctx, "the login page with the sign-in button and no token form",
		`location.pathname === "/ui/login" && document.getElementById("oauth-signin") && !document.getElementById("token")`)
	shot(t, ctx, "oauth-login")
	audit(t, ctx, "login with the identity provider")
	do(t, ctx, "signing in", click(chromedp.ID("oauth-signin")))
	waitJS(t, ctx, "the history, logged in as alice",
		`location.pathname === "/ui/history" && document.querySelector("header").innerText.includes("Log out alice")`)
	if cookie := eval[string](t, ctx, `document.cookie`); cookie != "" {
		t.Errorf("the page can read cookies: %q", cookie)
	}
	do(t, ctx, "the servers page", chromedp.Navigate(r.url+"/"))
	waitJS(t, ctx, "the servers page, still logged in", `location.pathname === "/" && `+rowLabel("alpha")+` !== ""`)
	do(t, ctx, "logging out", click(chromedp.CSS(`form[action="/ui/logout"] button`)))
	waitJS(t, ctx, "the login page again", `location.pathname === "/ui/login" && document.getElementById("oauth-signin")`)

	is.SetLogin(oauthtest.Login{User: "alice", Deny: true})
	do(t, ctx, "signing in, declined", click(chromedp.ID("oauth-signin")))
	waitJS(t, ctx, "the refusal", `document.querySelector(".login .fault") && document.querySelector(".login .fault").textContent.includes("did not sign you in: access_denied")`)

	is.SetLogin(oauthtest.Login{User: "bob", Claims: map[string]any{"groups": []string{"staff"}}})
	do(t, ctx, "the login page", chromedp.Navigate(r.url+web.Prefix+"login"))
	do(t, ctx, "signing in as bob", click(chromedp.ID("oauth-signin")))
	waitJS(t, ctx, "bob refused", `document.querySelector(".login .fault") && document.querySelector(".login .fault").textContent.includes('user "bob" may not use the console: only members of admins may')`)
	do(t, ctx, "the history as bob", chromedp.Navigate(r.url+web.Prefix+"history"))
	waitJS(t, ctx, "still the login page", `location.pathname === "/ui/login"`)
}

// handBrowser is a browser played by hand: it keeps cookies and does not
// follow redirects.
func handBrowser(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func newJar(t *testing.T) http.CookieJar {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// get fetches u and returns the response and its body.
func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// TestOAuthLoginCallback plays the browser by hand against the console's
// sign-in with a dynamically registered client: the start redirects to
// the authorization server with PKCE S256, the state and the resource;
// a callback with a state this console did not issue, from a browser
// that did not start the sign-in (its state then spent), or naming
// another issuer (RFC 9207) is refused with what happened; the genuine
// one logs the browser in.
func TestOAuthLoginCallback(t *testing.T) {
	t.Parallel()
	is := oauthtest.New(t)
	r := oidcDaemon(t, is, &config.OAuthConsole{})
	noFollow := func(jar http.CookieJar) *http.Client { return handBrowser(jar) }
	newJar := func() http.CookieJar { return newJar(t) }
	get := func(c *http.Client, u string) (*http.Response, string) { t.Helper(); return get(t, c, u) }
	// start begins a sign-in in the browser c and returns the
	// authorization server's redirect back to the console.
	start := func(c *http.Client) *url.URL {
		t.Helper()
		resp, body := get(c, r.url+web.Prefix+"auth/start?next="+url.QueryEscape("/ui/history"))
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("start: %s %s", resp.Status, body)
		}
		authURL, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		q := authURL.Query()
		if !strings.HasPrefix(authURL.String(), is.URL+"/authorize?") || q.Get("code_challenge_method") != "S256" ||
			q.Get("resource") != r.url || q.Get("redirect_uri") != r.url+"/ui/auth/callback" ||
			!strings.HasPrefix(q.Get("client_id"), "dyn-") || q.Get("scope") != "mcp:tools" || q.Get("state") == "" {
			t.Fatalf("the authorization request %s: want PKCE S256, resource %s, the console's callback, the registered client, scope mcp:tools and a state", authURL, r.url)
		}
		resp, _ = get(c, authURL.String())
		back, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || back.Query().Get("code") == "" {
			t.Fatalf("the authorization server answered %s, Location %q", resp.Status, resp.Header.Get("Location"))
		}
		return back
	}
	refused := func(what string, c *http.Client, u string, status int, want string) {
		t.Helper()
		resp, body := get(c, u)
		if resp.StatusCode != status || !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("%s: %s, want %d with %q in:\n%s", what, resp.Status, status, want, body)
		}
	}

	browserA := noFollow(newJar())
	refused("a state this console never issued", browserA, r.url+"/ui/auth/callback?state=made-up&code=x", http.StatusBadRequest, "this sign-in is unknown")

	back := start(browserA)
	refused("the callback in another browser", noFollow(newJar()), back.String(), http.StatusBadRequest, "this sign-in was started in another browser")
	refused("the same state again, in the right browser", browserA, back.String(), http.StatusBadRequest, "this sign-in is unknown")

	back = start(browserA)
	q := back.Query()
	q.Set("iss", "http://evil.example.com")
	back.RawQuery = q.Encode()
	refused("another issuer", browserA, back.String(), http.StatusBadRequest, `the sign-in came back from "http://evil.example.com"`)

	back = start(browserA)
	resp, body := get(browserA, back.String())
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Signed in as alice") || !strings.Contains(body, `url=/ui/history`) {
		t.Fatalf("the genuine callback: %s\n%s", resp.Status, body)
	}
	if resp, body := get(browserA, r.url+web.Prefix+"history"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Log out") {
		t.Errorf("the history after signing in: %s, want the page, logged in", resp.Status)
	}
	if resp, _ := get(noFollow(newJar()), r.url+web.Prefix+"history"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the history in a browser that did not sign in: %s, want a redirect to the login", resp.Status)
	}
}

// TestOAuthLoginTypeScriptAS: the console signs in at the TypeScript
// SDK's demo authorization server, another implementation: it registers
// itself there (RFC 7591), the demo approves at once, and the opaque
// token is checked by introspection, naming its user in client_id (the
// demo's tokens have no sub).
func TestOAuthLoginTypeScriptAS(t *testing.T) {
	t.Parallel()
	demo := testpeer.StartOAuthExample(t, false)
	addr := freeAddr(t)
	cfg := testConfig(testserver.Server(t, "alpha", "ok"))
	cfg.Gateway.Listen = addr
	cfg.Gateway.OAuth = &config.OAuth{
		Resource: "http://" + addr, Issuer: demo.Issuer, UserClaim: "client_id", Scopes: []string{"mcp:tools"},
		Introspection: &config.OAuthIntrospection{URL: demo.Issuer + "introspect", AuthMethod: "client_secret_basic"},
		Leeway:        tokenauth.DefaultLeeway, CacheSize: tokenauth.DefaultCacheSize, CacheTTL: tokenauth.DefaultCacheTTL,
		NegativeTTL: tokenauth.DefaultNegativeTTL, KeysRefresh: tokenauth.DefaultKeysRefresh,
		KeysMinInterval: tokenauth.DefaultKeysMinInterval, ResourceName: tokenauth.DefaultResourceName,
		Console: &config.OAuthConsole{},
	}
	r := startDaemon(t, cfg)
	b := handBrowser(newJar(t))
	resp, body := get(t, b, r.url+web.Prefix+"auth/start?next=/")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), demo.Issuer+"authorize?") {
		t.Fatalf("start: %s %s, Location %q: want a redirect to the demo's authorization endpoint\n%s", resp.Status, body, resp.Header.Get("Location"), demo.Output())
	}
	authURL, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	clientID := authURL.Query().Get("client_id")
	resp, _ = get(t, b, resp.Header.Get("Location"))
	back := resp.Header.Get("Location")
	if !strings.HasPrefix(back, r.url+"/ui/auth/callback?") {
		t.Fatalf("the demo answered %s, Location %q: want a redirect to the console's callback", resp.Status, back)
	}
	resp, body = get(t, b, back)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Signed in as "+clientID) {
		t.Fatalf("the callback: %s, want signed in as the registered client %s:\n%s", resp.Status, clientID, body)
	}
	if resp, _ := get(t, b, r.url+"/"); resp.StatusCode != http.StatusOK {
		t.Errorf("the servers page after signing in: %s, want it", resp.Status)
	}
}
