package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/answer"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// Tasks (MCP 2025-11-25's task-augmented requests) reach a backend's
// servers through CallRequest.Task, which starts a call as a task, and
// Task, which asks the server that owns a task about it. A backend keeps
// the tasks calls it made started, so that the outcome fetched with
// "result" is recorded as the call's (Engine.TaskResult) and "list" can
// name them for a server that cannot list its own.

// The task methods of TaskRequest.Method.
const (
	TaskGet    = "get"
	TaskResult = "result"
	TaskCancel = "cancel"
	TaskList   = "list"
)

// TaskRequest asks a server about a task.
type TaskRequest struct {
	Server string `json:"server"`
	// Method is TaskGet, TaskResult, TaskCancel or TaskList.
	Method string `json:"method"`
	// TaskID is the task (not for TaskList).
	TaskID string `json:"task_id,omitempty"`
	// Identity is the caller: a task a backend started for another
	// identity is not theirs to see (TaskList shows only their own).
	Identity string `json:"identity,omitempty"`
	// Answers says the caller answers what the server asks while a
	// result is awaited (TaskResult), over the request's stream; the
	// client sets it when the context has an answer.Answerer.
	Answers bool `json:"answers,omitempty"`
}

// TaskAnswer is the server's answer: for get and cancel the task (taskId,
// status, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval),
// for result the tool's result (a CallToolResult), for list
// {"tasks": [...]}.
type TaskAnswer struct {
	Result json.RawMessage `json:"result"`
}

// Tasker is implemented by the backends that reach tasks (the local
// backend and the daemon's client).
type Tasker interface {
	Task(ctx context.Context, req TaskRequest) (*TaskAnswer, error)
}

// Task implements Tasker. Waiting for a result, the server's questions
// go to the answerer of ctx (answer.With), as during a call.
func (c *Client) Task(ctx context.Context, req TaskRequest) (*TaskAnswer, error) {
	if _, ok := answer.From(ctx); ok && req.Method == TaskResult {
		req.Answers = true
		l, err := c.stream(ctx, "/v1/task", req, nil)
		if err != nil {
			return nil, err
		}
		if l.Task == nil {
			return nil, fault.New(fault.Protocol, "the switchboard daemon answered task result with no result")
		}
		return l.Task, nil
	}
	req.Answers = false
	var v TaskAnswer
	if err := c.do(ctx, http.MethodPost, "/v1/task", req, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// startedTask is a task a call of this backend started.
type startedTask struct {
	req      toolcall.Request
	started  time.Time
	recorded bool
	result   *mcp.CallToolResult
}

// taskBook holds the tasks a backend's calls started, by server and id.
type taskBook struct {
	mu    sync.Mutex
	m     map[string]*startedTask
	order []string // oldest first
}

// maxBookedTasks bounds the tasks a backend remembers.
const maxBookedTasks = 1000

func (b *taskBook) add(server, id string, t *startedTask) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]*startedTask{}
	}
	key := server + "\x00" + id
	b.m[key] = t
	b.order = append(b.order, key)
	for len(b.order) > maxBookedTasks {
		delete(b.m, b.order[0])
		b.order = b.order[1:]
	}
}

func (b *taskBook) get(server, id string) *startedTask {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[server+"\x00"+id]
}

// ids returns the ids of server's tasks started for identity, newest first.
func (b *taskBook) ids(server, identity string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for i := len(b.order) - 1; i >= 0; i-- {
		k := b.order[i]
		if t := b.m[k]; t != nil && t.req.Server == server && t.req.Identity == identity {
			out = append(out, k[len(server)+1:])
		}
	}
	return out
}

// booked notes the task a call started.
func (l *local) booked(req toolcall.Request, res *toolcall.Result) {
	var t struct {
		TaskID string `json:"taskId"`
	}
	if res == nil || res.Task == nil || json.Unmarshal(res.Task, &t) != nil || t.TaskID == "" {
		return
	}
	req.Task, req.OnProgress = nil, nil
	l.tasks.add(req.Server, t.TaskID, &startedTask{req: req, started: time.Now()})
}

// Task implements Tasker.
func (l *local) Task(ctx context.Context, req TaskRequest) (*TaskAnswer, error) {
	if l.c.Pool == nil || l.c.Engine == nil {
		return nil, missing("servers")
	}
	if !slices.Contains([]string{TaskGet, TaskResult, TaskCancel, TaskList}, req.Method) {
		return nil, fault.New(fault.Validation, "unknown task method %q; use get, result, cancel or list", req.Method).WithDetail("field", "method")
	}
	if req.Method != TaskList && req.TaskID == "" {
		return nil, fault.New(fault.Validation, "task %s needs the task's id", req.Method).WithDetail("field", "task_id")
	}
	c, err := l.c.Pool.Client(req.Server)
	if err != nil {
		return nil, err
	}
	var t *startedTask
	if req.TaskID != "" {
		if t = l.tasks.get(req.Server, req.TaskID); t != nil && t.req.Identity != req.Identity {
			// Another caller's: not theirs to see.
			return nil, fault.New(fault.NotFound, "server %s has no task %q of yours", req.Server, req.TaskID).
				WithDetail("server", req.Server).WithSuggestions("switchboard task list " + req.Server)
		}
	}
	switch req.Method {
	case TaskList:
		return l.listTasks(ctx, req)
	case TaskResult:
		// The server may ask its questions while the result is awaited
		// (input_required): they go to the caller's answerer, as a call's.
		tctx, end := l.c.Engine.Track(ctx, req.Server)
		raw, err := c.Request(tctx, "tasks/result", map[string]any{"taskId": req.TaskID})
		end()
		if t == nil {
			if err != nil {
				return nil, err
			}
			return &TaskAnswer{Result: raw}, nil
		}
		var res *mcp.CallToolResult
		if err == nil {
			res = new(mcp.CallToolResult)
			if jerr := json.Unmarshal(raw, res); jerr != nil {
				err = fault.Wrap(fault.Protocol, jerr, "decoding the result of task %s of %s", req.TaskID, req.Server)
			}
		}
		out := l.recordTask(ctx, t, res, err)
		if err != nil {
			return nil, err
		}
		b, merr := json.Marshal(out)
		if merr != nil {
			return nil, fmt.Errorf("encoding the task's result: %w", merr)
		}
		return &TaskAnswer{Result: b}, nil
	default:
		raw, err := c.Request(ctx, "tasks/"+req.Method, map[string]any{"taskId": req.TaskID})
		if err != nil {
			return nil, err
		}
		var st struct {
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
		}
		if t != nil && json.Unmarshal(raw, &st) == nil && (st.Status == "failed" || st.Status == "cancelled") {
			l.recordTask(ctx, t, nil, toolcall.TaskError(req.Server, t.req.Tool, st.Status, st.StatusMessage))
		}
		return &TaskAnswer{Result: raw}, nil
	}
}

// recordTask records t's outcome once, and returns the result as
// recorded (truncated and redacted as any).
func (l *local) recordTask(ctx context.Context, t *startedTask, res *mcp.CallToolResult, err error) *mcp.CallToolResult {
	l.tasks.mu.Lock()
	defer l.tasks.mu.Unlock()
	if t.recorded {
		if t.result != nil {
			return t.result
		}
		return res
	}
	t.recorded = true
	if out := l.c.Engine.TaskResult(context.WithoutCancel(ctx), t.req, t.started, res, err); out != nil {
		t.result = out.CallToolResult
	}
	return t.result
}

// listTasks answers TaskList: the server's own list when it declares
// tasks/list, else the caller's tasks this backend started, each as the
// server gives it now.
func (l *local) listTasks(ctx context.Context, req TaskRequest) (*TaskAnswer, error) {
	c, err := l.c.Pool.Client(req.Server)
	if err != nil {
		return nil, err
	}
	var caps struct {
		List json.RawMessage `json:"list"`
	}
	if json.Unmarshal(c.TaskCapabilities(), &caps) == nil && len(caps.List) > 0 {
		var all []json.RawMessage
		var cursor string
		for range 100 {
			params := map[string]any{}
			if cursor != "" {
				params["cursor"] = cursor
			}
			raw, err := c.Request(ctx, "tasks/list", params)
			if err != nil {
				return nil, err
			}
			var page struct {
				Tasks      []json.RawMessage `json:"tasks"`
				NextCursor string            `json:"nextCursor"`
			}
			if err := json.Unmarshal(raw, &page); err != nil {
				return nil, fault.Wrap(fault.Protocol, err, "decoding the tasks/list answer of %s", req.Server)
			}
			all = append(all, page.Tasks...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		return tasksAnswer(all)
	}
	tasks := []json.RawMessage{}
	for _, id := range l.tasks.ids(req.Server, req.Identity) {
		raw, err := c.Request(ctx, "tasks/get", map[string]any{"taskId": id})
		var rpc *jsonrpc.Error
		switch {
		case err == nil:
			tasks = append(tasks, raw)
		case errors.As(err, &rpc):
			// Gone from the server (its ttl passed): not listed.
		default:
			return nil, err
		}
	}
	return tasksAnswer(tasks)
}

func tasksAnswer(tasks []json.RawMessage) (*TaskAnswer, error) {
	if tasks == nil {
		tasks = []json.RawMessage{}
	}
	b, err := json.Marshal(map[string]any{"tasks": tasks})
	if err != nil {
		return nil, fmt.Errorf("encoding the task list: %w", err)
	}
	return &TaskAnswer{Result: b}, nil
}

// withTaskSupport fills in a tool's task support from its server.
func (l *local) withTaskSupport(t ToolInfo) ToolInfo {
	if l.c.Pool == nil {
		return t
	}
	if c, err := l.c.Pool.Client(t.Server); err == nil {
		if s := c.TaskSupport(t.Name); s != "forbidden" {
			t.TaskSupport = s
		}
	}
	return t
}
