package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskwire"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// Options holds the server's dependencies.
type Options struct {
	// Logger receives the backend_request events; nil discards them.
	Logger *slog.Logger
	// HTTPClient sends backend requests; nil means a new default client.
	// Its own Timeout, if any, applies in addition to BackendTimeout.
	HTTPClient *http.Client
}

// UserContext is the user a tool call acts for, taken from the request's
// _meta (seed 002's UserContext).
type UserContext struct {
	UserID    string
	SessionID string // optional
}

// Meta keys that carry the user context.
const (
	MetaUserID    = "user_id"
	MetaSessionID = "session_id"
)

// userContextFrom extracts the user context from a tool call's _meta.
func userContextFrom(meta mcp.Meta) (UserContext, *fault.Error) {
	uid, _ := meta[MetaUserID].(string)
	if strings.TrimSpace(uid) == "" {
		return UserContext{}, fault.New(fault.Authentication, "Missing user context: the request does not say which user it is for").
			WithSuggestions(
				"The MCP client must send the user's id as _meta.user_id on every tools/call request",
				"Ask the user to sign in again; do not guess a user id")
	}
	// Check the user id as the backend will (its X-User-ID rules): a
	// value it refuses would otherwise come back as a credentials
	// problem, or fail as a header before it is sent.
	if problem := taskwire.UserIDProblem(uid); problem != "" {
		return UserContext{}, fault.New(fault.Authentication, "Invalid user context: _meta.user_id %s", problem).
			WithSuggestions(
				fmt.Sprintf("The MCP client must send the user's id as _meta.user_id: printable text of at most %d characters", taskwire.MaxUserIDLength),
				"Do not guess or alter a user id; ask the user to sign in again")
	}
	sid, _ := meta[MetaSessionID].(string)
	return UserContext{UserID: uid, SessionID: sid}, nil
}

// Task is a task as returned to the AI (seed 002's TaskResponse).
type Task struct {
	ID          int64   `json:"id"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Completed   bool    `json:"completed"`
	Priority    string  `json:"priority"`
	DueDate     *string `json:"due_date"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	UserID      string  `json:"user_id"`
}

// TaskList is list_tasks' result.
type TaskList struct {
	Tasks []Task `json:"tasks"`
}

// DeleteResult is delete_task's result.
type DeleteResult struct {
	Deleted bool   `json:"deleted"`
	TaskID  int64  `json:"task_id"`
	Message string `json:"message"`
}

// NewServer returns an MCP server with the five task tools, forwarding to
// the backend at s.BackendURL. s is usually from [LoadSettings].
func NewServer(s Settings, opts Options) (*mcp.Server, error) {
	return newServer(s, opts, defaultBackoff)
}

func newServer(s Settings, opts Options, backoff func(int) time.Duration) (*mcp.Server, error) {
	switch {
	case s.ServiceAuthToken == "":
		return nil, fault.New(fault.Config, "creating task server: %s is empty", EnvServiceAuthToken)
	case s.BackendURL == "":
		return nil, fault.New(fault.Config, "creating task server: %s is empty", EnvBackendURL)
	case s.BackendTimeout <= 0:
		return nil, fault.New(fault.Config, "creating task server: %s must be greater than 0", EnvBackendTimeout)
	case s.BackendMaxRetries < 0:
		return nil, fault.New(fault.Config, "creating task server: %s must be 0 or more", EnvBackendMaxRetries)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	h := &handlers{b: &backend{
		baseURL:    strings.TrimRight(s.BackendURL, "/"),
		token:      s.ServiceAuthToken,
		client:     client,
		timeout:    s.BackendTimeout,
		maxRetries: s.BackendMaxRetries,
		backoff:    backoff,
		logger:     logger,
	}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "switchboard-tasks", Version: "0.1.0"}, &mcp.ServerOptions{
		Logger: logger,
		Instructions: "Manage the signed-in user's todo list. Use list_tasks to find task ids; " +
			"create_task, update_task, delete_task and mark_task_completed change tasks.",
	})
	run := map[string]func(context.Context, UserContext, json.RawMessage) (any, *fault.Error){
		ToolListTasks:         h.list,
		ToolCreateTask:        h.create,
		ToolUpdateTask:        h.update,
		ToolDeleteTask:        h.delete,
		ToolMarkTaskCompleted: h.complete,
	}
	for _, t := range toolDefs() {
		srv.AddTool(t, h.tool(t.Name, run[t.Name]))
	}
	return srv, nil
}

// handlers implements the tools.
type handlers struct {
	b *backend
}

// validators check each tool's arguments before anything else happens
// (seed 002 step 2).
var validators = map[string]func(json.RawMessage) *fault.Error{
	ToolListTasks:         validateList,
	ToolCreateTask:        func(raw json.RawMessage) *fault.Error { _, e := validateCreate(raw); return e },
	ToolUpdateTask:        func(raw json.RawMessage) *fault.Error { _, e := validateUpdate(raw); return e },
	ToolDeleteTask:        func(raw json.RawMessage) *fault.Error { _, e := validateTaskID(ToolDeleteTask, raw); return e },
	ToolMarkTaskCompleted: func(raw json.RawMessage) *fault.Error { _, e := validateTaskID(ToolMarkTaskCompleted, raw); return e },
}

// tool adapts fn to an MCP tool handler: validate the arguments, check the
// user context, call fn, and render the result or error.
func (h *handlers) tool(name string, fn func(context.Context, UserContext, json.RawMessage) (any, *fault.Error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if fe := validators[name](args); fe != nil {
			return errorResult(fe), nil
		}
		uc, fe := userContextFrom(req.Params.Meta)
		if fe != nil {
			return errorResult(fe), nil
		}
		out, fe := fn(ctx, uc, args)
		if fe != nil {
			return errorResult(fe), nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return errorResult(fault.Wrap(fault.Internal, err, "encoding the result")), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
			StructuredContent: json.RawMessage(data),
		}, nil
	}
}

// errorResult renders fe as an isError result: seed 002's ErrorResponse as
// text and as structured content.
func errorResult(fe *fault.Error) *mcp.CallToolResult {
	data, err := json.Marshal(fe)
	if err != nil {
		data = []byte(`{"error_type":"internal_error","message":"the error could not be rendered"}`)
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data),
	}
}

func (h *handlers) list(ctx context.Context, uc UserContext, _ json.RawMessage) (any, *fault.Error) {
	body, fe := h.b.do(ctx, request{id: newRequestID(), user: uc, method: http.MethodGet, endpoint: "/tasks", subject: "The task list"})
	if fe != nil {
		return nil, fe
	}
	list := TaskList{Tasks: []Task{}}
	// Accept a bare array (seed 002) or an object with a "tasks" array.
	if err := json.Unmarshal(body, &list.Tasks); err != nil {
		if err2 := json.Unmarshal(body, &list); err2 != nil {
			return nil, unreadable(err)
		}
	}
	if list.Tasks == nil {
		list.Tasks = []Task{}
	}
	return list, nil
}

func (h *handlers) create(ctx context.Context, uc UserContext, raw json.RawMessage) (any, *fault.Error) {
	p, _ := validateCreate(raw)
	return h.task(ctx, request{id: newRequestID(), user: uc, method: http.MethodPost, endpoint: "/tasks", body: p, subject: "The new task"})
}

func (h *handlers) update(ctx context.Context, uc UserContext, raw json.RawMessage) (any, *fault.Error) {
	p, _ := validateUpdate(raw)
	return h.task(ctx, request{id: newRequestID(), user: uc, method: http.MethodPut,
		endpoint: fmt.Sprintf("/tasks/%d", p.TaskID), body: p.Body, subject: fmt.Sprintf("Task %d", p.TaskID)})
}

func (h *handlers) complete(ctx context.Context, uc UserContext, raw json.RawMessage) (any, *fault.Error) {
	id, _ := validateTaskID(ToolMarkTaskCompleted, raw)
	return h.task(ctx, request{id: newRequestID(), user: uc, method: http.MethodPatch,
		endpoint: fmt.Sprintf("/tasks/%d", id), body: map[string]bool{"completed": true}, subject: fmt.Sprintf("Task %d", id)})
}

func (h *handlers) delete(ctx context.Context, uc UserContext, raw json.RawMessage) (any, *fault.Error) {
	id, _ := validateTaskID(ToolDeleteTask, raw)
	_, fe := h.b.do(ctx, request{id: newRequestID(), user: uc, method: http.MethodDelete,
		endpoint: fmt.Sprintf("/tasks/%d", id), subject: fmt.Sprintf("Task %d", id)})
	if fe != nil {
		return nil, fe
	}
	return DeleteResult{Deleted: true, TaskID: id, Message: fmt.Sprintf("Task %d was deleted.", id)}, nil
}

// task sends r and decodes one task from the response.
func (h *handlers) task(ctx context.Context, r request) (any, *fault.Error) {
	body, fe := h.b.do(ctx, r)
	if fe != nil {
		return nil, fe
	}
	var t Task
	if err := json.Unmarshal(body, &t); err != nil {
		return nil, unreadable(err)
	}
	return t, nil
}

// unreadable reports a 2xx response that could not be decoded.
func unreadable(err error) *fault.Error {
	return fault.Wrap(fault.Backend, err, "The task service returned a response that could not be read").
		WithSuggestions("Try again in a moment", "If it keeps failing, tell the user the task service has a problem")
}

// ServeStdio runs srv over standard input and output until ctx is done or
// the client disconnects. Cancellation is not an error.
func ServeStdio(ctx context.Context, srv *mcp.Server) error {
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return nil
	}
	return err
}

// HTTPHandler serves srv over stateless streamable HTTP at /mcp.
func HTTPHandler(srv *mcp.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	return mux
}
