package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestTasksAgainstTSExample runs a task from creation to result against
// the TypeScript SDK's simpleTaskInteractive example: what the SDK drops
// (capabilities.tasks, execution.taskSupport) is read off the wire, and
// the task methods go out as raw requests; the example's elicitation,
// sent on the standalone stream while tasks/result waits, is answered by
// the client's handler.
func TestTasksAgainstTSExample(t *testing.T) {
	t.Parallel()
	url := testpeer.StartTaskExample(t)
	asked := make(chan string, 1)
	c, err := Dial(context.Background(), config.Server{Name: "tasks", Transport: config.TransportHTTP, URL: url, ConnectTimeout: 30 * time.Second},
		DialOptions{Requests: ClientRequests{Elicit: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			asked <- p.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if got := string(c.TaskCapabilities()); !strings.Contains(got, `"call"`) {
		t.Fatalf("TaskCapabilities = %s, want the example's requests.tools.call", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.TaskSupport("confirm_delete"); got != "required" {
		t.Fatalf("TaskSupport(confirm_delete) = %q, want required", got)
	}
	if got := c.TaskSupport("no_such_tool"); got != "forbidden" {
		t.Fatalf("TaskSupport(no_such_tool) = %q, want forbidden", got)
	}

	raw, err := c.Request(ctx, "tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "a.txt"}, "task": map[string]any{"ttl": 60000}})
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call as a task answered %s (%v), want a task", raw, err)
	}
	id := created.Task.TaskID
	raw, err = c.Request(ctx, "tasks/get", map[string]any{"taskId": id})
	if err != nil || !strings.Contains(string(raw), id) {
		t.Fatalf("tasks/get = %s, %v; want the task", raw, err)
	}
	raw, err = c.Request(ctx, "tasks/result", map[string]any{"taskId": id})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "Deleted 'a.txt'") {
		t.Fatalf("tasks/result = %s, want the deletion confirmed", raw)
	}
	if q := <-asked; !strings.Contains(q, "a.txt") {
		t.Fatalf("elicitation %q, want it to name the file", q)
	}
	_, err = c.Request(ctx, "tasks/get", map[string]any{"taskId": "no-such-task"})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("tasks/get of an unknown task: %v, want the server's not found", err)
	}
}

// TestRawRequestOverStdio sends a method the SDK does not model on a
// stdio connection: the server's answer (a go-sdk server knows no tasks:
// method not found) comes back to the caller, not to the SDK, which goes
// on working; the server declared no task support.
func TestRawRequestOverStdio(t *testing.T) {
	t.Parallel()
	c := dial(t, testserver.Server(t, "ok", "ok"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got := c.TaskCapabilities(); got != nil {
		t.Fatalf("TaskCapabilities = %s, want none", got)
	}
	_, err := c.Request(ctx, "tasks/get", map[string]any{"taskId": "x"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("tasks/get on a server without tasks: %v, want the server's method not found", err)
	}
	if !strings.Contains(err.Error(), "calling tasks/get on ok") {
		t.Fatalf("error %q, want it to say what was being done", err)
	}
	if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}, nil); err != nil {
		t.Fatalf("a call after the raw request: %v", err)
	}
	if got := c.TaskSupport("echo"); got != "forbidden" {
		t.Fatalf("TaskSupport(echo) = %q, want forbidden", got)
	}
}
