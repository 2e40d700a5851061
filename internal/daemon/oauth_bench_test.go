package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// BenchmarkGatewayAuth measures what signing in costs per gateway request:
// one client calls a trivial in-process tool through /mcp with no
// authentication (loopback), a static token, an OAuth JWT (the key set
// cached) and an opaque OAuth token (introspection, the cache warm), in the
// same run. Each sub-benchmark fails if the authorization server is asked
// anything per call.
//
//	go test -run '^$' -bench BenchmarkGatewayAuth -benchtime 3s ./internal/daemon/
func BenchmarkGatewayAuth(b *testing.B) {
	is := oauthtest.New(b)
	for _, bc := range authCases(b, is) {
		b.Run(bc.name, func(b *testing.B) {
			cs := echoGateway(b, bc.set, bc.token)
			ctx := context.Background()
			call := func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo__echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError {
					b.Fatalf("echo: %v %v", err, res)
				}
			}
			call() // the token is checked (and cached) here
			jwks, intro := is.JWKSHits(), is.IntrospectionHits()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				call()
			}
			b.StopTimer()
			if n := is.IntrospectionHits() - intro; n > 0 {
				b.Fatalf("%d introspection requests during %d calls, want none", n, b.N)
			}
			if n := is.JWKSHits() - jwks; n > 1 { // Run's scheduled fetch may land in the loop
				b.Fatalf("%d key set fetches during %d calls, want none", n, b.N)
			}
		})
	}
}

// BenchmarkGatewayAuthCheck isolates what authentication adds to one
// request in the gateway's HTTP handler, without the network, the MCP
// session or the tool call around it: each request is authenticated, then
// refused by the next check (an unknown query parameter, 400), so that the
// differences between the sub-benchmarks are the cost of the check itself
// (none, a static token, a JWT with the key set cached, an introspected
// token with the cache warm).
//
//	go test -run '^$' -bench BenchmarkGatewayAuthCheck ./internal/daemon/
func BenchmarkGatewayAuthCheck(b *testing.B) {
	is := oauthtest.New(b)
	for _, bc := range authCases(b, is) {
		b.Run(bc.name, func(b *testing.B) {
			cfg := testConfig()
			bc.set(&cfg.Gateway)
			d, _, _ := newDaemon(b, cfg)
			h := d.Handler()
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7777/mcp?unknown=1", strings.NewReader("{}"))
			if bc.token != "" {
				req.Header.Set("Authorization", "Bearer "+bc.token)
			}
			serve := func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusBadRequest {
					b.Fatalf("status %d, want 400 (authenticated, then refused): %s", rec.Code, rec.Body)
				}
			}
			serve() // the key set is fetched, the token checked and cached
			jwks, intro := is.JWKSHits(), is.IntrospectionHits()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				serve()
			}
			b.StopTimer()
			if is.JWKSHits() != jwks || is.IntrospectionHits() != intro {
				b.Fatalf("the authorization server was asked during the loop")
			}
		})
	}
}

// authCase is one way of authenticating for the benchmarks.
type authCase struct {
	name  string
	token string
	set   func(*config.Gateway)
}

// authCases are the ways of authenticating the benchmarks compare, with
// tokens of the issuer: a JWT, and an opaque token it introspects.
func authCases(b *testing.B, is *oauthtest.Issuer) []authCase {
	const opaque = "opaque-bench-token-5f2c"
	is.Activate(opaque, map[string]any{"sub": "ivy", "aud": oauthResource + "/mcp", "scope": "mcp:tools", "iss": is.URL})
	jwt := is.Token(b, is.Claims("jay", oauthResource+"/mcp", map[string]any{"scope": "mcp:tools"}))
	return []authCase{
		{"none", "", func(*config.Gateway) {}},
		{"static", "static-bench-token", func(g *config.Gateway) {
			g.Tokens = []config.Token{{Name: "bench", User: "bench", Secret: "static-bench-token"}}
		}},
		{"oauth-jwt", jwt, func(g *config.Gateway) {
			g.OAuth = &config.OAuth{Resource: oauthResource, Issuer: is.URL, Scopes: []string{"mcp:tools"}}
		}},
		{"oauth-introspection", opaque, func(g *config.Gateway) {
			g.OAuth = &config.OAuth{Resource: oauthResource, Issuer: is.URL, Scopes: []string{"mcp:tools"},
				Introspection: &config.OAuthIntrospection{URL: is.URL + "/introspect"}}
		}},
	}
}

// echoGateway runs a daemon whose one server is an in-process MCP server
// with an echo tool, configured by set, and returns a session on /mcp
// with the token (none when empty), closed when tb ends.
func echoGateway(tb testing.TB, set func(*config.Gateway), token string) *mcp.ClientSession {
	tb.Helper()
	dir, err := os.MkdirTemp("", "sbo")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	cfg := testConfig(config.Server{
		Name: "echo", Transport: config.TransportBuiltin, Enabled: true, LoadTools: true,
		ConnectTimeout: 10 * time.Second, RequestTimeout: 10 * time.Second,
	})
	set(&cfg.Gateway)
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "switchboard.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	d, err := New(Options{Config: cfg, Store: st, StateDir: dir, Version: "bench", NoControl: true,
		DialOptions: func(server string, o *upstream.DialOptions) {
			o.NewTransport = func(ctx context.Context) (mcp.Transport, error) {
				srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
				type args struct {
					Text string `json:"text"`
				}
				mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes the text."},
					func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
					})
				ct, stt := mcp.NewInMemoryTransports()
				if _, err := srv.Connect(context.WithoutCancel(ctx), stt, nil); err != nil {
					return nil, err
				}
				return ct, nil
			}
		}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.Listen(); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			tb.Error("the daemon did not shut down within 30s")
		}
	})
	var h http.Header
	if token != "" {
		h = bearer(token)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tb.Cleanup(tr.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer ccancel()
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: "http://" + d.Addr() + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{h, tr}}}, nil)
	if err != nil {
		tb.Fatalf("connecting: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := cs.ListTools(cctx, nil)
		if err == nil && len(res.Tools) > 0 {
			return cs
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the echo tool never appeared: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
