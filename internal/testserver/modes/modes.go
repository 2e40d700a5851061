// Package modes holds the MCP servers of package testserver's modes, apart from
// the test helpers, so that a small program (testserver/cmd/testserver)
// can run them without linking the configuration package and its schema
// compiler: a race-built child's start costs CPU in proportion to what
// it links and initialises.
//
// [Run] serves the mode named by the SWITCHBOARD_TEST_SERVER environment
// variable ([EnvMode]) on stdio.
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
//   - "requestasks": a prompt, a resource and a completion that each,
//     while they work, log, report progress and ask their client for
//     roots, sampling and a form, and answer with what they got
//     (requestasks.go); its resource ask://cancelled says how many
//     notifications/cancelled it received; it speaks protocol 2025-11-25
//     at most.
//   - "urlelicit": a tool connect that answers error -32042 (URL
//     elicitation required) until the URL it names, a 127.0.0.1 HTTP
//     handler of the server's, is fetched, which sends
//     notifications/elicitation/complete (urlelicit.go).
//   - "huge": one tool, big {bytes}, whose text of that many "x" it writes
//     as it goes, without the SDK (huge.go): a message far past a client's
//     limit for a fraction of the CPU.
//   - "stderr-flood": writes numbered lines to stderr as fast as it can,
//     as SWITCHBOARD_TEST_FLOOD asks (how many bytes, how long a line, one
//     write per line or 64 KiB writes, a long line last), then a panic
//     line, and exits 2 without answering (flood.go).
package modes

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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables that select and tune a mode.
const (
	EnvMode  = "SWITCHBOARD_TEST_SERVER"
	EnvDelay = "SWITCHBOARD_TEST_DELAY"
	EnvFlag  = "SWITCHBOARD_TEST_FLAG"
	// EnvProtocol, for the "asks" mode, names the one protocol version
	// it speaks (NewAsks).
	EnvProtocol = "SWITCHBOARD_TEST_PROTOCOL"
	// EnvFlood tunes the "stderr-flood" mode: "bytes=N,line=N,write=line|chunk,long=N".
	EnvFlood = "SWITCHBOARD_TEST_FLOOD"
)

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

// LateToolDelay is when the "ok" server adds its "late" tool.
const LateToolDelay = 300 * time.Millisecond

// PNG is the 1×1 image the "image" tool returns.
var PNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

// Run serves mode on stdio until its client closes it (some modes exit the
// process instead, as their descriptions in the package comment say). An
// unknown mode ends the process with a message naming it.
func Run(mode string) {
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
	case "requestasks":
		serveRequestAsks()
		return
	case "urlelicit":
		serveURLElicit()
		return
	case "huge":
		serveHuge()
		return
	case "stderr-flood":
		floodStderr()
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
	// Logs, when set, has every step also send a log message (at the
	// client's level, info).
	Logs bool `json:"logs,omitempty"`
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
	s := OK()
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
	time.AfterFunc(LateToolDelay, func() { AddLate(s) })
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

// OK returns the "ok" mode's server without its late tool (see [AddLate]).
func OK() *mcp.Server {
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
				if a.Logs {
					//lint:ignore SA1019 logging is deprecated only from protocol 2026-07-28; servers log today.
					_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "progress", Data: fmt.Sprintf("log %d", i)})
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

// AddLate adds the "ok" server's tool "late", which its clients are told
// of with tools/list_changed.
func AddLate(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "late", Description: "Appears after start."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("late tool ran"), nil, nil
		})
}
