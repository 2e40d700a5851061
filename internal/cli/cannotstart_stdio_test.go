package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestServeStdioCannotStartSaysWhatReachesIt: serve --stdio, as Claude
// Desktop launches it, has no control socket, so a server of its file
// that cannot start does not say "switchboard reload", which would not
// reach it: its state line on stderr and the gateway's answer to a call
// of its tool say to restart the client or send that serve SIGHUP, with
// its pid. SIGHUP then reloads it, and the server starts.
func TestServeStdioCannotStartSaysWhatReachesIt(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	setenv(t, "SWITCHBOARD_STATE_DIR", state)
	setenv(t, "HOME", t.TempDir())
	exe := testserver.Command(t)
	envFile := filepath.Join(t.TempDir(), "bad.env")
	env := map[string]string{testserver.EnvMode: "ok", "GORACE": testserver.RaceEnv}
	file := writeClientFile(t, "claude_desktop_config.json", map[string]any{"mcpServers": map[string]any{
		"good": map[string]any{"command": exe, "env": env},
		"bad":  map[string]any{"command": exe, "env": env, "envFile": envFile},
	}})
	wantCode(t, runCLI(t, "config", "trust", file, "--yes"), ExitOK)

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(self, "serve", "--stdio", "--config", file)
	cmd.Env = []string{envRunMain + "=1", "SWITCHBOARD_STATE_DIR=" + state, "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("serve --stdio: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	pid := cmd.Process.Pid
	hint := fmt.Sprintf("then restart the MCP client that runs switchboard serve --stdio, or send that serve SIGHUP (kill -HUP %d)", pid)

	eventuallyCLI(t, 30*time.Second, "bad's cannot_start line on stderr", func() bool {
		return strings.Contains(stderr.String(), "cannot_start")
	})
	var line string
	for l := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.Contains(l, "cannot_start") {
			line = l
		}
	}
	wantContains(t, "bad's state line", line, "env file "+envFile+" does not exist", hint,
		"neither switchboard reload nor config trust reaches it")
	if strings.Contains(line, "then run: switchboard reload") {
		t.Errorf("bad's state line: got %q, want no switchboard reload, which does not reach serve --stdio", line)
	}

	call := func() (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "bad__echo", Arguments: map[string]any{"message": "hi"}})
	}
	res, err := call()
	if err != nil || !res.IsError {
		t.Fatalf("bad__echo: got %+v, %v; want an error result", res, err)
	}
	wantContains(t, "bad__echo's error", textOfResult(res), "server bad cannot start", "env file "+envFile+" does not exist", hint)

	// Fixed, and SIGHUP: serve --stdio reloads and starts the server.
	if err := os.WriteFile(envFile, []byte("GREETING=hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventuallyCLI(t, 30*time.Second, "bad__echo answering after SIGHUP", func() bool {
		res, err := call()
		if err != nil {
			t.Fatalf("bad__echo after SIGHUP: %v\n%s", err, stderr.String())
		}
		return !res.IsError && strings.Contains(textOfResult(res), "hi")
	})
	wantContains(t, "serve --stdio's stderr", stderr.String(), "configuration reloaded from "+file)
}
