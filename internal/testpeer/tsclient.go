package testpeer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tsClientTimeout bounds a RunTSClient whose context has no deadline.
const tsClientTimeout = 2 * time.Minute

// tsClientScript is the client script, relative to test/peers.
const tsClientScript = "mcp-client.mjs"

// TSTarget is the server the TypeScript client connects to. Transport is
// "http" (streamable HTTP) or "sse" with URL and optional Headers, or
// "stdio" with Command, Args and Env (added to the SDK's default environment
// for a child: HOME, LOGNAME, PATH, SHELL, TERM, USER).
type TSTarget struct {
	Transport string            `json:"transport"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// TSSampling makes the client declare sampling and answer every
// sampling/createMessage with Text as the assistant's message, from model
// "ts-client-model".
type TSSampling struct {
	Text string `json:"text"`
}

// TSElicitation makes the client declare elicitation (form mode) and answer
// every elicitation/create with Action ("accept", "decline" or "cancel") and,
// for "accept", Content.
type TSElicitation struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// TSRoot is one root the client lists when it declares roots.
type TSRoot struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// TSClientInput is what test/peers/mcp-client.mjs reads: where to connect,
// which client capabilities to declare, and the steps to run in order in one
// session.
type TSClientInput struct {
	Target      TSTarget       `json:"target"`
	Sampling    *TSSampling    `json:"sampling,omitempty"`
	Elicitation *TSElicitation `json:"elicitation,omitempty"`
	Roots       []TSRoot       `json:"roots,omitempty"`
	// Wire ("http" only) records every message the server sends with the
	// HTTP stream it came on: each step's line gets "wire", one
	// {"method", "id", "messages"} per request the step POSTed (that
	// POST's response stream, in order, the response included), and the
	// summary gets "standalone", the messages of the GET streams. A step
	// waits for its POST streams to end, at most wire_wait_ms (default
	// 10000; set it low on a step whose stream stays open, a cancelled
	// call's).
	Wire  bool     `json:"wire,omitempty"`
	Steps []TSStep `json:"steps"`
}

// TSStep is one step: "op" and that op's fields, as in
//
//	TSStep{"op": "call", "name": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}}
//
// The ops and their fields:
//
//   - list_tools {want: [names], timeout_ms}: all pages; with want, polls
//     tools/list until every name is listed (tools a server adds after
//     initialize) or timeout_ms (default 30000) passes;
//   - list_prompts, list_resources, list_resource_templates: all pages;
//     every list op with pages: true also gives "pages", each page's
//     {count, nextCursor};
//   - call {name, arguments, progress: bool, timeout_ms}: the CallToolResult,
//     plus "progress": the notifications' params, when progress is true;
//   - call_task {name, arguments, ttl}: the call made as a task, with the
//     SDK's experimental callToolStream (tasks/get until it ends or needs
//     input, then tasks/result): "types" (its messages' types in order),
//     "taskId", "status" (the last seen) and "result";
//   - list_tasks, get_task {task_id}: the result;
//   - call_cancel {name, arguments, after_progress: N | after_ms: M}: aborts
//     the call after the Nth progress notification or after M ms; ok with
//     "cancelled": true, "error": what the SDK raised and "progress";
//   - get_prompt {name, arguments}, read_resource {uri}, complete {ref,
//     argument, context}, set_level {level}, ping, subscribe {uri},
//     unsubscribe {uri}: the result;
//   - wait_notification {method, count, match, timeout_ms}: waits until
//     count (default 1) notifications with method (with match, only those
//     whose params as JSON contain it) have arrived since the start, or
//     timeout_ms (default 10000) passes; "count" and the last "params";
//   - set_roots {roots}: the client answers roots/list with roots from
//     then on, and sends notifications/roots/list_changed;
//   - sleep {ms};
//   - terminate_session: ends a streamable HTTP session with DELETE.
//
// Every request op takes timeout_ms (the SDK's default is 60000).
type TSStep map[string]any

// TSResult is one line the client printed: "op", "ok", "error" when not ok,
// and the op's result fields at the top level (a call's "content",
// "isError", "structuredContent"; a list's "tools"; ...).
//
// The first line is {"op": "connect", "serverInfo", "capabilities",
// "instructions", "protocolVersion"}, then one per step, and the last is
// {"op": "summary", "notifications": {method: count}, "sampling_requests":
// [params], "elicitation_requests": [params], "elicitation_field_orders":
// [each elicitation's requestedSchema property names, in the order they
// came], "roots_requests": count,
// "errors": [the client's own errors]} (and "standalone" with Wire).
type TSResult map[string]any

// TSError is the error of a result line: the JSON-RPC code (0 when the SDK
// raised something else), the SDK's message (for a JSON-RPC error, "MCP error
// CODE: " and the server's message) and the JavaScript error's name.
type TSError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Name    string `json:"name"`
	Data    any    `json:"data,omitempty"`
}

func (e *TSError) Error() string {
	return fmt.Sprintf("%s (code %d): %s", e.Name, e.Code, e.Message)
}

// Op returns the line's op.
func (r TSResult) Op() string {
	s, _ := r["op"].(string)
	return s
}

// OK reports whether the step succeeded.
func (r TSResult) OK() bool {
	ok, _ := r["ok"].(bool)
	return ok
}

// Err returns the line's error, or nil if it has none. A cancelled call
// has one although it is OK.
func (r TSResult) Err() *TSError {
	if _, ok := r["error"]; !ok {
		return nil
	}
	var e TSError
	if err := r.Field("error", &e); err != nil {
		return &TSError{Message: fmt.Sprintf("undecodable error %v: %v", r["error"], err)}
	}
	return &e
}

// Decode decodes the whole line into v, as if it were the result alone: an
// *mcp.CallToolResult or *mcp.ListToolsResult of the Go SDK, for example.
func (r TSResult) Decode(v any) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding the %s result: %w", r.Op(), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding the %s result into %T: %w", r.Op(), v, err)
	}
	return nil
}

// Field decodes the field key of the line into v. It fails if there is no
// such field.
func (r TSResult) Field(key string, v any) error {
	raw, ok := r[key]
	if !ok {
		return fmt.Errorf("the %s result has no field %q", r.Op(), key)
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return fmt.Errorf("encoding field %q of the %s result: %w", key, r.Op(), err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding field %q of the %s result into %T: %w", key, r.Op(), v, err)
	}
	return nil
}

// Text returns the text of the line's text content blocks (a call's or a
// prompt message's), joined with newlines.
func (r TSResult) Text() string {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = r.Decode(&res)
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// RunTSClient runs the TypeScript SDK's MCP client (test/peers/mcp-client.mjs
// on @modelcontextprotocol/sdk) with in, and returns its result lines: the
// connect line, one per step, and the summary. It fails the test, naming
// `make peers`, when node or the SDK is not installed.
//
// The client runs in its own process group (with a stdio target's server),
// until ctx is done or, if ctx has no deadline, for at most two minutes; the
// group is killed when the client exits or is cancelled. The error is
// non-nil when the client exits non-zero (broken input, failed connect) or
// prints something that is not a result line; it quotes the client's stderr.
// The lines decoded up to then are returned with it.
func RunTSClient(t testing.TB, ctx context.Context, in TSClientInput) ([]TSResult, error) {
	t.Helper()
	node, script := Node(t), tsClient(t)
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encoding the TypeScript client's input: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, tsClientTimeout)
		defer cancel()
	}

	var stdout bytes.Buffer
	stderr := &tailBuffer{limit: outputLimit}
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = stopGrace // should a grandchild hold the output pipes open
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the TypeScript client: %w", err)
	}
	runErr := cmd.Wait()
	// The client is gone; end whatever it left in its group (a stdio server
	// it failed to close). Its process group id cannot be reused while the
	// group has members, so only a group seen with members is signalled.
	if pgid := cmd.Process.Pid; len(groupMembers(pgid)) > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}

	results, parseErr := parseTSResults(stdout.Bytes())
	switch {
	case ctx.Err() != nil:
		return results, fmt.Errorf("running the TypeScript client: %w (%v); stderr:\n%s", ctx.Err(), runErr, stderr)
	case runErr != nil:
		return results, fmt.Errorf("running the TypeScript client: %w; stderr:\n%s", runErr, stderr)
	case parseErr != nil:
		return results, fmt.Errorf("reading the TypeScript client's output: %w; stderr:\n%s", parseErr, stderr)
	}
	return results, nil
}

// tsClient returns the path of the client script, after checking that the
// SDK it imports is installed.
func tsClient(t testing.TB) string {
	t.Helper()
	dir := Dir(t)
	if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("testpeer: @modelcontextprotocol/sdk is not installed (%v): %s", err, installHint)
	}
	script := filepath.Join(filepath.Dir(dir), tsClientScript)
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("testpeer: the TypeScript client script is missing: %v", err)
	}
	return script
}

// parseTSResults decodes the client's output, one JSON object a line.
func parseTSResults(out []byte) ([]TSResult, error) {
	var results []TSResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r TSResult
		if err := json.Unmarshal(line, &r); err != nil {
			return results, fmt.Errorf("line %d %.200q: %w", n, line, err)
		}
		if r.Op() == "" {
			return results, fmt.Errorf("line %d %.200q has no op", n, line)
		}
		results = append(results, r)
	}
	if err := sc.Err(); err != nil {
		return results, err
	}
	if len(results) == 0 {
		return nil, errors.New("no result lines")
	}
	return results, nil
}

// groupMembers returns the processes in process group pgid, from /proc
// (none where there is no /proc).
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
