package tokenauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth"
	"github.com/switchboard-mcp/switchboard/internal/tokenauth/oauthtest"
)

// protectedServer serves an MCP server whose whoami tool answers with the
// user the SDK's TokenInfo names, behind the authenticator's middleware,
// with the metadata beside it. It returns the server's base URL and a
// function reporting the identities the tool saw.
func protectedServer(t *testing.T, build func(resource string) *tokenauth.Authenticator) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var users []string
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "the caller's user id"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			user := req.Extra.TokenInfo.UserID
			if id := tokenauth.FromTokenInfo(req.Extra.TokenInfo); id == nil || id.User != user {
				return nil, nil, fmt.Errorf("the TokenInfo carries no identity for %q", user)
			}
			mu.Lock()
			users = append(users, user)
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: user}}}, nil, nil
		})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := build(srv.URL)
	mux.Handle("/mcp", a.Middleware(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	mux.Handle(tokenauth.WellKnownPath, a.MetadataHandler())
	mux.Handle(tokenauth.WellKnownPath+"/", a.MetadataHandler())
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), users...)
	}
}

// TestGoSDKClientSignsIn runs the MCP Go SDK's own OAuth client against a
// server behind the middleware, with the TypeScript SDK's demo as the
// authorization server: the client gets the 401, follows the challenge to
// this package's metadata, registers, signs in with the resource
// indicator of the endpoint, and calls a tool, whose handler sees the
// user the token was validated for (by introspection at the demo).
func TestGoSDKClientSignsIn(t *testing.T) {
	t.Parallel()
	issuer := startDemoAS(t)
	base, seenUsers := protectedServer(t, func(resource string) *tokenauth.Authenticator {
		return demoAuth(t, issuer, resource, nil)
	})

	const redirect = "http://127.0.0.1:1/callback"
	var authorizations int
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "go-sdk client", TokenEndpointAuthMethod: "none",
		}},
		RedirectURL: redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			authorizations++
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, err
			}
			if got, want := u.Query().Get("resource"), base+"/mcp"; got != want {
				return nil, fmt.Errorf("the client asked for the resource %q, want %q (from the metadata)", got, want)
			}
			if got := u.Query().Get("scope"); got != "mcp:tools" {
				return nil, fmt.Errorf("the client asked for the scope %q, want mcp:tools (from the challenge)", got)
			}
			code, state, err := oauthtest.Approve(args.URL)
			return &auth.AuthorizationResult{Code: code, State: state}, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", OAuthHandler: handler}, nil)
	if err != nil {
		t.Fatalf("connecting with OAuth: %v", err)
	}
	defer cs.Close()
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
		if err != nil || res.IsError {
			t.Fatalf("whoami: %v %+v", err, res)
		}
	}
	users := seenUsers()
	if len(users) != 3 || users[0] == "" || users[0] != users[2] {
		t.Errorf("the tool saw users %q: want one client's id three times", users)
	}
	if authorizations != 1 {
		t.Errorf("the client signed in %d times, want once", authorizations)
	}
}

// TestTypeScriptClientSignsIn runs the TypeScript SDK's OAuth client (its
// own discovery, registration, PKCE and resource indicator) against a
// server behind the middleware, with the TypeScript demo as the
// authorization server: the other implementation of MCP must read this
// package's challenge and metadata as the specification means them.
func TestTypeScriptClientSignsIn(t *testing.T) {
	t.Parallel()
	issuer := startDemoAS(t)
	base, seenUsers := protectedServer(t, func(resource string) *tokenauth.Authenticator {
		return demoAuth(t, issuer, resource, nil)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, err := filepath.Abs(filepath.Join("testdata", "ts-oauth-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, testpeer.Node(t), script, base+"/mcp", "whoami")
	cmd.Env = append(os.Environ(), "SDK_DIR="+filepath.Join(testpeer.Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	var res struct {
		OK           bool   `json:"ok"`
		Text         string `json:"text"`
		AuthorizeURL string `json:"authorizeUrl"`
		Error        string `json:"error"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("the TypeScript client printed %q: %v", out, err)
	}
	if !res.OK {
		t.Fatalf("the TypeScript client failed: %s\n%s", res.Error, stderr.String())
	}
	users := seenUsers()
	if len(users) != 1 || res.Text != users[0] || res.Text == "" {
		t.Errorf("whoami answered %q; the tool saw %q", res.Text, users)
	}
	u, err := url.Parse(res.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Query().Get("resource"), base+"/mcp"; got != want {
		t.Errorf("the client asked for the resource %q, want %q", got, want)
	}
	if got := u.Query().Get("scope"); got != "mcp:tools" {
		t.Errorf("the client asked for the scope %q, want mcp:tools", got)
	}
}
