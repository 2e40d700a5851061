package cli

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeStdioWithoutTheTokensVariable: serve --stdio, as a client that
// client connect set up launches it (in the client's environment, which
// lacks the gateway tokens' token_env variables), serves its one client:
// client connect says such a client needs no token, and the tokens are
// for the HTTP gateway. Another unset variable still stops it.
func TestServeStdioWithoutTheTokensVariable(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha")+
		"gateway:\n  tokens:\n    - name: me\n      user: alice\n      token_env: SWITCHBOARD_TEST_NEVER_SET_TOKEN\n")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state, _ := envOf(t)("SWITCHBOARD_STATE_DIR")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = []string{envRunMain + "=1", "SWITCHBOARD_STATE_DIR=" + state, "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("serve --stdio without the tokens' variable: %v", err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("a call through serve --stdio: %v %v", res, err)
	}

	// A variable a server needs is still required.
	cfg = writeConfigWith(t, map[string]string{},
		"  - name: beta\n    transport: http\n    url: http://127.0.0.1:1/mcp\n    headers: {X-Key: \"${SWITCHBOARD_TEST_NEVER_SET_KEY}\"}\n"+
			"gateway:\n  tokens:\n    - name: me\n      user: alice\n      token_env: SWITCHBOARD_TEST_NEVER_SET_TOKEN\n")
	r := runCLI(t, "serve", "--stdio", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "serve --stdio stderr", r.stderr, "SWITCHBOARD_TEST_NEVER_SET_KEY")
}
