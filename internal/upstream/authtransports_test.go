package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
)

// protectedServer serves mcpHandler at path behind a bearer check by the
// TypeScript example's authorization server (its tokens introspected,
// audience the server's own URL), with the protected resource metadata
// (RFC 9728) that names that authorization server: a real OAuth-protected
// MCP server of a transport the TS example does not speak.
func protectedServer(t *testing.T, issuer, path string, mcpHandler http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := tokenauth.New(tokenauth.Options{
		Resource:      "http://" + ln.Addr().String(),
		Issuer:        issuer,
		Introspection: &tokenauth.Introspection{URL: issuer + "introspect"},
		UserClaim:     "client_id", // the example's tokens have no sub
		Scopes:        []string{"mcp:tools"},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/", a.MetadataHandler())
	mux.Handle("/.well-known/oauth-protected-resource", a.MetadataHandler())
	mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, refusal := a.Authenticate(r); refusal != nil {
			refusal.Write(w)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	ts := httptest.NewUnstartedServer(mux)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

func greetServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "v0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greets"},
		func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})
	return s
}

// TestOAuthOverSSEAndWebSocket: a server behind OAuth over the legacy SSE
// transport, and one over WebSocket (the handshake carries the token), go
// needs_auth → sign-in → calls work, with no failure counted, as the
// streamable HTTP servers do (TestSupervisorNeedsAuth).
func TestOAuthOverSSEAndWebSocket(t *testing.T) {
	t.Parallel()
	ex := testpeer.StartOAuthExample(t, false)
	srv := greetServer()
	cases := []struct {
		name      string
		transport config.Transport
		url       func(*httptest.Server) string
		path      string
		handler   http.Handler
		// perRequest: the token goes on every request, not only on
		// the connection's first.
		perRequest bool
	}{
		{"sse", config.TransportSSE, func(ts *httptest.Server) string { return ts.URL + "/sse" }, "/sse",
			mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil), true},
		{"websocket", config.TransportWebSocket, func(ts *httptest.Server) string { return wsURL(ts) + "/mcp" }, "/mcp",
			NewWebSocketHandler(func(*http.Request) *mcp.Server { return srv }, nil), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := protectedServer(t, ex.Issuer, tc.path, tc.handler)
			m, err := oauth.New(oauth.Options{StateDir: t.TempDir(), OpenBrowser: allowBrowser(t)})
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.Server{Name: "demo", Transport: tc.transport, URL: tc.url(ts), Enabled: true,
				TerminateOnClose: true, ConnectTimeout: 30 * time.Second}
			h := fastHealth()
			h.MaxFailures = 1
			h.PingTimeout = 10 * time.Second
			s := NewSupervisor(SupervisorOptions{Server: cfg, Health: h, Dial: DialOptions{Auth: NewAuth(m, cfg)}})
			runSupervisor(t, s)

			snap := waitSnapshot(t, s, 30*time.Second, "needs_auth", func(sn Snapshot) bool {
				return sn.State == StateNeedsAuth || sn.ConsecutiveFailures > 0
			})
			if snap.State != StateNeedsAuth || !strings.Contains(snap.LastError, "server demo needs sign-in: not signed in") ||
				snap.ConsecutiveFailures != 0 {
				t.Fatalf("before sign-in: got state %s, error %q, %d failures; want needs_auth, not signed in, no failure",
					snap.State, snap.LastError, snap.ConsecutiveFailures)
			}
			if _, err := s.Client(); fault.KindOf(err) != fault.Authentication || !strings.Contains(err.Error(), "switchboard auth login demo") {
				t.Errorf("Client while needs_auth: got %v (kind %s), want an authentication error naming the command", err, fault.KindOf(err))
			}

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := m.Login(ctx, OAuthServer(cfg), oauth.LoginOptions{}); err != nil {
				t.Fatalf("Login: %v\n%s", err, ex.Output())
			}
			waitSnapshot(t, s, 30*time.Second, "connected after sign-in", func(sn Snapshot) bool { return sn.State == StateConnected })
			c, err := s.Client()
			if err != nil {
				t.Fatal(err)
			}
			if got := greetOnce(t, c, ctx); got != "Hello, Ada!" {
				t.Errorf("greet: got %q, want Hello, Ada!", got)
			}
			if snap := s.Snapshot(); snap.ConsecutiveFailures != 0 {
				t.Errorf("after sign-in: %d failures counted, want none", snap.ConsecutiveFailures)
			}

			// Logout. SSE sends the token on every POST: the next ping is
			// refused and the server needs a sign-in again, still without
			// a failure. A WebSocket presents it only at the handshake: the
			// open socket goes on, and the next connection needs a sign-in.
			if _, err := m.Logout(ctx, OAuthServer(cfg), ""); err != nil {
				t.Fatal(err)
			}
			if tc.perRequest {
				snap = waitSnapshot(t, s, 10*time.Second, "needs_auth after logout", func(sn Snapshot) bool { return sn.State == StateNeedsAuth })
				if snap.ConsecutiveFailures != 0 {
					t.Errorf("after logout: %d failures counted, want none", snap.ConsecutiveFailures)
				}
			}
			_, err = Dial(ctx, cfg, DialOptions{Auth: NewAuth(m, cfg)})
			if _, ok := oauth.AsNeedsSignIn(err); !ok || !strings.Contains(err.Error(), "switchboard auth login demo") {
				t.Errorf("a new connection after logout: got %v, want a needs-sign-in error naming the command", err)
			}
		})
	}
}
