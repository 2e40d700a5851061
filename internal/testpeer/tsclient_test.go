package testpeer

//lint:file-ignore SA1019 the test decodes sampling requests, deprecated only from protocol 2026-07-28.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What server-everything 2026.8.31 answers, as the TypeScript client sees it.
const (
	everythingName = "mcp-servers/everything"
	getSumText     = "The sum of 2 and 3 is 5."
	// An abort raised by the SDK: McpError RequestTimeout wrapping the AbortError.
	abortCode    = -32001
	abortMessage = "MCP error -32001: AbortError: This operation was aborted"
)

// tsTarget returns a target reaching server-everything over transport
// ("http", "sse" or "stdio"): over HTTP the package's shared one, each client
// on its own session; over stdio a fresh one, which env goes to.
func tsTarget(t *testing.T, transport string, env map[string]string) TSTarget {
	t.Helper()
	switch transport {
	case "http":
		return TSTarget{Transport: "http", URL: sharedEverything(t, "streamableHttp")}
	case "sse":
		return TSTarget{Transport: "sse", URL: sharedEverything(t, "sse")}
	case "stdio":
		bin, args := EverythingCommand(t)
		return TSTarget{Transport: "stdio", Command: bin, Args: args, Env: env}
	}
	t.Fatalf("unknown transport %q", transport)
	return TSTarget{}
}

// runTS runs the client with a minute's deadline and checks that it printed
// the connect line, one line per step with that step's op, and the summary.
func runTS(t *testing.T, in TSClientInput) []TSResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	results, err := RunTSClient(t, ctx, in)
	if err != nil {
		t.Fatalf("RunTSClient: %v", err)
	}
	if got, want := len(results), len(in.Steps)+2; got != want {
		t.Fatalf("got %d result lines, want %d: %v", got, want, results)
	}
	if got := results[0]; got.Op() != "connect" || !got.OK() {
		t.Fatalf("first line: got %v, want a successful connect", got)
	}
	for i, step := range in.Steps {
		if got, want := results[i+1].Op(), step["op"]; got != want {
			t.Errorf("line %d: got op %q, want %q", i+1, got, want)
		}
	}
	if got := results[len(results)-1].Op(); got != "summary" {
		t.Fatalf("last line: got op %q, want summary", got)
	}
	return results
}

// okStep returns the result of step i (counted from 0), failing the test if
// the step failed.
func okStep(t *testing.T, results []TSResult, i int) TSResult {
	t.Helper()
	r := results[i+1]
	if !r.OK() {
		t.Fatalf("step %d (%s): got error %v, want ok", i, r.Op(), r.Err())
	}
	return r
}

func TestTSClientEverything(t *testing.T) {
	for _, transport := range []string{"http", "sse", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("SWITCHBOARD_TSCLIENT_TEST=%s-%d", t.Name(), time.Now().UnixNano())
			name, value, _ := strings.Cut(marker, "=")
			results := runTS(t, TSClientInput{
				Target: tsTarget(t, transport, map[string]string{name: value}),
				Steps: []TSStep{
					{"op": "list_tools", "want": []string{"echo", "get-sum"}},
					{"op": "call", "name": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}},
					{"op": "call", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 1, "steps": 4}, "progress": true},
					{"op": "call_cancel", "name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 20, "steps": 20}, "after_progress": 1},
					{"op": "ping"},
				},
			})

			var info mcp.Implementation
			if err := results[0].Field("serverInfo", &info); err != nil || info.Name != everythingName {
				t.Errorf("connect serverInfo: got %+v (%v), want name %q", info, err, everythingName)
			}

			var tools mcp.ListToolsResult
			if err := okStep(t, results, 0).Decode(&tools); err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) < len(everythingTools) {
				t.Errorf("list_tools: got %d tools, want at least %d", len(tools.Tools), len(everythingTools))
			}

			var sum mcp.CallToolResult
			if err := okStep(t, results, 1).Decode(&sum); err != nil {
				t.Fatal(err)
			}
			if got := results[2].Text(); sum.IsError || got != getSumText {
				t.Errorf("get-sum: got isError=%v text %q, want %q", sum.IsError, got, getSumText)
			}

			long := okStep(t, results, 2)
			var progress []mcp.ProgressNotificationParams
			if err := long.Field("progress", &progress); err != nil {
				t.Fatal(err)
			}
			if len(progress) < 2 {
				t.Errorf("long-running call: got %d progress notifications %v, want at least 2", len(progress), progress)
			}
			if got, want := long.Text(), "Long running operation completed. Duration: 1 seconds, Steps: 4."; got != want {
				t.Errorf("long-running call: got text %q, want %q", got, want)
			}

			cancelled := okStep(t, results, 3)
			if got, _ := cancelled["cancelled"].(bool); !got {
				t.Errorf("call_cancel: got %v, want cancelled: true", cancelled)
			}
			if err := cancelled.Err(); err == nil || err.Code != abortCode || err.Message != abortMessage {
				t.Errorf("call_cancel: got error %v, want code %d message %q", err, abortCode, abortMessage)
			}
			if err := cancelled.Field("progress", &progress); err != nil || len(progress) != 1 {
				t.Errorf("call_cancel: got progress %v (%v), want exactly 1 notification", progress, err)
			}
			okStep(t, results, 4) // the session outlives the cancelled call

			if transport == "stdio" {
				if pids := processesWithEnv(marker); len(pids) > 0 {
					t.Errorf("after RunTSClient: stdio server processes %v still run, want none", pids)
				}
			}
		})
	}
}

// TestTSClientServerRequests checks the client's answers to sampling,
// elicitation and roots requests, made by server-everything's tools.
func TestTSClientServerRequests(t *testing.T) {
	const sampled = "sampled by the TypeScript client"
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			results := runTS(t, TSClientInput{
				Target:      tsTarget(t, transport, nil),
				Sampling:    &TSSampling{Text: sampled},
				Elicitation: &TSElicitation{Action: "accept", Content: map[string]any{"name": "Ada Lovelace", "check": true}},
				Roots:       []TSRoot{{URI: "file:///tmp", Name: "tmp"}},
				Steps: []TSStep{
					// server-everything adds these tools after initialize.
					{"op": "list_tools", "want": []string{"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}},
					{"op": "call", "name": "trigger-sampling-request", "arguments": map[string]any{"prompt": "say hi", "maxTokens": 20}},
					{"op": "call", "name": "trigger-elicitation-request", "arguments": map[string]any{}},
					{"op": "call", "name": "get-roots-list", "arguments": map[string]any{}},
				},
			})
			okStep(t, results, 0)

			sampling := okStep(t, results, 1).Text()
			for _, want := range []string{sampled, "ts-client-model"} {
				if !strings.Contains(sampling, want) {
					t.Errorf("trigger-sampling-request: got text %q, want it to contain %q", sampling, want)
				}
			}
			elicitation := okStep(t, results, 2).Text()
			for _, want := range []string{"User provided the requested information!", "- Name: Ada Lovelace", "- Agreed to terms: true"} {
				if !strings.Contains(elicitation, want) {
					t.Errorf("trigger-elicitation-request: got text %q, want it to contain %q", elicitation, want)
				}
			}
			if roots := okStep(t, results, 3).Text(); !strings.Contains(roots, "1. tmp\n   URI: file:///tmp") {
				t.Errorf("get-roots-list: got text %q, want it to list file:///tmp", roots)
			}

			summary := results[len(results)-1]
			var samplingRequests []mcp.CreateMessageParams
			if err := summary.Field("sampling_requests", &samplingRequests); err != nil {
				t.Fatal(err)
			}
			if len(samplingRequests) != 1 {
				t.Fatalf("summary: got %d sampling requests, want 1", len(samplingRequests))
			}
			if got := samplingRequests[0]; got.MaxTokens != 20 || len(got.Messages) != 1 {
				t.Errorf("sampling request: got maxTokens %d and %d messages, want 20 and 1", got.MaxTokens, len(got.Messages))
			} else if text, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || text.Text != "Resource trigger-sampling-request context: say hi" {
				t.Errorf("sampling request: got message %#v, want the prompt in text", got.Messages[0].Content)
			}
			var elicitationRequests []map[string]any
			if err := summary.Field("elicitation_requests", &elicitationRequests); err != nil {
				t.Fatal(err)
			}
			if len(elicitationRequests) != 1 || elicitationRequests[0]["message"] != "Please provide inputs for the following fields:" {
				t.Errorf("summary: got elicitation requests %v, want the one from trigger-elicitation-request", elicitationRequests)
			}
		})
	}
}

// TestTSClientNotifications checks that the client waits for and counts the
// notifications a server sends outside any request.
func TestTSClientNotifications(t *testing.T) {
	const doc = "demo://resource/static/document/architecture.md"
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			results := runTS(t, TSClientInput{
				Target: tsTarget(t, transport, nil),
				Steps: []TSStep{
					{"op": "set_level", "level": "debug"},
					{"op": "subscribe", "uri": doc},
					// Each sends one notification at once, then one every 5 s.
					{"op": "call", "name": "toggle-simulated-logging"},
					{"op": "call", "name": "toggle-subscriber-updates"},
					{"op": "wait_notification", "method": "notifications/message", "timeout_ms": 20000},
					{"op": "wait_notification", "method": "notifications/resources/updated", "timeout_ms": 20000},
					{"op": "wait_notification", "method": "notifications/never", "timeout_ms": 100},
				},
			})
			for i := range 4 {
				okStep(t, results, i)
			}
			var updated struct{ URI string }
			if err := okStep(t, results, 5).Field("params", &updated); err != nil || updated.URI != doc {
				t.Errorf("resources/updated params: got %+v (%v), want uri %s", updated, err, doc)
			}
			never := results[7]
			if err := never.Err(); never.OK() || err == nil || !strings.Contains(err.Message, "timed out after 100 ms") {
				t.Errorf("waiting for a notification that never comes: got %v, want a timeout error", never)
			}
			var counts map[string]int
			if err := results[len(results)-1].Field("notifications", &counts); err != nil {
				t.Fatal(err)
			}
			for _, method := range []string{"notifications/message", "notifications/resources/updated"} {
				if counts[method] < 1 {
					t.Errorf("summary notifications: got %v, want %s counted", counts, method)
				}
			}
		})
	}
}

// TestTSClientReads covers the remaining request ops and a failing step.
func TestTSClientReads(t *testing.T) {
	t.Parallel()
	results := runTS(t, TSClientInput{
		Target: tsTarget(t, "stdio", nil),
		Steps: []TSStep{
			{"op": "list_prompts"},
			{"op": "get_prompt", "name": "args-prompt", "arguments": map[string]any{"city": "Paris"}},
			{"op": "list_resources"},
			{"op": "list_resource_templates"},
			{"op": "read_resource", "uri": "demo://resource/dynamic/text/7"},
			{"op": "complete", "ref": map[string]any{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]any{"name": "department", "value": "Eng"}},
			{"op": "get_prompt", "name": "no-such-prompt"},
			{"op": "sleep", "ms": 1},
		},
	})

	var prompts mcp.ListPromptsResult
	if err := okStep(t, results, 0).Decode(&prompts); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if want := []string{"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}; !slices.Equal(names, want) {
		t.Errorf("list_prompts: got %v, want %v", names, want)
	}

	var prompt mcp.GetPromptResult
	if err := okStep(t, results, 1).Decode(&prompt); err != nil {
		t.Fatal(err)
	}
	if len(prompt.Messages) == 0 || !strings.Contains(fmt.Sprint(prompt.Messages[0].Content), "Paris") {
		t.Errorf("get_prompt args-prompt: got %+v, want a message about Paris", prompt.Messages)
	}

	var resources mcp.ListResourcesResult
	if err := okStep(t, results, 2).Decode(&resources); err != nil || len(resources.Resources) < 7 {
		t.Errorf("list_resources: got %d resources (%v), want at least 7", len(resources.Resources), err)
	}
	var templates mcp.ListResourceTemplatesResult
	if err := okStep(t, results, 3).Decode(&templates); err != nil || len(templates.ResourceTemplates) != 2 {
		t.Errorf("list_resource_templates: got %d templates (%v), want 2", len(templates.ResourceTemplates), err)
	}
	var read mcp.ReadResourceResult
	if err := okStep(t, results, 4).Decode(&read); err != nil || len(read.Contents) != 1 || read.Contents[0].URI != "demo://resource/dynamic/text/7" {
		t.Errorf("read_resource: got %+v (%v), want the one resource", read.Contents, err)
	}
	var completion mcp.CompleteResult
	if err := okStep(t, results, 5).Decode(&completion); err != nil || !slices.Equal(completion.Completion.Values, []string{"Engineering"}) {
		t.Errorf("complete: got %+v (%v), want [Engineering]", completion.Completion, err)
	}

	failed := results[7]
	if err := failed.Err(); failed.OK() || err == nil || err.Code != -32602 || !strings.Contains(err.Message, "no-such-prompt") {
		t.Errorf("get_prompt of an unknown prompt: got %v, want error -32602 naming it", failed)
	}
	okStep(t, results, 7) // a failed step does not stop the next
}

// TestTSClientFailures checks that broken input and a failed connect are
// errors quoting the client's reason.
func TestTSClientFailures(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   TSClientInput
		want string
	}{
		{"unknown transport", TSClientInput{Target: TSTarget{Transport: "websocket"}}, `unknown transport "websocket"`},
		{"unknown op", TSClientInput{Target: TSTarget{Transport: "http", URL: "http://127.0.0.1:1/mcp"}, Steps: []TSStep{{"op": "fly"}}}, `step 0: unknown op "fly"`},
		{"connect refused", TSClientInput{Target: TSTarget{Transport: "http", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}}, "connecting over http to http://127.0.0.1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			results, err := RunTSClient(t, ctx, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got results %v and error %v, want an error containing %q", results, err, tt.want)
			}
		})
	}
}

// TestTSClientHeaders checks that the target's headers reach the server over
// both HTTP transports, on the first request.
func TestTSClientHeaders(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Method + " " + r.Header.Get("Authorization")
				http.Error(w, "no MCP here", http.StatusForbidden)
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			_, err := RunTSClient(t, ctx, TSClientInput{Target: TSTarget{
				Transport: transport, URL: srv.URL + "/mcp",
				Headers: map[string]string{"Authorization": "Bearer secret-token"},
			}})
			if err == nil || !strings.Contains(err.Error(), "connecting over "+transport) {
				t.Errorf("got error %v, want a failed connect", err)
			}
			want := map[string]string{"http": "POST Bearer secret-token", "sse": "GET Bearer secret-token"}[transport]
			select {
			case first := <-got:
				if first != want {
					t.Errorf("first request: got %q, want %q", first, want)
				}
			default:
				t.Errorf("the server got no request, want %q", want)
			}
		})
	}
}

// TestTSClientDeadline checks that the context's deadline ends the client
// and the stdio server it started.
func TestTSClientDeadline(t *testing.T) {
	t.Parallel()
	const deadline = 10 * time.Second // time enough to connect under load
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	marker := fmt.Sprintf("SWITCHBOARD_TSCLIENT_TEST=deadline-%d", time.Now().UnixNano())
	name, value, _ := strings.Cut(marker, "=")
	start := time.Now()
	results, err := RunTSClient(t, ctx, TSClientInput{
		Target: tsTarget(t, "stdio", map[string]string{name: value}),
		Steps:  []TSStep{{"op": "sleep", "ms": 60000}},
	})
	if err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Errorf("got error %v, want one saying the deadline passed", err)
	}
	if len(results) > 1 {
		t.Errorf("got results %v, want the connect line at most", results)
	}
	if elapsed := time.Since(start); elapsed > deadline+20*time.Second {
		t.Errorf("RunTSClient returned after %v, want soon after the %v deadline", elapsed, deadline)
	}
	if pids := processesWithEnv(marker); len(pids) > 0 {
		t.Errorf("after the deadline: stdio server processes %v still run, want none", pids)
	}
}

// TestGroupMembers checks the /proc look-up RunTSClient relies on to end
// what a client leaves in its process group.
func TestGroupMembers(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if got := groupMembers(pid); !slices.Equal(got, []int{pid}) {
		t.Errorf("groupMembers(%d) of a running group: got %v, want [%d]", pid, got, pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := groupMembers(pid); len(got) != 0 {
		t.Errorf("groupMembers(%d) after the group ended: got %v, want none", pid, got)
	}
}

func TestTSClientMissingPeers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "test", "peers"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	msg := fatalMessage(t, func(tb testing.TB) {
		_, _ = RunTSClient(tb, t.Context(), TSClientInput{Target: TSTarget{Transport: "stdio", Command: "true"}})
	})
	if !strings.Contains(msg, "make peers") {
		t.Errorf("RunTSClient without peers: got Fatalf %q, want one naming `make peers`", msg)
	}
}

func TestParseTSResults(t *testing.T) {
	tests := []struct {
		out     string
		wantOps []string
		wantErr string
	}{
		{"{\"op\":\"connect\",\"ok\":true}\n{\"op\":\"summary\",\"ok\":true}\n", []string{"connect", "summary"}, ""},
		{"{\"op\":\"connect\",\"ok\":true}\n\n", []string{"connect"}, ""},
		{"", nil, "no result lines"},
		{"{\"op\":\"connect\"}\nStarting server...\n", []string{"connect"}, `line 2 "Starting server..."`},
		{"{\"ok\":true}\n", nil, "has no op"},
	}
	for _, tt := range tests {
		results, err := parseTSResults([]byte(tt.out))
		var ops []string
		for _, r := range results {
			ops = append(ops, r.Op())
		}
		if !slices.Equal(ops, tt.wantOps) {
			t.Errorf("parseTSResults(%q): got ops %v, want %v", tt.out, ops, tt.wantOps)
		}
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("parseTSResults(%q): got error %v, want %q", tt.out, err, tt.wantErr)
		}
	}
}

func TestTSResultAccessors(t *testing.T) {
	r := TSResult{
		"op": "call", "ok": false,
		"error":   map[string]any{"code": -32602.0, "message": "bad", "name": "McpError"},
		"content": []any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "image"}, map[string]any{"type": "text", "text": "b"}},
	}
	if got := r.Op(); got != "call" {
		t.Errorf("Op: got %q, want call", got)
	}
	if r.OK() {
		t.Error("OK: got true, want false")
	}
	if got, want := r.Err(), (&TSError{Code: -32602, Message: "bad", Name: "McpError"}); got == nil || *got != *want {
		t.Errorf("Err: got %v, want %v", got, want)
	}
	if got := r.Text(); got != "a\nb" {
		t.Errorf("Text: got %q, want %q", got, "a\nb")
	}
	var n int
	if err := r.Field("missing", &n); err == nil {
		t.Error("Field of a missing key: got nil error, want one")
	}
	if got := (TSResult{"op": "ping", "ok": true}).Err(); got != nil {
		t.Errorf("Err without error: got %v, want nil", got)
	}
}

// processesWithEnv returns the processes whose environment holds the
// variable kv ("NAME=value").
func processesWithEnv(kv string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []string
	for _, e := range entries {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if slices.ContainsFunc(bytes.Split(env, []byte{0}), func(v []byte) bool { return string(v) == kv }) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}
