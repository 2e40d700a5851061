package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// browserish is an HTTP client that keeps cookies and does not follow
// redirects, like a page's fetch would see them.
type browserish struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowserish(t *testing.T, base string) *browserish {
	jar, _ := cookiejar.New(nil)
	return &browserish{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; header pairs follow the body.
func (b *browserish) do(method, path, contentType, body string, header ...string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if strings.EqualFold(header[i], "Host") {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// csrf loads a page and returns the session's CSRF token from it.
func (b *browserish) csrf(path string) string {
	b.t.Helper()
	resp, body := b.do("GET", path, "", "")
	m := csrfMeta.FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		b.t.Fatalf("GET %s: got %d without a CSRF token:\n%s", path, resp.StatusCode, body)
	}
	return m[1]
}

func (b *browserish) cookie() *http.Cookie {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == web.CookieName {
			return c
		}
	}
	return nil
}

func TestConsoleMountAndHeaders(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha")))
	b := newBrowserish(t, r.url)
	resp, body := b.do("GET", "/", "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Servers</h1>") {
		t.Fatalf("GET /: got %d\n%s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "img-src 'self' data:"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP %q allows inline code", csp)
	}
	for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Cache-Control": "no-store", "Referrer-Policy": "same-origin"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: got %q, want %q", h, got, want)
		}
	}
	// No inline script or style in the page.
	for _, bad := range []string{"<script>", " style=", "<style", " onclick=", "javascript:"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	// The session cookie.
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == web.CookieName {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" {
		t.Errorf("session cookie: got %+v, want HttpOnly, SameSite=Strict, Path=/", ck)
	}
	// Assets, and the other endpoints still served by their owners.
	if resp, body := b.do("GET", web.Prefix+"static/app.js", "", ""); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "javascript") || !strings.Contains(body, "textContent") {
		t.Errorf("app.js: got %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := b.do("GET", "/healthz", "", ""); resp.StatusCode != 200 {
		t.Errorf("/healthz: got %d, want 200", resp.StatusCode)
	}
	if resp, _ := b.do("POST", "/hooks/events/x", "application/json", "{}"); resp.Header.Get("Content-Security-Policy") != "" {
		t.Errorf("POST /hooks/events/x: got %d from the console, want the hooks engine to answer", resp.StatusCode)
	}
	cs := r.connect(t, "/mcp", nil, nil)
	waitTools(t, cs, "alpha's tools through /mcp beside the console", has("alpha__echo"))
	if resp, _ := b.do("GET", web.Prefix+"nothing-here", "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown console page: got %d, want 404", resp.StatusCode)
	}
}

func TestConsoleRefusesChangesWithoutCSRF(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha")))
	b := newBrowserish(t, r.url)
	token := b.csrf("/")
	if _, err := r.d.Pool().WaitConnected(context.Background(), "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path, ctype, body string
		header                          []string
		want                            int
	}{
		{"disable, no token", "POST", web.Prefix + "api/servers/alpha/disable", "", "", nil, http.StatusForbidden},
		{"disable, wrong token", "POST", web.Prefix + "api/servers/alpha/disable", "", "", []string{web.CSRFHeader, "x" + token}, http.StatusForbidden},
		{"enable, no token", "POST", web.Prefix + "api/servers/alpha/enable", "", "", nil, http.StatusForbidden},
		{"refresh, no token", "POST", web.Prefix + "api/servers/alpha/refresh", "", "", nil, http.StatusForbidden},
		{"stop, no token", "POST", web.Prefix + "api/stop", "", "", nil, http.StatusForbidden},
		{"resume, no token", "POST", web.Prefix + "api/resume", "", "", nil, http.StatusForbidden},
		{"cancel, no token", "POST", web.Prefix + "api/calls/abc/cancel", "", "", nil, http.StatusForbidden},
		{"fire a hook, no token", "POST", web.Prefix + "hooks/fire", "application/x-www-form-urlencoded", "event=x&dry_run=1", nil, http.StatusForbidden},
		{"log out, no token", "POST", web.Prefix + "logout", "application/x-www-form-urlencoded", "", nil, http.StatusForbidden},
		{"call, no token", "POST", web.Prefix + "api/calls", "application/json", `{"server":"alpha","tool":"echo","arguments":{"message":"hi"}}`, nil, http.StatusForbidden},
		{"call, token in a form field of a JSON post", "POST", web.Prefix + "api/calls?csrf=" + token, "application/json", `{"server":"alpha","tool":"echo"}`, nil, http.StatusForbidden},
		{"stop from another origin, with the token", "POST", web.Prefix + "api/stop", "", "", []string{web.CSRFHeader, token, "Origin", "http://evil.example"}, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := b.do(c.method, c.path, c.ctype, c.body, c.header...)
			if resp.StatusCode != c.want {
				t.Errorf("got %d, want %d: %s", resp.StatusCode, c.want, body)
			}
			var e struct {
				Type string `json:"error_type"`
			}
			if json.Unmarshal([]byte(body), &e) != nil || e.Type != "authorization_error" {
				t.Errorf("body: got %s, want a structured authorization_error", body)
			}
		})
	}
	if r.d.Engine().Stopped() {
		t.Error("a refused stop stopped the engine")
	}
	if sup, _ := r.d.Pool().Supervisor("alpha"); !sup.Snapshot().Enabled {
		t.Error("a refused disable disabled alpha")
	}
	// The same change with the token goes through.
	resp, body := b.do("POST", web.Prefix+"api/servers/alpha/disable", "", "", web.CSRFHeader, token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("disable with the token: got %d %s", resp.StatusCode, body)
	}
	if sup, _ := r.d.Pool().Supervisor("alpha"); sup.Snapshot().Enabled {
		t.Error("disable with the token left alpha enabled")
	}
}

func TestConsoleHostAndOrigin(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(okHTTPServer(t, "alpha")))
	b := newBrowserish(t, r.url)
	cases := []struct {
		name   string
		header []string
		want   int
	}{
		{"loopback", nil, http.StatusOK},
		{"localhost", []string{"Host", "localhost"}, http.StatusOK},
		{"rebinding host", []string{"Host", "evil.example"}, http.StatusForbidden},
		{"foreign origin", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"own origin", []string{"Origin", r.url}, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if resp, body := b.do("GET", "/", "", "", c.header...); resp.StatusCode != c.want {
				t.Errorf("got %d, want %d: %.200s", resp.StatusCode, c.want, body)
			}
		})
	}
}

func TestConsoleLogin(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-token-for-the-console"
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: secret}}
	next := *cfg
	next.Gateway.Tokens = []config.Token{{Name: "ci", User: "alice", Secret: "rotated"}}
	r := start(t, cfg, func(o *Options) { o.Load = func() (*config.Config, error) { c := next; return &c, nil } })
	b := newBrowserish(t, r.url)

	// Not logged in: pages redirect, the API answers 401.
	resp, _ := b.do("GET", web.Prefix+"history?tool=x", "", "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != web.Prefix+"login?next="+url.QueryEscape(web.Prefix+"history?tool=x") {
		t.Errorf("page before login: got %d to %q, want 303 to the login", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := b.do("GET", web.Prefix+"api/servers", "", "")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "authentication_error") {
		t.Errorf("API before login: got %d %s, want 401 authentication_error", resp.StatusCode, body)
	}
	if resp, _ := b.do("GET", web.Prefix+"events", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("events before login: got %d, want 401", resp.StatusCode)
	}

	token := b.csrf(web.Prefix + "login?next=%2Fui%2Fhistory")
	pre := b.cookie()
	form := func(v url.Values) string { return v.Encode() }
	const formType = "application/x-www-form-urlencoded"
	// No CSRF token, a wrong token, then the right one.
	if resp, _ := b.do("POST", web.Prefix+"login", formType, form(url.Values{"token": {secret}})); resp.StatusCode != http.StatusForbidden {
		t.Errorf("login without CSRF: got %d, want 403", resp.StatusCode)
	}
	if resp, body := b.do("POST", web.Prefix+"login", formType, form(url.Values{"csrf": {token}, "token": {"wrong"}})); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not valid") {
		t.Errorf("wrong token: got %d, want 401 with a message", resp.StatusCode)
	}
	resp, _ = b.do("POST", web.Prefix+"login", formType, form(url.Values{"csrf": {token}, "token": {secret}, "next": {"//evil.example/x"}}))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("login: got %d to %q, want 303 to / (an off-site next is ignored)", resp.StatusCode, resp.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == web.CookieName {
			ck = c
		}
	}
	switch {
	case ck == nil:
		t.Fatal("login set no session cookie")
	case !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode:
		t.Errorf("session cookie: got %+v, want HttpOnly and SameSite=Strict", ck)
	case ck.Value == pre.Value:
		t.Error("login kept the session id it was given (session fixation)")
	case strings.Contains(ck.Value, secret):
		t.Error("the cookie holds the token")
	}
	page := b.csrf("/")
	if _, body := b.do("GET", "/", "", ""); !strings.Contains(body, "Log out alice") {
		t.Error("the page does not show who is logged in")
	}

	// A call from the console carries the user and the source "web".
	if _, err := r.d.Pool().WaitConnected(context.Background(), "alpha", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	resp, body = b.do("POST", web.Prefix+"api/calls", "application/json", `{"server":"alpha","tool":"echo","arguments":{"message":"hi"}}`, web.CSRFHeader, page)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("starting a call: got %d %s", resp.StatusCode, body)
	}
	recs := r.waitRecords(t, store.CallFilter{Source: "web"}, func(rs []store.CallRecord) bool { return len(rs) == 1 })
	if recs[0].Identity != "alice" || recs[0].Tool != "echo" || recs[0].Status != "success" {
		t.Errorf("history: got %+v, want alice's successful echo", recs[0])
	}
	// Arguments that break the schema are refused at once, field by field.
	resp, body = b.do("POST", web.Prefix+"api/calls", "application/json", `{"server":"alpha","tool":"echo","arguments":{}}`, web.CSRFHeader, page)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `"field":"message"`) {
		t.Errorf("invalid arguments: got %d %s, want 422 naming the field", resp.StatusCode, body)
	}

	// A reload that changes the token ends the session.
	if _, err := r.d.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, _ := b.do("GET", "/", "", ""); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the token changed: got %d, want 303 to the login", resp.StatusCode)
	}
}
