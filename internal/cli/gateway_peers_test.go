package cli

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// gatewayConfig writes a configuration with two upstreams — the npm
// server-everything (written with the TypeScript SDK) and a Go test
// server — and returns its path.
func gatewayConfig(t *testing.T, listen string) string {
	t.Helper()
	exe := testserver.Command(t)
	node, args := testpeer.EverythingCommand(t)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	cfg := fmt.Sprintf(`security:
  allowed_commands: [%q, %q]
gateway:
  listen: %s
servers:
  - name: everything
    command: %q
    args: [%s]
  - name: alpha
    command: %q
    env: %s
`, exe, node, listen, node, strings.Join(quoted, ", "), exe, testserver.EnvYAML("ok"))
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveProcess runs `switchboard serve` as a child process (the test
// binary acting as switchboard) until the test ends, and returns the
// gateway's base URL once it answers /readyz.
func serveProcess(t *testing.T, cfgPath string) string {
	t.Helper()
	base, _ := serveProcessCmd(t, cfgPath)
	return base
}

// serveProcessCmd is serveProcess, also returning the process.
func serveProcessCmd(t *testing.T, cfgPath string) (string, *exec.Cmd) {
	t.Helper()
	exe, _ := os.Executable()
	state, err := os.MkdirTemp("", "sbg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	cmd := exec.Command(exe, "serve", "--config", cfgPath, "--log-level", "error")
	cmd.Env = append(environOf(t), envRunMain+"=1", "SWITCHBOARD_STATE_DIR="+state)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	gateway := make(chan string, 1) // the base URL serve says it serves at
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := reGatewayBase.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case gateway <- m[1]:
				default:
				}
			}
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v after SIGTERM, want 0", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("serve did not stop within 30s of SIGTERM")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	seen := func() string {
		var seen []string
		for len(lines) > 0 {
			seen = append(seen, <-lines)
		}
		return strings.Join(seen, "\n")
	}
	var base string
	select {
	case base = <-gateway:
	case <-time.After(time.Until(deadline)):
		t.Fatalf("serve never said where it serves the gateway; its output:\n%s", seen())
	}
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never became ready; its output:\n%s", seen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// reTaskAPIAddr is the task API's line saying where it listens.
var reTaskAPIAddr = regexp.MustCompile(`task API listening on http://(\S+)`)

// startTaskAPI runs `switchboard builtin task-api` on a free port, with a
// database of its own, in t's environment (which sets the service token)
// until t ends, and returns its address.
func startTaskAPI(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	exited := make(chan struct{})
	var code int
	go func() {
		defer close(exited)
		code = mainIn(t, ctx, &out, &errb, "builtin", "task-api", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "tasks.db"))
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		if code != ExitOK {
			t.Errorf("task-api exit %d: %s", code, errb.String())
		}
	})
	var addr string
	eventuallyCLI(t, 10*time.Second, "the task API to listen", func() bool {
		if m := reTaskAPIAddr.FindStringSubmatch(errb.String()); m != nil {
			addr = m[1]
			return true
		}
		select {
		case <-exited:
			t.Fatalf("task-api exited before it listened: %s", errb.String())
		default:
		}
		return false
	})
	return addr
}

// reGatewayBase is serve's line saying where the gateway is.
var reGatewayBase = regexp.MustCompile(`gateway: (http://\S+)/mcp `)

// tsSteps is what the TypeScript client does through the gateway: list
// and call tools of both upstreams, get progress, cancel a call.
func tsSteps() []testpeer.TSStep {
	return []testpeer.TSStep{
		{"op": "list_tools", "want": []string{"everything__get-sum", "alpha__echo", "everything__trigger-sampling-request"}, "timeout_ms": 30000},
		{"op": "call", "name": "everything__get-sum", "arguments": map[string]any{"a": 2, "b": 3}},
		{"op": "call", "name": "alpha__echo", "arguments": map[string]any{"message": "from typescript"}},
		{"op": "call", "name": "everything__trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 4}, "progress": true},
		{"op": "call_cancel", "name": "alpha__slow", "arguments": map[string]any{"seconds": 30}, "after_ms": 500},
		{"op": "call", "name": "everything__trigger-sampling-request", "arguments": map[string]any{"prompt": "What is the answer?"}},
		{"op": "call", "name": "alpha__echo", "arguments": map[string]any{"message": "still connected"}},
	}
}

// checkTS checks the results of tsSteps.
func checkTS(t *testing.T, res []testpeer.TSResult) {
	t.Helper()
	if len(res) < 8 {
		t.Fatalf("got %d result lines, want 9: %v", len(res), res)
	}
	for i, r := range res[:len(res)-1] {
		if !r.OK() && r.Op() != "call_cancel" {
			t.Fatalf("step %d (%s) failed: %v", i, r.Op(), r.Err())
		}
	}
	if got := res[2].Text(); got != "The sum of 2 and 3 is 5." {
		t.Errorf("everything__get-sum: got %q", got)
	}
	if got := res[3].Text(); got != "from typescript" {
		t.Errorf("alpha__echo: got %q", got)
	}
	var progress []map[string]any
	if err := res[4].Field("progress", &progress); err != nil || len(progress) < 2 {
		t.Errorf("long-running operation: got progress %v (%v), want at least 2 notifications", progress, err)
	}
	var cancelled bool
	if err := res[5].Field("cancelled", &cancelled); err != nil || !cancelled {
		t.Errorf("call_cancel: got %v", res[5])
	}
	if got := res[6].Text(); !strings.Contains(got, "an answer from the TypeScript client") {
		t.Errorf("sampling through the gateway: the tool result %q lacks the client's answer", got)
	}
	if got := res[7].Text(); got != "still connected" {
		t.Errorf("after the cancel: got %q", got)
	}
	var sampling []any
	if err := res[len(res)-1].Field("sampling_requests", &sampling); err != nil || len(sampling) != 1 {
		t.Errorf("summary: got sampling requests %v (%v), want the one the tool caused", sampling, err)
	}
}

// TestTypeScriptClientThroughGatewayHTTP runs TypeScript clients, one
// after another, through one `switchboard serve` over HTTP: tools of both
// upstreams, progress, a cancel and sampling; then elicitation; then the
// rest of what passes through (typeScriptClientGatewayPassthrough). Each
// client is a session of its own, and what each checks is what its own
// session got; the gateway and its upstreams are shared because none of
// the checks is about a fresh process (three serve processes, each with
// its own server-everything, cost ~6 s more CPU). The passthrough runs
// last: it turns on server-everything's simulated logging.
func TestTypeScriptClientThroughGatewayHTTP(t *testing.T) {
	t.Parallel()
	listen := "127.0.0.1:0" // serveProcess reads the port serve took
	base := serveProcess(t, gatewayConfig(t, listen))
	t.Run("tools", func(t *testing.T) { typeScriptClientThroughGatewayHTTP(t, base) })
	t.Run("elicitation", func(t *testing.T) { elicitationThroughGateway(t, base) })
	t.Run("passthrough", func(t *testing.T) { typeScriptClientGatewayPassthrough(t, base) })
}

// typeScriptClientThroughGatewayHTTP runs tsSteps through the gateway at
// base.
func typeScriptClientThroughGatewayHTTP(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target:   testpeer.TSTarget{Transport: "http", URL: base + "/mcp"},
		Sampling: &testpeer.TSSampling{Text: "an answer from the TypeScript client"},
		Steps:    tsSteps(),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkTS(t, res)
}

func TestTypeScriptClientThroughGatewayStdio(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	state, err := os.MkdirTemp("", "sbg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target: testpeer.TSTarget{Transport: "stdio", Command: exe,
			Args: []string{"serve", "--stdio", "--config", gatewayConfig(t, "127.0.0.1:0"), "--log-level", "error"},
			Env:  map[string]string{envRunMain: "1", "SWITCHBOARD_STATE_DIR": state, "PATH": os.Getenv("PATH")}},
		Sampling: &testpeer.TSSampling{Text: "an answer from the TypeScript client"},
		Steps:    tsSteps(),
	})
	if err != nil {
		t.Fatal(err)
	}
	checkTS(t, res)
}

// elicitationThroughGateway answers server-everything's elicitation
// request from a TypeScript client through the gateway at base.
func elicitationThroughGateway(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target:      testpeer.TSTarget{Transport: "http", URL: base + "/mcp"},
		Elicitation: &testpeer.TSElicitation{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"everything__trigger-elicitation-request"}, "timeout_ms": 30000},
			{"op": "call", "name": "everything__trigger-elicitation-request", "arguments": map[string]any{}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 3 || !res[2].OK() {
		t.Fatalf("elicitation call failed: %v", res)
	}
	if got := res[2].Text(); !strings.Contains(got, "Ada Lovelace") {
		t.Errorf("elicitation through the gateway: got %q, want the client's answer in it", got)
	}
}

// typeScriptClientGatewayPassthrough checks the rest of what passes
// through the gateway at base to server-everything: instructions,
// prompts, resource templates, reads, completion, the logging level and
// log messages, resource subscriptions (also to a templated URI) and
// their updates.
func typeScriptClientGatewayPassthrough(t *testing.T, base string) {
	const doc = "demo://resource/static/document/architecture.md"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := testpeer.RunTSClient(t, ctx, testpeer.TSClientInput{
		Target: testpeer.TSTarget{Transport: "http", URL: base + "/mcp"},
		Steps: []testpeer.TSStep{
			{"op": "list_tools", "want": []string{"everything__toggle-simulated-logging", "everything__toggle-subscriber-updates"}, "timeout_ms": 30000},
			{"op": "get_prompt", "name": "everything__args-prompt", "arguments": map[string]any{"city": "Paris"}},
			{"op": "list_resource_templates"},
			{"op": "read_resource", "uri": "demo://resource/dynamic/text/7"},
			{"op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "everything__completable-prompt"}, "argument": map[string]any{"name": "department", "value": "Eng"}},
			{"op": "set_level", "level": "debug"},
			{"op": "subscribe", "uri": doc},
			{"op": "call", "name": "everything__toggle-simulated-logging"},
			{"op": "call", "name": "everything__toggle-subscriber-updates"},
			{"op": "wait_notification", "method": "notifications/message", "timeout_ms": 20000},
			{"op": "wait_notification", "method": "notifications/resources/updated", "timeout_ms": 20000},
			// A URI one of the templates matches can be subscribed to, as
			// it can be read.
			{"op": "subscribe", "uri": "demo://resource/dynamic/text/1"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 13 {
		t.Fatalf("got %d result lines: %v", len(res), res)
	}
	for i, r := range res[1 : len(res)-1] {
		if !r.OK() {
			t.Fatalf("step %d (%s) failed: %v", i, r.Op(), r.Err())
		}
	}
	var instructions string
	if err := res[0].Field("instructions", &instructions); err != nil || !strings.Contains(instructions, "## everything") {
		t.Errorf("instructions: got %q (%v), want server-everything's under its name", instructions, err)
	}
	if got := fmt.Sprint(res[2]); !strings.Contains(got, "Paris") {
		t.Errorf("prompts/get through the gateway: got %v", got)
	}
	var templates struct {
		ResourceTemplates []struct{ URITemplate string } `json:"resourceTemplates"`
	}
	if err := res[3].Decode(&templates); err != nil || len(templates.ResourceTemplates) != 2 {
		t.Errorf("resource templates: got %+v (%v), want server-everything's 2", templates, err)
	}
	var read struct{ Contents []struct{ URI string } }
	if err := res[4].Decode(&read); err != nil || len(read.Contents) != 1 || read.Contents[0].URI != "demo://resource/dynamic/text/7" {
		t.Errorf("reading a templated resource: got %+v (%v)", read, err)
	}
	var completion struct{ Completion struct{ Values []string } }
	if err := res[5].Decode(&completion); err != nil || strings.Join(completion.Completion.Values, ",") != "Engineering" {
		t.Errorf("completion through the gateway: got %+v (%v), want [Engineering]", completion, err)
	}
	var updated struct{ URI string }
	if err := res[11].Field("params", &updated); err != nil || updated.URI != doc {
		t.Errorf("resources/updated: got %+v (%v), want %s", updated, err, doc)
	}
	if !res[12].OK() {
		t.Errorf("subscribing to a URI a template matches: %v", res[12].Err())
	}
}

// TestBuiltinTasksThroughGateway calls the built-in task server through
// the gateway as two users: each token's identity reaches the backend as
// the task owner, so neither sees the other's tasks.
func TestBuiltinTasksThroughGateway(t *testing.T) {
	t.Parallel()
	const token = "test-service-token-0123456789"
	setenv(t, "ALICE_TOKEN", "alice-gateway-token")
	setenv(t, "BOB_TOKEN", "bob-gateway-token")
	setenv(t, EnvTasksToken, token)
	apiAddr := startTaskAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	exe, _ := os.Executable()
	listen := "127.0.0.1:0" // serveProcess reads the port serve took
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	yaml := fmt.Sprintf(`security:
  allowed_commands: [%q]
gateway:
  listen: %s
  tokens:
    - {user: alice, token_env: ALICE_TOKEN}
    - {user: bob, token_env: BOB_TOKEN}
servers:
  - name: tasks
    command: %q
    args: [builtin, tasks, --env-file, ""]
    env:
      %s: "1"
      SERVICE_AUTH_TOKEN: %s
      FASTAPI_BASE_URL: http://%s
`, exe, listen, exe, envRunMain, token, apiAddr)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	base := serveProcess(t, cfg)

	session := func(tok string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		hc := &http.Client{Transport: bearer{tok}}
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	callText := func(cs *mcp.ClientSession, name string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s failed: %s", name, b.String())
		}
		return b.String()
	}
	alice, bob := session("alice-gateway-token"), session("bob-gateway-token")
	if got := callText(alice, "tasks__create_task", map[string]any{"title": "Alice's secret plan"}); !strings.Contains(got, "Alice's secret plan") {
		t.Errorf("create_task as alice: %s", got)
	}
	if got := callText(alice, "tasks__list_tasks", map[string]any{}); !strings.Contains(got, "Alice's secret plan") || !strings.Contains(got, "alice") {
		t.Errorf("list_tasks as alice: got %s, want her task, owned by alice", got)
	}
	if got := callText(bob, "tasks__list_tasks", map[string]any{}); strings.Contains(got, "Alice's secret plan") {
		t.Errorf("list_tasks as bob shows alice's task: %s", got)
	}
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeReloadsOnSIGHUP edits the configuration of a running serve
// and sends it SIGHUP: the new server's tools reach a connected client.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	listen := "127.0.0.1:0" // serveProcess reads the port serve took
	cfgPath := filepath.Join(t.TempDir(), "switchboard.yaml")
	write := func(servers ...string) {
		var b strings.Builder
		fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\ngateway:\n  listen: %s\nservers:\n", exe, listen)
		for _, s := range servers {
			fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    env: %s\n", s, exe, testserver.EnvYAML("ok"))
		}
		if err := os.WriteFile(cfgPath, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("alpha")
	base, cmd := serveProcessCmd(t, cfgPath)
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	write("alpha", "beta")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventuallyCLI(t, 30*time.Second, "beta's tools after SIGHUP", func() bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == "beta__echo" {
				return true
			}
		}
		return false
	})
}
