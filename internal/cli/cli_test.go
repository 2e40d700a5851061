package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// envRunMain makes the test binary act as the switchboard binary (for
// servers launched as "switchboard builtin ...").
const envRunMain = "SWITCHBOARD_TEST_MAIN"

func TestMain(m *testing.M) {
	testserver.Init()
	testpeer.RunBrowserIfAsked() // before envRunMain: a browser a test's CLI process opened
	if os.Getenv(envRunMain) == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	testpeer.StopShared() // the peers tests share (everythingURL)
	os.Exit(code)
}

// result is what one CLI run produced.
type result struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return runCLICtx(t, context.Background(), args...)
}

func runCLICtx(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	return runCLIInput(t, ctx, os.Stdin, args...)
}

// runCLIInput runs the command line with stdin in t's environment and
// working directory (see setenv, chdir).
func runCLIInput(t *testing.T, ctx context.Context, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, invocation{args: args, stdin: stdin, stdout: &out, stderr: &errb, env: envOf(t), dir: dirOf(t)})
	return result{out.String(), errb.String(), code}
}

// deadServer is the command of a stdio server that dies at start as the
// test server's "exit" mode does — the same words on stderr, exit code 3 —
// from a shell: a failing child for a few milliseconds of CPU, where the
// race-built test server takes ~150 ms to start only to exit.
const deadServer = "/bin/sh"

// deadServerArgs are deadServer's arguments.
var deadServerArgs = []string{"-c", "echo 'fatal: missing API key GIZMO_TOKEN' >&2; exit 3"}

// writeConfig writes a switchboard.yaml whose servers run the test server
// in the given modes ("exit": deadServer), and isolates the state
// directory.
func writeConfig(t *testing.T, servers map[string]string) string {
	t.Helper()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	exe := testserver.Command(t)
	allowed := fmt.Sprintf("%q", exe)
	for _, mode := range servers {
		if mode == "exit" {
			allowed += fmt.Sprintf(", %q", deadServer)
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  connect_timeout: 10s\n  request_timeout: 10s\n")
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%s]\n", allowed)
	b.WriteString("servers:\n")
	for _, name := range sortedKeys(servers) {
		if servers[name] == "exit" {
			fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    args: [%q, %q]\n", name, deadServer, deadServerArgs[0], deadServerArgs[1])
			continue
		}
		fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    env: %s\n", name, exe, testserver.EnvYAML(servers[name]))
	}
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code: got %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

func TestServersToolsAndCall(t *testing.T) {
	t.Parallel()
	// alpha is served in this process (every command below would start it
	// again); beta is a stdio child, listed as one and started fresh for
	// the tool it announces after initialize.
	cfg := writeConfigWith(t, map[string]string{"beta": "ok"}, httpServersYAML(t, "alpha"))

	r := runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "NAME", "alpha", "beta", "http", "stdio", "connected")

	r = runCLI(t, "servers", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("servers --json: got %q (%v), want two rows", r.stdout, err)
	}
	if rows[0]["state"] != "connected" || rows[0]["tools"].(float64) < 5 {
		t.Errorf("servers --json row: got %v, want connected with tools", rows[0])
	}

	r = runCLI(t, "tools", "alpha", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "tools", r.stdout, "echo", "Echoes the message back.", "broken input schema")
	if strings.Contains(r.stdout, "beta") {
		t.Errorf("tools alpha lists beta's tools:\n%s", r.stdout)
	}

	r = runCLI(t, "tool", "alpha", "echo", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "tool", r.stdout, "echo (server alpha, exposed as alpha__echo)", "message", "string, required", "read-only")

	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=hello world")
	wantCode(t, r, ExitOK)
	if r.stdout != "hello world\n" {
		t.Errorf("call echo: got %q, want %q", r.stdout, "hello world\n")
	}
	// Numbers are typed by the schema.
	// The name the gateway lists (and tool prints) works as well.
	r = runCLI(t, "call", "--config", cfg, "alpha__echo", "message=exposed")
	wantCode(t, r, ExitOK)
	if r.stdout != "exposed\n" {
		t.Errorf("call alpha__echo: got %q, want %q", r.stdout, "exposed\n")
	}
	r = runCLI(t, "tool", "alpha__echo", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "tool alpha__echo", r.stdout, "echo (server alpha, exposed as alpha__echo)")

	r = runCLI(t, "call", "--config", cfg, "alpha", "add", "a=2", "b=3.5")
	wantCode(t, r, ExitOK)
	if r.stdout != "5.5\n" {
		t.Errorf("call add: got %q, want %q", r.stdout, "5.5\n")
	}
	// --args JSON, overridden by key=value.
	r = runCLI(t, "call", "--config", cfg, "alpha", "add", "--args", `{"a": 1, "b": 1}`, "b=41")
	wantCode(t, r, ExitOK)
	if r.stdout != "42\n" {
		t.Errorf("call add --args: got %q, want %q", r.stdout, "42\n")
	}
	// --json prints the whole result.
	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x", "--json")
	wantCode(t, r, ExitOK)
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Content) != 1 {
		t.Errorf("call --json: got %q (%v), want a CallToolResult", r.stdout, err)
	}
	// A tool that appears after initialize (tools/list_changed) can be
	// called: beta's process starts with this command.
	r = runCLI(t, "call", "--config", cfg, "beta", "late")
	wantCode(t, r, ExitOK)
	wantContains(t, "call late", r.stdout, "late tool ran")
}

func TestCallErrors(t *testing.T) {
	t.Parallel()
	// alpha is served in this process (each case would start it again);
	// dead is a stdio child that exits, whose stderr the error shows.
	cfg := writeConfigWith(t, map[string]string{"dead": "exit"}, httpServersYAML(t, "alpha"))
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStderr []string
	}{
		{"tool error", []string{"call", "alpha", "fail"}, ExitFailure, []string{"the gizmo is broken"}},
		{"unknown tool", []string{"call", "alpha", "ecoh"}, ExitFailure, []string{`server alpha has no tool named "ecoh"; did you mean "echo"?`}},
		{"unknown server", []string{"call", "alpah", "echo"}, ExitFailure, []string{`no server named "alpah" is configured; did you mean "alpha"?` + "\n"}},
		{"wrong type", []string{"call", "alpha", "add", "a=two", "b=1"}, ExitFailure, []string{`a: want a number, got "two"`}},
		{"unknown parameter", []string{"call", "alpha", "echo", "mesage=x"}, ExitFailure, []string{`the tool has no parameter "mesage"; did you mean "message"?`}},
		{"missing required", []string{"call", "alpha", "add", "a=1"}, ExitFailure, []string{"arguments for alpha/add are invalid; b: required, but missing"}},
		{"not key=value", []string{"call", "alpha", "echo", "hello"}, ExitFailure, []string{`argument "hello" is not key=value`}},
		{"key:= not JSON", []string{"call", "alpha", "echo", "message:=hi"}, ExitFailure, []string{"message:= needs a JSON value", `hint: for the string "hi", write message=hi (typed by the tool's schema) or 'message:="hi"'`}},
		{"dead server", []string{"call", "dead", "echo"}, ExitFailure, []string{"fatal: missing API key GIZMO_TOKEN"}},
		{"missing tool", []string{"call", "alpha"}, ExitUsage, []string{"missing TOOL"}},
		{"bad timeout", []string{"call", "alpha", "echo", "--timeout", "10m"}, ExitUsage, []string{"--timeout 10m is out of range; give 1s to 5m"}},
		{"unknown flag", []string{"call", "--nope"}, ExitUsage, []string{"unknown flag --nope; run 'switchboard help call' for its flags"}},
		{"timeout", []string{"call", "alpha", "slow", "seconds=30", "--timeout", "1s"}, ExitFailure, []string{"alpha/slow did not answer within 1s (the call's --timeout); the call was cancelled upstream"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, append(tt.args, "--config", cfg)...)
			wantCode(t, r, tt.code)
			wantContains(t, "stderr", r.stderr, tt.wantStderr...)
		})
	}

	t.Run("servers reports the dead one", func(t *testing.T) {
		t.Parallel()
		r := runCLI(t, "servers", "--config", cfg)
		wantCode(t, r, ExitFailure)
		wantContains(t, "servers", r.stdout, "dead", "error", "fatal: missing API key")
	})
}

func TestCallImageSavedToFile(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	dir := t.TempDir()
	r := runCLI(t, "call", "--config", cfg, "alpha", "image", "--out-dir", dir)
	wantCode(t, r, ExitOK)
	m := regexp.MustCompile(`saved to (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("call image: got %q, want a saved path", r.stdout)
	}
	data, err := os.ReadFile(m[1])
	if err != nil || !bytes.Equal(data, testserver.PNG) {
		t.Errorf("saved image: got %d bytes (%v), want the PNG exactly", len(data), err)
	}
	if filepath.Dir(m[1]) != dir || filepath.Ext(m[1]) != ".png" {
		t.Errorf("saved path %s: want a .png in %s", m[1], dir)
	}
}

func TestInterruptCancelsUpstream(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel) // Ctrl-C while the call runs
	start := time.Now()
	r := runCLICtx(t, ctx, "call", "--config", cfg, "alpha", "slow", "seconds=60")
	wantCode(t, r, ExitInterrupted)
	wantInterruptedCall(t, r, "alpha/slow")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("interrupt took %s to take effect", d)
	}
}

// wantInterruptedCall checks what a call interrupted by Ctrl-C prints,
// in-process or through the daemon: that it was interrupted and the call
// cancelled, and not the context's "context canceled".
func wantInterruptedCall(t *testing.T, r result, call string) {
	t.Helper()
	want := "switchboard call: interrupted: call to " + call + " was cancelled\n"
	if r.stderr != want {
		t.Errorf("stderr of the interrupted call: got %q, want %q", r.stderr, want)
	}
}

// TestInterruptWhileOpeningTheStore is a Ctrl-C that lands before the call:
// while the history store (or the built-in task store) is opened and its
// schema migrated. It is an interruption, not a store problem: exit 130,
// "interrupted", and no hint to check history.store.
func TestInterruptWhileOpeningTheStore(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir()) // a new database, to be migrated
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C before the store is open
	for _, args := range [][]string{
		{"call", "--config", cfg, "alpha", "echo", "message=x"},
		{"call", "--config", cfg, "alpha", "echo", "message=x", "--json"},
	} {
		r := runCLICtx(t, ctx, args...)
		wantCode(t, r, ExitInterrupted)
		wantContains(t, "stderr", r.stderr, "switchboard call: interrupted while opening the history store")
		for _, bad := range []string{"context canceled", "hint:", "history.store", "migrat"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("%v: stderr says %q, want only that it was interrupted:\n%s", args, bad, r.stderr)
			}
		}
	}
}

func TestPromptsResourcesRead(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "prompts", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "prompts", r.stdout, "greet", "name*")

	r = runCLI(t, "prompt", "--config", cfg, "alpha", "greet", "name=Ada")
	wantCode(t, r, ExitOK)
	wantContains(t, "prompt", r.stdout, "[user]", "Hello, Ada")

	r = runCLI(t, "prompt", "--config", cfg, "alpha", "greet")
	wantCode(t, r, ExitFailure)
	wantContains(t, "prompt stderr", r.stderr, "prompt greet needs argument name")

	r = runCLI(t, "resources", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "resources", r.stdout, "test://readme", "text/plain")

	r = runCLI(t, "read", "--config", cfg, "alpha", "test://readme")
	wantCode(t, r, ExitOK)
	if r.stdout != "read me\n" {
		t.Errorf("read: got %q, want %q", r.stdout, "read me\n")
	}
}

func TestEnableDisablePersist(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "servers", "disable", "alpha", "--config", cfg)
	wantCode(t, r, ExitOK)

	r = runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "disabled", "disabled by a user")

	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "server alpha is disabled", "switchboard servers enable alpha")

	r = runCLI(t, "servers", "enable", "alpha", "--config", cfg)
	wantCode(t, r, ExitOK)
	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=back")
	wantCode(t, r, ExitOK)

	r = runCLI(t, "servers", "refresh", "alpha", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "refresh", r.stdout, "alpha:", "tools", "1 prompts", "1 resources")
}

func TestAdHocStdio(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	exe := testserver.Command(t)
	// Ad hoc commands take no SERVER argument and are not held to the allowlist.
	r := runCLI(t, "call", "--stdio", fmt.Sprintf("env %s=ok %q", testserver.EnvMode, exe), "echo", "message=adhoc")
	wantCode(t, r, ExitOK)
	if r.stdout != "adhoc\n" {
		t.Errorf("ad hoc call: got %q, want %q", r.stdout, "adhoc\n")
	}
}

func TestWebSocketURL(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	srv := mcp.NewServer(&mcp.Implementation{Name: "ws", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "shout"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Word string `json:"word"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(a.Word)}}}, nil, nil
	})
	ts := httptest.NewServer(upstream.NewWebSocketHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	url := "ws" + strings.TrimPrefix(ts.URL, "http")

	r := runCLI(t, "tools", "--url", url)
	wantCode(t, r, ExitOK)
	wantContains(t, "tools", r.stdout, "shout")
	r = runCLI(t, "call", "--url", url, "shout", "word=hey")
	wantCode(t, r, ExitOK)
	if r.stdout != "HEY\n" {
		t.Errorf("websocket call: got %q, want %q", r.stdout, "HEY\n")
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	r := runCLI(t)
	wantCode(t, r, ExitUsage)
	wantContains(t, "usage", r.stdout, "Usage:", "switchboard [command]", "call", "servers")
	r = runCLI(t, "frobnicate")
	wantCode(t, r, ExitUsage)
	wantContains(t, "stderr", r.stderr, `unknown command "frobnicate"`)
	r = runCLI(t, "version")
	wantCode(t, r, ExitOK)
}

func TestConfigCommands(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("servers:\n  - name: gh\n    transport: http\n    urll: https://x\n"), 0o600)
	r := runCLI(t, "config", "validate", bad)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, bad+":4:5", "urll")

	claude := filepath.Join(dir, "claude.json")
	os.WriteFile(claude, []byte(`{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"API_TOKEN": "${MY_TOKEN}"}}}}`), 0o600)
	setenv(t, "MY_TOKEN", "s3cr3t-value")
	r = runCLI(t, "config", "validate", claude)
	wantCode(t, r, ExitOK)
	r = runCLI(t, "config", "show", "--config", claude)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stdout, "s3cr3t-value") {
		t.Errorf("config show leaks a secret:\n%s", r.stdout)
	}
	wantContains(t, "config show", r.stdout, "everything", "[REDACTED]")

	out := filepath.Join(dir, "switchboard.yaml")
	r = runCLI(t, "config", "import", claude, "-o", out)
	wantCode(t, r, ExitOK)
	data, _ := os.ReadFile(out)
	wantContains(t, "imported file", string(data), "${MY_TOKEN}", "everything")
	r = runCLI(t, "config", "import", claude, "-o", out)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "pass --force")
	r = runCLI(t, "config", "validate", out)
	wantCode(t, r, ExitOK)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServe(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok", "dead": "exit"})
	data, _ := os.ReadFile(cfg)
	fast := strings.Replace(string(data), "defaults:\n", "defaults:\n  health: {ping_interval: 100ms, backoff: [10ms, 20ms, 30ms], max_failures: 3}\n", 1)
	if err := os.WriteFile(cfg, []byte(fast), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--config", cfg, "--listen", "127.0.0.1:0") }()

	deadline := time.Now().Add(30 * time.Second)
	want := []string{"alpha: connected", "dead: auto-disabled"}
	toolCount := regexp.MustCompile(`alpha: [0-9]+ tools`)
	for {
		s := out.String()
		ok := toolCount.MatchString(s)
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve output after 30s lacks %q:\n%s\nstderr:\n%s", want, s, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel() // Ctrl-C
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve exit code: got %d, want 0\n%s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop after the interrupt")
	}
	wantContains(t, "serve output", out.String(), "supervising 2 server(s)", "fatal: missing API key", "stopped; every server was closed",
		// The snippet for clients that launch commands serves this file,
		// by its absolute path, with this binary.
		`"args":["serve","--stdio","--config","`+cfg+`"`, "switchboard client connect CLIENT")
}

// withoutConfigFile gives t a state directory, a home, a user
// configuration folder and a working directory of its own, none with a
// switchboard.yaml: commands use the embedded default.
func withoutConfigFile(t *testing.T) {
	t.Helper()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	setenv(t, "XDG_CONFIG_HOME", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	chdir(t, t.TempDir())
}

// TestServeWithoutConfig: with no switchboard.yaml in the working
// directory nor in the user's configuration folder, commands and serve
// use the embedded default.
func TestServeWithoutConfig(t *testing.T) {
	t.Parallel()
	withoutConfigFile(t)
	// The embedded default: the built-in task server, out of the box.
	r := runCLI(t, "servers")
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "tasks", "builtin", "connected")
	r = runCLI(t, "call", "tasks", "create_task", "title=Water the plants")
	wantCode(t, r, ExitOK)
	r = runCLI(t, "call", "tasks", "list_tasks")
	wantCode(t, r, ExitOK)
	wantContains(t, "list_tasks", r.stdout, "Water the plants", config.OSUser())

	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() { done <- mainIn(t, ctx, &out, &errb, "serve", "--listen", "127.0.0.1:0") }()
	eventuallyCLI(t, 20*time.Second, "serve to connect and discover the built-in server", func() bool {
		o := out.String()
		return strings.Contains(o, "tasks: connected") && strings.Contains(o, "tasks: 5 tools")
	})
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("serve exit code %d: %s", code, errb.String())
	}
	wantContains(t, "serve", out.String(), "the embedded default", "the built-in task server", "tasks: 5 tools")
}

func TestHistory(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	secret := "ghp_" + strings.Repeat("Z", 36)
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message="+secret), ExitOK)
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "fail"), ExitFailure)
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "ehco"), ExitFailure)

	r := runCLI(t, "history", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "history", r.stdout, "STATUS", "echo", "success", "fail", "error", "the gizmo is broken", "not_found")

	r = runCLI(t, "history", "--config", cfg, "--status", "error", "--tool", "fail", "--json")
	wantCode(t, r, ExitOK)
	var calls []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 1 {
		t.Fatalf("history --json filtered: got %s (%v), want one call", r.stdout, err)
	}
	id := calls[0]["id"].(string)
	// history show <TAB> offers the latest calls' short ids.
	if got, dir := complete(t, "history", "show", "--config", cfg, ""); !contains(got, id[:8]) || len(got) != 3 || dir != ":36" { // NoFileComp | KeepOrder
		t.Errorf("history show ID: got %v %s, want the three calls' short ids, %s among them, with :36", got, dir, id[:8])
	}
	r = runCLI(t, "history", "show", id[:8], "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "history show", r.stdout, id, "fail", "tool_error")

	// Secrets never reach the history: only the shape of the arguments.
	r = runCLI(t, "history", "--config", cfg, "--tool", "echo", "--json")
	if strings.Contains(r.stdout, secret) || !strings.Contains(r.stdout, `\"message\":\"string\"`) && !strings.Contains(r.stdout, `"message": "string"`) {
		t.Errorf("history of echo: %s; want the argument shape, never the value", r.stdout)
	}
	r = runCLI(t, "history", "--config", cfg, "--status", "bogus")
	wantCode(t, r, ExitUsage)
}

// slowCallInFlight runs `switchboard call alpha slow` (a minute long) in
// the background and returns once the call runs upstream (it marks its
// start in a file); its result comes on the channel.
func slowCallInFlight(t *testing.T, cfg string) <-chan result {
	t.Helper()
	mark := filepath.Join(t.TempDir(), "started")
	done := make(chan result, 1)
	go func() { done <- runCLI(t, "call", "--config", cfg, "alpha", "slow", "seconds=60", "mark="+mark) }()
	eventuallyCLI(t, 30*time.Second, "the slow call to start upstream", func() bool {
		_, err := os.Stat(mark)
		return err == nil
	})
	return done
}

func TestStopAndResume(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	// A call in flight in another "process" (here: another Main) is
	// cancelled by stop.
	// stop comes once the call is in flight upstream, so that the failure
	// below is the cancellation of a running call, not the refusal of one
	// that had not started (same words).
	done := slowCallInFlight(t, cfg)
	wantCode(t, runCLI(t, "stop", "--config", cfg), ExitOK)
	select {
	case r := <-done:
		wantCode(t, r, ExitFailure)
		wantContains(t, "stderr", r.stderr, "calls are stopped", "switchboard resume")
	case <-time.After(15 * time.Second):
		t.Fatal("stop did not cancel the call in flight")
	}
	r := runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "calls are stopped")
	wantCode(t, runCLI(t, "resume", "--config", cfg), ExitOK)
	wantCode(t, runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x"), ExitOK)
}

func TestCallBudgetAndTruncation(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "call", "--config", cfg, "alpha", "stream", "steps=100", "step_ms=50", "--max-duration", "500ms")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "Partial result")
	wantContains(t, "stderr", r.stderr, "note: partial result (budget exceeded)", "of 100 steps were not completed")

	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "defaults:\n", "limits:\n  max_output: 2KiB\ndefaults:\n", 1)), 0o600)
	r = runCLI(t, "call", "--config", cfg, "alpha", "big", "bytes=10000")
	wantCode(t, r, ExitOK)
	wantContains(t, "stdout", r.stdout, "[truncated by switchboard: 7952 bytes omitted]")
	wantContains(t, "stderr", r.stderr, "note: the result was 10000 bytes and was truncated")
}

// TestBuiltinTasksEndToEnd runs the reference task API and the task MCP
// server (as a stdio child, "switchboard builtin tasks"), and calls its
// tools through the CLI and the engine: the caller's identity reaches the
// backend as the task owner.
func TestBuiltinTasksEndToEnd(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	const token = "test-service-token-0123456789"
	setenv(t, EnvTasksToken, token)
	addr := startTaskAPI(t)
	eventuallyCLI(t, 10*time.Second, "the task API to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	exe, _ := os.Executable()
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	yaml := fmt.Sprintf(`security:
  allowed_commands: [%q]
servers:
  - name: tasks
    command: %q
    args: [builtin, tasks, --env-file, ""]
    env:
      %s: "1"
      SERVICE_AUTH_TOKEN: %s
      FASTAPI_BASE_URL: http://%s
`, exe, exe, envRunMain, token, addr)
	os.WriteFile(cfg, []byte(yaml), 0o600)

	r := runCLI(t, "call", "--config", cfg, "tasks", "create_task", "title=Buy milk", "priority=High")
	wantCode(t, r, ExitOK)
	wantContains(t, "create_task", r.stdout, "Buy milk", "High")
	r = runCLI(t, "call", "--config", cfg, "tasks", "list_tasks", "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "list_tasks", r.stdout, "Buy milk", config.OSUser())
	r = runCLI(t, "call", "--config", cfg, "tasks", "create_task", "title=")
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "title")
}

func eventuallyCLI(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
