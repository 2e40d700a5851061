package oauth_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// testCtx is a test's context with a deadline.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newManager returns a Manager on a fresh state directory whose browser is
// the scripted one in mode.
func newManager(t *testing.T, mode string, opts ...func(*oauth.Options)) (*oauth.Manager, string) {
	t.Helper()
	dir := t.TempDir()
	o := oauth.Options{StateDir: dir, OpenBrowser: scriptedBrowser(t, mode)}
	for _, f := range opts {
		f(&o)
	}
	m, err := oauth.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// call connects with a handler for srv and calls tool.
func call(ctx context.Context, m *oauth.Manager, srv oauth.Server, hopts oauth.HandlerOptions, tool string) (*mcp.CallToolResult, error) {
	cs, err := connect(ctx, srv.URL, m.Handler(srv, hopts), false)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}})
}

func mustCall(t *testing.T, ctx context.Context, m *oauth.Manager, srv oauth.Server, tool string) {
	t.Helper()
	res, err := call(ctx, m, srv, oauth.HandlerOptions{}, tool)
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	if res.IsError || res.Content[0].(*mcp.TextContent).Text != tool+": hi" {
		t.Fatalf("calling %s: got %+v", tool, res.Content)
	}
}

// TestDiscoveryVariants signs in through each place metadata can live, and
// checks the resource indicator on every authorization and token request.
func TestDiscoveryVariants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                       string
		prmAt, metaAt, issuerPath  string
		wantResourceIsOrigin       bool
		wantDefaultEndpointsLegacy bool
	}{
		{name: "challenge resource_metadata, RFC 8414", prmAt: "challenge", metaAt: "oauth"},
		{name: "path-based PRM, RFC 8414 path insertion", prmAt: "path", metaAt: "oauth", issuerPath: "/tenant"},
		{name: "root PRM, OpenID path insertion", prmAt: "root", metaAt: "openid-insert", issuerPath: "/tenant", wantResourceIsOrigin: true},
		{name: "path-based PRM, OpenID path appending", prmAt: "path", metaAt: "openid-append", issuerPath: "/tenant"},
		{name: "root PRM, OpenID at root", prmAt: "root", metaAt: "openid-insert", wantResourceIsOrigin: true},
		{name: "2025-03-26: no PRM, AS metadata at the origin", prmAt: "none", metaAt: "oauth"},
		{name: "2025-03-26: no metadata at all, default endpoints", prmAt: "none", metaAt: "none", wantDefaultEndpointsLegacy: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, func(f *fakeAS) { f.prmAt, f.metaAt, f.issuerPath = tc.prmAt, tc.metaAt, tc.issuerPath })
			m, _ := newManager(t, "allow")
			ctx := testCtx(t)
			srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
			st, err := m.Login(ctx, srv, oauth.LoginOptions{})
			if err != nil {
				t.Fatalf("Login: %v", err)
			}
			if canon := strings.TrimSuffix(st.Issuer, "/"); canon != f.issuer() {
				t.Errorf("issuer: got %q, want %q", st.Issuer, f.issuer())
			}
			mustCall(t, ctx, m, srv, "echo")
			_, resource := f.prmURL()
			if tc.prmAt == "none" {
				resource = f.mcpURL()
			}
			if tc.wantResourceIsOrigin && resource != f.srv.URL {
				t.Fatalf("test setup: root PRM resource %q", resource)
			}
			az, tk := f.requests()
			if len(az) != 1 || len(tk) != 1 {
				t.Fatalf("requests: got %d authorize and %d token, want 1 and 1", len(az), len(tk))
			}
			if got := az[0].Get("resource"); got != resource {
				t.Errorf("authorize resource: got %q, want %q", got, resource)
			}
			if got := tk[0].form.Get("resource"); got != resource {
				t.Errorf("token resource: got %q, want %q", got, resource)
			}
			if got := az[0].Get("code_challenge_method"); got != "S256" {
				t.Errorf("code_challenge_method: got %q, want S256", got)
			}
		})
	}
}

// TestDiscoveryRefusals: an authorization server that fails its checks is
// refused with a clear error before any browser opens.
func TestDiscoveryRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		configure func(*fakeAS)
		settings  oauth.Settings
		want      []string
	}{
		{"no PKCE S256", func(f *fakeAS) { f.pkce = []string{"plain"} }, oauth.Settings{}, []string{"PKCE with S256", "forbids signing in without PKCE S256"}},
		{"no PKCE at all", func(f *fakeAS) { f.pkce = nil }, oauth.Settings{}, []string{"does not implement PKCE"}},
		{"mismatched issuer", func(f *fakeAS) { f.issuerOverride = "https://evil.example.com" }, oauth.Settings{}, []string{"issuer", "https://evil.example.com", "does not match"}},
		{"PRM names a non-AS", func(f *fakeAS) { f.metaAt = "none" }, oauth.Settings{}, []string{"publishes neither OAuth (RFC 8414) nor OpenID Connect discovery metadata"}},
		{"configured issuer not offered", nil, oauth.Settings{Issuer: "https://other.example.com"}, []string{"not the configured issuer", "oauth.issuer"}},
		{"no registration possible", func(f *fakeAS) { f.dcr = false }, oauth.Settings{}, []string{"offers no dynamic client registration", "set oauth.client_id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAS(t, tc.configure)
			opened := false
			m, _ := newManager(t, "allow", func(o *oauth.Options) {
				o.OpenBrowser = func(context.Context, string) (<-chan error, error) { opened = true; return nil, errors.New("no") }
			})
			_, err := m.Login(testCtx(t), oauth.Server{Name: "fake", URL: f.mcpURL(), Settings: tc.settings}, oauth.LoginOptions{})
			if err == nil {
				t.Fatal("Login: got nil error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if opened {
				t.Error("a browser was opened for a refused authorization server")
			}
		})
	}
}

// TestUnreachable: a dead MCP server, and a protected resource naming an
// authorization server that does not answer.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	dead := newFakeAS(t, nil)
	deadURL := dead.srv.URL
	dead.srv.Close()
	m, _ := newManager(t, "allow")
	ctx := testCtx(t)

	_, err := m.Login(ctx, oauth.Server{Name: "gone", URL: deadURL + "/mcp"}, oauth.LoginOptions{})
	if err == nil || !strings.Contains(err.Error(), "reaching the server to sign in") {
		t.Errorf("Login on a dead server: got %v, want it to say the server could not be reached", err)
	}

	f := newFakeAS(t, func(f *fakeAS) { f.namedAS = deadURL })
	_, err = m.Login(ctx, oauth.Server{Name: "fake", URL: f.mcpURL()}, oauth.LoginOptions{})
	var ase *oauth.AuthServerError
	if !errors.As(err, &ase) || ase.URL != deadURL || !strings.Contains(err.Error(), "reachable") {
		t.Errorf("Login with a dead authorization server: got %v, want an AuthServerError for %s saying to check it is reachable", err, deadURL)
	}
}
