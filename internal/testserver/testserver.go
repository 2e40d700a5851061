// Package testserver turns a test binary into an MCP server over stdio, so
// that tests can run real subprocess servers — well-behaved ones and ones
// that fail on demand — without building anything (the go-sdk's own
// cmd_test.go does the same).
//
// A test package calls [Init] at the top of TestMain; when the binary is
// started with SWITCHBOARD_TEST_SERVER=<mode> it becomes that server and
// never returns. [Server] returns the config.Server that launches a mode.
//
// Modes:
//   - "ok": tools echo, whoami (returns the request's _meta), add, slow (honours cancellation), progress (sends
//     progress notifications), crash (exits mid-call), big (a large text),
//     image (a PNG), fail (a tool error), broken (a schema that does not
//     compile), hold and maxseen (concurrency), stream (slow progress with a
//     cost in _meta), crash-once and crash-once-unsafe (exit mid-call while a
//     flag file exists); a prompt and a resource. 300 ms after start it adds the
//     tool "late" and announces it with tools/list_changed.
//   - "exit": writes a message to stderr and exits 3 before answering.
//   - "exit-silent": exits 3 before answering, writing nothing.
//   - "npm-404": writes what npx prints for a package the registry does not
//     have ([NPMNotFound]) and exits 1, as npx does.
//   - "garbage": writes non-JSON to stdout instead of answering.
//   - "hang": reads requests and never answers.
//   - "slow-start": sleeps SWITCHBOARD_TEST_DELAY (a Go duration) first.
//   - "die-on-flag": serves until the file SWITCHBOARD_TEST_FLAG appears,
//     then removes it and exits 2 with a panic message on stderr: one
//     process dies per flag, whenever the test chooses, however slowly the
//     machine starts processes.
//   - "freeze": serves, then stops itself (SIGSTOP) when the third ping
//     arrives: two pings are answered, the rest go unanswered while its
//     pipes stay open.
//   - "flaky": exits at start when the file SWITCHBOARD_TEST_FLAG exists,
//     otherwise serves as "ok" (lets a test break and heal a server).
//   - "stateful": keeps state per session (one process is one session
//     over stdio): tools count (a counter: "count=N pid=P"), roots (the
//     roots its client gave when asked at initialize, and again after
//     each notifications/roots/list_changed) and background (logs
//     "background" at info 50 ms after it returns, outside any call), caps
//     (the capabilities its client declared, as JSON), grow (adds a
//     tool grown, so that its client is told tools/list_changed) and
//     touch (tells the session, if it subscribed, that its resource
//     state://count was updated); it speaks protocol 2025-11-25 at most.
//   - "urlelicit": a tool connect that answers error -32042 (URL
//     elicitation required) until the URL it names, a 127.0.0.1 HTTP
//     handler of the server's, is fetched, which sends
//     notifications/elicitation/complete (urlelicit.go).
package testserver

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// Environment variables that select and tune a mode.
const (
	EnvMode  = "SWITCHBOARD_TEST_SERVER"
	EnvDelay = "SWITCHBOARD_TEST_DELAY"
	EnvFlag  = "SWITCHBOARD_TEST_FLAG"
)

// RaceEnv is the race detector's setting for test children: without it every
// race-built child sleeps a second at exit (GORACE's atexit_sleep_ms), which
// made most of the suite's time. The product filters a stdio child's
// environment, so tests pass it in the server's env, as [Server] and
// [EnvYAML] do; [Init] sets it for children that inherit the environment.
const RaceEnv = "atexit_sleep_ms=0"

// EnvYAML returns a YAML flow mapping for a server's env key that makes the
// test binary run as the given mode, e.g. `{SWITCHBOARD_TEST_SERVER: ok, GORACE: "atexit_sleep_ms=0"}`,
// with extra variables given as "KEY=value".
func EnvYAML(mode string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{%s: %s, GORACE: %q", EnvMode, mode, RaceEnv)
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, ", %s: %q", k, v)
	}
	b.WriteString("}")
	return b.String()
}

// Init runs the server when the binary was started as one; otherwise it
// returns at once. Call it first in TestMain.
func Init() {
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", RaceEnv)
	}
	mode := os.Getenv(EnvMode)
	if mode == "" {
		return
	}
	run(mode)
	os.Exit(0)
}

// Server returns a stdio server named name that runs this test binary in
// the given mode. Timeouts are short; callers adjust fields as they need.
func Server(t testing.TB, name, mode string, env ...string) config.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	e := map[string]string{EnvMode: mode, "GORACE": RaceEnv}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return config.Server{
		Name:             name,
		Transport:        config.TransportStdio,
		Command:          exe,
		Env:              e,
		ConnectTimeout:   10 * time.Second,
		RequestTimeout:   10 * time.Second,
		TerminateOnClose: true,
		Enabled:          true,
		LoadTools:        true,
		LoadPrompts:      true,
		LoadResources:    true,
	}
}

// NPMNotFound is what npm 10 (npx) writes to stderr for a package the
// registry does not have; its informative line is the second.
const NPMNotFound = "npm error code E404\n" +
	"npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-nonexistent - Not found\n" +
	"npm error 404\n" +
	"npm error 404  '@modelcontextprotocol/server-nonexistent@*' is not in this registry.\n" +
	"npm error 404\n" +
	"npm error 404 Note that you can also install from a\n" +
	"npm error 404 tarball, folder, http url, or git url.\n" +
	"npm error A complete log of this run can be found in: /home/me/.npm/_logs/2025-01-01T00_00_00_000Z-debug-0.log\n"

// lateToolDelay is when the "ok" server adds its "late" tool.
const lateToolDelay = 300 * time.Millisecond

// PNG is the 1×1 image the "image" tool returns.
var PNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

func run(mode string) {
	delay, _ := time.ParseDuration(os.Getenv(EnvDelay))
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: missing API key GIZMO_TOKEN")
		os.Exit(3)
	case "exit-silent":
		os.Exit(3)
	case "npm-404":
		fmt.Fprint(os.Stderr, NPMNotFound)
		os.Exit(1)
	case "leak-secret":
		// A server that prints its credential when it fails.
		fmt.Fprintln(os.Stderr, "login failed: token is "+os.Getenv("GIZMO_TOKEN"))
		os.Exit(3)
	case "garbage":
		r := bufio.NewReader(os.Stdin)
		_, _ = r.ReadString('\n')
		fmt.Fprintln(os.Stdout, "this is not JSON-RPC at all")
		fmt.Fprintln(os.Stderr, "oops: printed a banner to stdout")
		_, _ = r.ReadString('\n') // wait to be closed
		return
	case "hang":
		r := bufio.NewReader(os.Stdin)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	case "slow-start":
		time.Sleep(delay)
	case "die-on-flag":
		go dieOnFlag(os.Getenv(EnvFlag))
	case "freeze":
		freezeAtPing = 3
	case "flaky":
		if _, err := os.Stat(os.Getenv(EnvFlag)); err == nil {
			fmt.Fprintln(os.Stderr, "flaky: refusing to start")
			os.Exit(4)
		}
	case "asks":
		serveAsks()
		return
	case "stateful":
		serveStateful()
		return
	case "urlelicit":
		serveURLElicit()
		return
	case "ok":
	default:
		log.Fatalf("unknown test server mode %q", mode)
	}
	serve()
}

type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type slowArgs struct {
	Seconds float64 `json:"seconds"`
	// Mark, when set, is a file created when the call starts, so that a
	// test can wait until the call is really in flight.
	Mark string `json:"mark,omitempty"`
}

type progressArgs struct {
	Steps int `json:"steps"`
}

type sizeArgs struct {
	Bytes int `json:"bytes"`
}

type holdArgs struct {
	MS int `json:"ms"`
}

type streamArgs struct {
	Steps   int     `json:"steps"`
	StepMS  int     `json:"step_ms"`
	CostPer float64 `json:"cost_per,omitempty"`
}

type flagArgs struct {
	Flag string `json:"flag"`
}

// Concurrency seen by the "hold" tool, reported by "maxseen".
var holding, maxHeld atomic.Int64

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// dieOnFlag exits the process, as a crash would, once it has removed the
// file flag (so that the next process started serves).
func dieOnFlag(flag string) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if os.Remove(flag) == nil {
			fmt.Fprintln(os.Stderr, "panic: simulated crash")
			os.Exit(2)
		}
	}
}

// freezeAtPing, when positive, is the ping at whose arrival the server
// stops itself ("freeze" mode).
var freezeAtPing int

func serve() {
	s := okServer()
	if freezeAtPing > 0 {
		var pings atomic.Int32
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" && int(pings.Add(1)) >= freezeAtPing {
					_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
				}
				return next(ctx, method, req)
			}
		})
	}
	// Announce a tool shortly after start, as server-everything does after
	// initialize. (Go peers negotiate protocol 2026-07-28, which has no
	// initialized notification to hang this on.)
	time.AfterFunc(lateToolDelay, func() { addLate(s) })
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

// okServer is the "ok" mode's server but its late tool (see addLate).
func okServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the message back.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Message), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Returns the request's _meta as JSON (the caller's identity)."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return text(string(b)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(a.A + a.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits, honouring cancellation."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			if a.Mark != "" {
				if err := os.WriteFile(a.Mark, nil, 0o600); err != nil {
					return nil, nil, err
				}
			}
			select {
			case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
				return text("done"), nil, nil
			case <-ctx.Done():
				fmt.Fprintln(os.Stderr, "slow: cancelled")
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= a.Steps; i++ {
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(a.Steps), Message: fmt.Sprintf("step %d", i)})
				}
			}
			return text(fmt.Sprintf("%d steps", a.Steps)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits mid-call."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: crashing on purpose")
			os.Exit(2)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a large text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a PNG."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: PNG, MIMEType: "image/png"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always reports a tool error."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the gizmo is broken"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hold", Description: "Holds a slot for ms milliseconds, counting concurrency."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a holdArgs) (*mcp.CallToolResult, any, error) {
			n := holding.Add(1)
			defer holding.Add(-1)
			for {
				m := maxHeld.Load()
				if n <= m || maxHeld.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
			case <-ctx.Done():
			}
			return text("held"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "maxseen", Description: "Reports the most concurrent hold calls seen."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(maxHeld.Load())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stream", Description: "Reports progress (with a cumulative cost in _meta) every step_ms."},
		func(ctx context.Context, req *mcp.CallToolRequest, a streamArgs) (*mcp.CallToolResult, any, error) {
			for i := 1; i <= a.Steps; i++ {
				select {
				case <-time.After(time.Duration(a.StepMS) * time.Millisecond):
				case <-ctx.Done():
					fmt.Fprintf(os.Stderr, "stream: cancelled at step %d\n", i)
					return nil, nil, ctx.Err()
				}
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						Meta:          mcp.Meta{"cost": a.CostPer * float64(i)},
						ProgressToken: tok, Progress: float64(i), Total: float64(a.Steps), Message: fmt.Sprintf("step %d of %d", i, a.Steps)})
				}
			}
			return text(fmt.Sprintf("streamed %d steps", a.Steps)), nil, nil
		})
	crashOnce := func(_ context.Context, _ *mcp.CallToolRequest, a flagArgs) (*mcp.CallToolResult, any, error) {
		if err := os.Remove(a.Flag); err == nil {
			fmt.Fprintln(os.Stderr, "panic: crashing once")
			os.Exit(2)
		}
		return text("survived"), nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "crash-once", Description: "Exits mid-call if the flag file exists (removing it); idempotent.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, crashOnce)
	mcp.AddTool(s, &mcp.Tool{Name: "crash-once-unsafe", Description: "Like crash-once, but not idempotent."}, crashOnce)
	s.AddTool(&mcp.Tool{Name: "broken", Description: "Has a schema that does not compile.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "no-such-type"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("broken ran"), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	return s
}

// addLate adds the "ok" server's tool "late", which its clients are told
// of with tools/list_changed.
func addLate(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Appears after start."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("late tool ran"), nil, nil
		})
}
