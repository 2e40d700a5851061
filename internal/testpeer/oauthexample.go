package testpeer

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// OAuthExample is a running TypeScript SDK example server with OAuth: an
// MCP server that requires a bearer token, beside its demo authorization
// server.
type OAuthExample struct {
	// URL is the MCP endpoint, http://localhost:PORT/mcp: the example names
	// itself with "localhost", and its protected resource metadata and
	// token checks use that spelling, so clients must too.
	URL string
	// Issuer is the authorization server, http://localhost:AUTH_PORT/.
	Issuer string
	// Output returns what the example printed so far (for failure
	// messages).
	Output func() string
}

// StartOAuthExample runs the TypeScript SDK's
// dist/esm/examples/server/simpleStreamableHttp.js with --oauth, and
// --oauth-strict too when strict (the authorization server then refuses a
// code exchange whose resource indicator is not the MCP server's URL, and
// the MCP server a token issued for another resource), for the rest of the
// test. Ports come from MCP_PORT and MCP_AUTH_PORT.
//
// What the pinned SDK (1.32.2) example does: the MCP server on MCP_PORT
// serves /mcp behind bearer auth (401 with WWW-Authenticate
// resource_metadata="http://localhost:PORT/.well-known/oauth-protected-resource/mcp"),
// and the protected resource metadata there (scopes_supported
// ["mcp:tools"]). The authorization server on MCP_AUTH_PORT serves RFC 8414
// metadata (PKCE S256, dynamic registration; no revocation), /register,
// /authorize, /token and /introspect. /authorize approves at once: it
// answers 302 to the registered redirect URI with code and state, so a
// browser that follows redirects completes the sign-in. Tokens last an hour,
// no refresh token is issued (refresh is "not implemented" in the demo),
// and the MCP server checks tokens by introspection. Its tools include
// greet and multi-greet.
func StartOAuthExample(t testing.TB, strict bool) *OAuthExample {
	t.Helper()
	node := Node(t)
	script := filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	args := []string{script, "--oauth"}
	if strict {
		// --oauth-strict alone does not turn OAuth on: it tightens --oauth.
		args = append(args, "--oauth-strict")
	}
	var failures []string
	for attempt := 1; attempt <= startAttempts; attempt++ {
		mcpPort, err1 := freePort()
		authPort, err2 := freePort()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("testpeer: finding free ports for the OAuth example: %v", err)
		}
		if mcpPort == authPort {
			continue
		}
		p, err := spawn(t, node, args, []string{"MCP_PORT=" + strconv.Itoa(mcpPort), "MCP_AUTH_PORT=" + strconv.Itoa(authPort)})
		if err != nil {
			t.Fatalf("testpeer: starting the OAuth example: %v", err)
		}
		deadline := time.Now().Add(startTimeout)
		err = p.waitListening(mcpPort, deadline)
		if err == nil {
			err = p.waitListening(authPort, deadline)
		}
		if err == nil {
			return &OAuthExample{
				URL:    fmt.Sprintf("http://localhost:%d/mcp", mcpPort),
				Issuer: fmt.Sprintf("http://localhost:%d/", authPort),
				Output: p.out.String,
			}
		}
		p.stop()
		failures = append(failures, fmt.Sprintf("attempt %d on ports %d, %d: %v; output:\n%s", attempt, mcpPort, authPort, err, p.out))
		if !errors.Is(err, errExited) {
			break
		}
	}
	t.Fatalf("testpeer: the OAuth example did not start:\n%s", strings.Join(failures, "\n"))
	return nil
}

// SharedOAuthExample is [StartOAuthExample]'s example shared by the test
// binary's tests (see [Shared]; the binary's TestMain calls [StopShared]):
// for tests that sign in to it and call it, each with a state directory,
// and so a client registration and tokens, of its own. A test that reads
// the example's output as its own, or whose point is its process, starts
// its own.
func SharedOAuthExample(t testing.TB, strict bool) *OAuthExample {
	t.Helper()
	name := "OAuth example"
	if strict {
		name += " (strict)"
	}
	url := Shared(t, name, func(tb testing.TB) string {
		ex := StartOAuthExample(tb, strict)
		sharedOAuth.Store(ex.URL, ex)
		return ex.URL
	})
	ex, _ := sharedOAuth.Load(url)
	return ex.(*OAuthExample)
}

// sharedOAuth holds the shared OAuth examples by URL.
var sharedOAuth sync.Map
