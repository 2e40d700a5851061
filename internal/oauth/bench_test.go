package oauth_test

import (
	"context"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// BenchmarkToken measures what a signed-in handler adds to each upstream
// request: the store's freshness check (a stat of the sealed file, cached
// while it is unchanged) and the token's expiry check.
func BenchmarkToken(b *testing.B) {
	f := newFakeAS(b, nil)
	m, err := oauth.New(oauth.Options{StateDir: b.TempDir(), OpenBrowser: scriptedBrowser(b, "allow")})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	srv := oauth.Server{Name: "fake", URL: f.mcpURL()}
	if _, err := m.Login(ctx, srv, oauth.LoginOptions{}); err != nil {
		b.Fatal(err)
	}
	h := m.Handler(srv, oauth.HandlerOptions{})
	b.ReportAllocs()
	for b.Loop() {
		ts, err := h.TokenSource(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ts.Token(); err != nil {
			b.Fatal(err)
		}
	}
}
