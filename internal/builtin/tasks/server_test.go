package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

// testSettings returns settings pointing at url, with no retries.
func testSettings(url string) tasks.Settings {
	return tasks.Settings{ServiceAuthToken: testToken, BackendURL: url, LogLevel: "INFO", Port: 3000,
		BackendTimeout: 5 * time.Second, BackendMaxRetries: 0}
}

// connect starts the server in memory and returns a connected client.
func connect(t *testing.T, s tasks.Settings, opts tasks.Options) *mcp.ClientSession {
	t.Helper()
	srv, err := tasks.NewServerWithBackoff(s, opts, func(int) time.Duration { return time.Millisecond })
	if err != nil {
		t.Fatalf("NewServerWithBackoff: %v", err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes tool as user (no _meta if user is "").
func call(t *testing.T, cs *mcp.ClientSession, user, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if user != "" {
		p.Meta = mcp.Meta{tasks.MetaUserID: user, tasks.MetaSessionID: "sess-" + user}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", tool, err)
	}
	return res
}

// resultJSON returns the text content, checking that the structured
// content is the same JSON.
func resultJSON(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d content items, want 1", len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var fromText, fromStructured map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		t.Fatalf("text content is not a JSON object: %v\n%s", err, text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &fromStructured); err != nil {
		t.Fatalf("structured content is not a JSON object: %v", err)
	}
	if d := cmp.Diff(fromText, fromStructured); d != "" {
		t.Errorf("text and structured content differ (-text +structured):\n%s", d)
	}
	return fromText
}

// wantOK checks a success result and returns its JSON.
func wantOK(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	got := resultJSON(t, res)
	if res.IsError {
		t.Fatalf("got error result %v, want success", got)
	}
	return got
}

// wantErr checks an error result of the given error_type and returns it.
func wantErr(t *testing.T, res *mcp.CallToolResult, errorType string) map[string]any {
	t.Helper()
	got := resultJSON(t, res)
	if !res.IsError {
		t.Fatalf("got success %v, want %s", got, errorType)
	}
	if got["error_type"] != errorType {
		t.Fatalf("got error_type %v, want %s (%v)", got["error_type"], errorType, got)
	}
	if m, _ := got["message"].(string); m == "" {
		t.Errorf("got empty message in %v", got)
	}
	if s, _ := got["suggestions"].([]any); len(s) == 0 {
		t.Errorf("got no suggestions in %v", got)
	}
	return got
}

func jsonEqual(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("bad JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad JSON %q: %v", want, err)
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s", d)
	}
}

func TestTools(t *testing.T) {
	fb := newFakeBackend(t)
	fb.add(tasks.Task{ID: 7, Title: "Buy milk", Priority: "Low", UserID: "alice"})
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})

	tests := []struct {
		name       string
		tool       string
		args       any
		wantMethod string
		wantPath   string
		wantBody   string // "" for none
		want       string // the result JSON
	}{
		{
			name: "list", tool: tasks.ToolListTasks, args: map[string]any{},
			wantMethod: "GET", wantPath: "/tasks",
			want: `{"tasks":[{"id":7,"title":"Buy milk","description":null,"completed":false,"priority":"Low","due_date":null,
				"created_at":"2025-12-18T09:00:00Z","updated_at":"2025-12-18T09:00:00Z","user_id":"alice"}]}`,
		},
		{
			name: "create with defaults", tool: tasks.ToolCreateTask, args: map[string]any{"title": "buy milk"},
			wantMethod: "POST", wantPath: "/tasks", wantBody: `{"title":"buy milk","priority":"Medium"}`,
			want: `{"id":8,"title":"buy milk","description":null,"completed":false,"priority":"Medium","due_date":null,
				"created_at":"2025-12-18T10:00:00Z","updated_at":"2025-12-18T10:00:00Z","user_id":"alice"}`,
		},
		{
			name: "create with everything", tool: tasks.ToolCreateTask,
			args:       map[string]any{"title": "Report", "description": "Q4", "priority": "Urgent", "due_date": "2025-12-20T10:00:00Z"},
			wantMethod: "POST", wantPath: "/tasks",
			wantBody: `{"title":"Report","description":"Q4","priority":"Urgent","due_date":"2025-12-20T10:00:00Z"}`,
			want: `{"id":9,"title":"Report","description":"Q4","completed":false,"priority":"Urgent","due_date":"2025-12-20T10:00:00Z",
				"created_at":"2025-12-18T10:00:00Z","updated_at":"2025-12-18T10:00:00Z","user_id":"alice"}`,
		},
		{
			name: "update some fields and clear due_date", tool: tasks.ToolUpdateTask,
			args:       map[string]any{"task_id": 9, "title": "Q4 report", "priority": "High", "due_date": nil},
			wantMethod: "PUT", wantPath: "/tasks/9", wantBody: `{"title":"Q4 report","priority":"High","due_date":null}`,
			want: `{"id":9,"title":"Q4 report","description":"Q4","completed":false,"priority":"High","due_date":null,
				"created_at":"2025-12-18T10:00:00Z","updated_at":"2025-12-18T11:00:00Z","user_id":"alice"}`,
		},
		{
			name: "update clears description", tool: tasks.ToolUpdateTask,
			args:       map[string]any{"task_id": 9, "description": nil},
			wantMethod: "PUT", wantPath: "/tasks/9", wantBody: `{"description":null}`,
			want: `{"id":9,"title":"Q4 report","description":null,"completed":false,"priority":"High","due_date":null,
				"created_at":"2025-12-18T10:00:00Z","updated_at":"2025-12-18T11:00:00Z","user_id":"alice"}`,
		},
		{
			name: "mark completed", tool: tasks.ToolMarkTaskCompleted, args: map[string]any{"task_id": 7},
			wantMethod: "PATCH", wantPath: "/tasks/7", wantBody: `{"completed":true}`,
			want: `{"id":7,"title":"Buy milk","description":null,"completed":true,"priority":"Low","due_date":null,
				"created_at":"2025-12-18T09:00:00Z","updated_at":"2025-12-18T11:00:00Z","user_id":"alice"}`,
		},
		{
			name: "delete", tool: tasks.ToolDeleteTask, args: map[string]any{"task_id": 7},
			wantMethod: "DELETE", wantPath: "/tasks/7",
			want: `{"deleted":true,"task_id":7,"message":"Task 7 was deleted."}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fb.requests())
			got := wantOK(t, call(t, cs, "alice", tt.tool, tt.args))
			b, _ := json.Marshal(got)
			jsonEqual(t, string(b), tt.want)

			reqs := fb.requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("got %d backend requests, want 1: %+v", len(reqs), reqs)
			}
			r := reqs[0]
			if r.Method != tt.wantMethod || r.Path != tt.wantPath {
				t.Errorf("got %s %s, want %s %s", r.Method, r.Path, tt.wantMethod, tt.wantPath)
			}
			if r.Authorization != "Bearer "+testToken || r.UserID != "alice" || r.CType != "application/json" {
				t.Errorf("got headers Authorization=%q X-User-ID=%q Content-Type=%q, want Bearer token, alice, application/json",
					r.Authorization, r.UserID, r.CType)
			}
			if tt.wantBody == "" {
				if r.Body != "" {
					t.Errorf("got body %q, want none", r.Body)
				}
			} else {
				jsonEqual(t, r.Body, tt.wantBody)
			}
		})
	}
}

func TestListToolsSchemas(t *testing.T) {
	cs := connect(t, testSettings("http://127.0.0.1:1"), tasks.Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		if len(tool.Description) < 80 {
			t.Errorf("tool %s: description %q is too thin for an AI", tool.Name, tool.Description)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		json.Unmarshal(b, &m)
		schemas[tool.Name] = m
	}
	var names []string
	for n := range schemas {
		names = append(names, n)
	}
	want := []string{tasks.ToolCreateTask, tasks.ToolDeleteTask, tasks.ToolListTasks, tasks.ToolMarkTaskCompleted, tasks.ToolUpdateTask}
	if d := cmp.Diff(want, names, cmpSort); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}
	prop := func(tool, name string) map[string]any {
		return schemas[tool]["properties"].(map[string]any)[name].(map[string]any)
	}
	title := prop(tasks.ToolCreateTask, "title")
	if title["minLength"] != 1.0 || title["maxLength"] != 200.0 {
		t.Errorf("create title: got %v, want minLength 1 maxLength 200", title)
	}
	pr := prop(tasks.ToolCreateTask, "priority")
	if d := cmp.Diff([]any{"Low", "Medium", "High", "Urgent"}, pr["enum"]); d != "" || pr["default"] != "Medium" {
		t.Errorf("create priority: got %v", pr)
	}
	// Not format date-time: that would refuse "2025-12-20", which the
	// backend accepts.
	for _, tool := range []string{tasks.ToolCreateTask, tasks.ToolUpdateTask} {
		if dd := prop(tool, "due_date"); dd["format"] != nil || dd["pattern"] == nil {
			t.Errorf("%s due_date: got %v, want a pattern and no format", tool, dd)
		}
	}
	for _, tool := range []string{tasks.ToolUpdateTask, tasks.ToolDeleteTask, tasks.ToolMarkTaskCompleted} {
		id := prop(tool, "task_id")
		if id["type"] != "integer" || id["exclusiveMinimum"] != 0.0 {
			t.Errorf("%s task_id: got %v, want integer exclusiveMinimum 0", tool, id)
		}
	}
	for _, f := range []string{"description", "due_date"} {
		if d := cmp.Diff([]any{"string", "null"}, prop(tasks.ToolUpdateTask, f)["type"]); d != "" {
			t.Errorf("update %s must be nullable: %s", f, d)
		}
	}
	if typ := prop(tasks.ToolUpdateTask, "title")["type"]; typ != "string" {
		t.Errorf("update title type: got %v, want string", typ)
	}
	if _, ok := schemas[tasks.ToolUpdateTask]["properties"].(map[string]any)["completed"]; ok {
		t.Errorf("update_task must not take completed")
	}
}

var cmpSort = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func TestMissingUserContext(t *testing.T) {
	fb := newFakeBackend(t)
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})
	for _, meta := range []mcp.Meta{nil, {tasks.MetaSessionID: "s"}, {tasks.MetaUserID: ""}, {tasks.MetaUserID: 42}} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tasks.ToolListTasks, Meta: meta})
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		got := wantErr(t, res, "authentication_error")
		if !strings.Contains(got["message"].(string), "Missing user context") {
			t.Errorf("got message %q", got["message"])
		}
	}
	// Validation comes first (seed 002 step 2, then step 3).
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tasks.ToolCreateTask, Arguments: map[string]any{"title": ""}})
	wantErr(t, res, "validation_error")
	if n := len(fb.requests()); n != 0 {
		t.Errorf("got %d backend requests, want 0", n)
	}
}

// TestInvalidUserID checks a user id the backend would refuse is reported
// as a user context problem before any request: not as the server's
// credentials (a 201-character id) or as a connection failure retried (an
// id with a newline).
func TestInvalidUserID(t *testing.T) {
	for _, tc := range []struct{ name, user, want string }{
		{"too long", strings.Repeat("u", 201), "_meta.user_id is longer than 200 characters"},
		{"newline", "a\nb", "_meta.user_id must be printable UTF-8"},
		{"NUL", "a\x00b", "_meta.user_id must be printable UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := newFakeBackend(t)
			s := testSettings(fb.srv.URL)
			s.BackendMaxRetries = 2
			cs := connect(t, s, tasks.Options{})
			for tool, args := range map[string]any{tasks.ToolListTasks: nil, tasks.ToolDeleteTask: map[string]any{"task_id": 1}} {
				got := wantErr(t, call(t, cs, tc.user, tool, args), "authentication_error")
				if m, _ := got["message"].(string); !strings.Contains(m, tc.want) {
					t.Errorf("%s: got message %q, want it to contain %q", tool, m, tc.want)
				}
				all := fmt.Sprint(got)
				for _, bad := range []string{"SERVICE_AUTH_TOKEN", "unavailable", "attempts"} {
					if strings.Contains(all, bad) {
						t.Errorf("%s: got %v, want nothing about %q", tool, got, bad)
					}
				}
			}
			if n := len(fb.requests()); n != 0 {
				t.Errorf("got %d backend requests, want 0", n)
			}
		})
	}
	// The longest id the backend accepts passes.
	fb := newFakeBackend(t)
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})
	wantOK(t, call(t, cs, strings.Repeat("é", 200), tasks.ToolListTasks, nil))
}

func TestTwoUsers(t *testing.T) {
	fb := newFakeBackend(t)
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})
	wantOK(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "alice's"}))
	wantOK(t, call(t, cs, "bob", tasks.ToolCreateTask, map[string]any{"title": "bob's"}))
	got := wantOK(t, call(t, cs, "bob", tasks.ToolListTasks, nil))
	seen := got["tasks"].([]any)
	if len(seen) != 1 || seen[0].(map[string]any)["title"] != "bob's" {
		t.Errorf("bob sees %v, want only bob's task", seen)
	}
	// Bob cannot complete Alice's task: the backend answers 403.
	wantErr(t, call(t, cs, "bob", tasks.ToolMarkTaskCompleted, map[string]any{"task_id": 1}), "authorization_error")

	var users []string
	for _, r := range fb.requests() {
		users = append(users, r.UserID)
	}
	if d := cmp.Diff([]string{"alice", "bob", "bob", "bob"}, users); d != "" {
		t.Errorf("X-User-ID headers (-want +got):\n%s", d)
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		tool      string
		args      any
		wantType  string
		wantMsg   string
		wantField []any // details.fields, for validation errors
	}{
		{name: "401", status: 401, body: `{"detail":"bad token"}`, tool: tasks.ToolListTasks,
			wantType: "authentication_error", wantMsg: "The task service rejected this server's credentials"},
		{name: "403", status: 403, tool: tasks.ToolDeleteTask, args: map[string]any{"task_id": 3},
			wantType: "authorization_error", wantMsg: "Task 3 is not accessible to this user"},
		{name: "404", status: 404, tool: tasks.ToolUpdateTask, args: map[string]any{"task_id": 3, "title": "x"},
			wantType: "not_found_error", wantMsg: "Task 3 was not found"},
		{name: "422 FastAPI", status: 422, tool: tasks.ToolCreateTask, args: map[string]any{"title": "x"},
			body: `{"detail":[{"loc":["body","title"],"msg":"String should have at least 3 characters","type":"string_too_short","input":"x"},
				{"loc":["body","due_date"],"msg":"Input should be in the future","type":"value_error"}]}`,
			wantType: "validation_error", wantMsg: "The task service rejected the input",
			wantField: []any{
				map[string]any{"field": "title", "message": "String should have at least 3 characters", "received_value": "x",
					"suggestion": "Provide a task title (1-200 characters)"},
				map[string]any{"field": "due_date", "message": "Input should be in the future",
					"suggestion": "Use ISO 8601 format: 2025-12-20T10:00:00Z"},
			}},
		{name: "422 seed shape", status: 422, tool: tasks.ToolCreateTask, args: map[string]any{"title": "x"},
			body: `{"error_type":"validation_error","message":"Task creation failed due to invalid input",
				"details":{"fields":[{"field":"priority","message":"Unknown priority","received_value":"Meh"}]}}`,
			wantType: "validation_error", wantMsg: "Task creation failed due to invalid input",
			wantField: []any{
				map[string]any{"field": "priority", "message": "Unknown priority", "received_value": "Meh",
					"suggestion": "Use one of: Low, Medium, High, Urgent"},
			}},
		{name: "500", status: 500, body: `{"detail":"db down: secret internals"}`, tool: tasks.ToolListTasks,
			wantType: "backend_error", wantMsg: "The task service failed (HTTP 500)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := newFakeBackend(t)
			fb.fail = func(int, *http.Request) (int, string) { return tt.status, tt.body }
			s := testSettings(fb.srv.URL)
			s.BackendMaxRetries = 2 // none of these is transient
			cs := connect(t, s, tasks.Options{})
			got := wantErr(t, call(t, cs, "alice", tt.tool, tt.args), tt.wantType)
			if got["message"] != tt.wantMsg {
				t.Errorf("got message %q, want %q", got["message"], tt.wantMsg)
			}
			if strings.Contains(mustJSON(got), "secret internals") {
				t.Errorf("backend internals leaked to the AI: %v", got)
			}
			if tt.wantField != nil {
				details, _ := got["details"].(map[string]any)
				if d := cmp.Diff(tt.wantField, details["fields"]); d != "" {
					t.Errorf("fields (-want +got):\n%s", d)
				}
			}
			if n := len(fb.requests()); n != 1 {
				t.Errorf("got %d backend requests, want 1 (no retry)", n)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestTimeout(t *testing.T) {
	fb := newFakeBackend(t)
	fb.fail = func(int, *http.Request) (int, string) { return -1, "" }
	s := testSettings(fb.srv.URL)
	// Long enough for a request to reach the backend on a busy machine
	// before the client gives up on it (at 50ms it sometimes did not).
	s.BackendTimeout = 500 * time.Millisecond
	s.BackendMaxRetries = 1
	cs := connect(t, s, tasks.Options{})
	got := wantErr(t, call(t, cs, "alice", tasks.ToolListTasks, nil), "timeout_error")
	if got["message"] != "The task service did not respond within 500ms" {
		t.Errorf("got message %q", got["message"])
	}
	if n := backendRequests(t, fb, 2); n != 2 {
		t.Errorf("got %d backend requests, want 2 (GET retried once)", n)
	}
	// A timed-out POST is not retried, and the AI is told it may have
	// been created anyway.
	got = wantErr(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "x"}), "timeout_error")
	if n := backendRequests(t, fb, 3); n != 3 {
		t.Errorf("got %d backend requests, want 3 (POST not retried)", n)
	}
	if !strings.Contains(mustJSON(got["suggestions"]), "list_tasks before creating it again") {
		t.Errorf("got suggestions %v", got["suggestions"])
	}
}

// backendRequests returns how many requests fb has received once it has
// received at least want, or after 10s: the backend's handler records a
// request the client gave up on in its own time, perhaps after the call
// returned.
func backendRequests(t *testing.T, fb *fakeBackend, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := len(fb.requests())
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond) // the handler signals nothing to wait on
	}
}

func TestConnectionRefused(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s := testSettings(url)
	s.BackendMaxRetries = 2
	cs := connect(t, s, tasks.Options{})
	got := wantErr(t, call(t, cs, "alice", tasks.ToolMarkTaskCompleted, map[string]any{"task_id": 1}), "connection_error")
	if got["message"] != "Unable to connect to the task service" {
		t.Errorf("got message %q", got["message"])
	}
	if d, _ := got["details"].(map[string]any); d["attempts"] != 3.0 {
		t.Errorf("got details %v, want attempts 3", got["details"])
	}
	if strings.Contains(mustJSON(got), "127.0.0.1") {
		t.Errorf("internal address leaked to the AI: %v", got)
	}
}

func TestRetries(t *testing.T) {
	failTwice := func(status int) func(int, *http.Request) (int, string) {
		return func(n int, _ *http.Request) (int, string) {
			if n <= 2 {
				return status, `{"detail":"busy"}`
			}
			return 0, ""
		}
	}
	tests := []struct {
		name       string
		status     int
		maxRetries int
		tool       string
		args       any
		wantType   string // "" for success
		wantReqs   int
	}{
		{"GET after two 503s", 503, 2, tasks.ToolListTasks, nil, "", 3},
		{"PUT after two 502s", 502, 2, tasks.ToolUpdateTask, map[string]any{"task_id": 1, "title": "y"}, "", 3},
		{"PATCH after two 504s", 504, 2, tasks.ToolMarkTaskCompleted, map[string]any{"task_id": 1}, "", 3},
		{"DELETE after two 503s", 503, 2, tasks.ToolDeleteTask, map[string]any{"task_id": 1}, "", 3},
		{"retries exhausted", 503, 1, tasks.ToolListTasks, nil, "backend_error", 2},
		{"no retries configured", 503, 0, tasks.ToolListTasks, nil, "backend_error", 1},
		{"POST is never retried", 503, 2, tasks.ToolCreateTask, map[string]any{"title": "x"}, "backend_error", 1},
		{"500 is not transient", 500, 2, tasks.ToolListTasks, nil, "backend_error", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := newFakeBackend(t)
			fb.add(tasks.Task{ID: 1, Title: "x", Priority: "Low", UserID: "alice"})
			fb.fail = failTwice(tt.status)
			s := testSettings(fb.srv.URL)
			s.BackendMaxRetries = tt.maxRetries
			cs := connect(t, s, tasks.Options{})
			res := call(t, cs, "alice", tt.tool, tt.args)
			if tt.wantType == "" {
				wantOK(t, res)
			} else {
				wantErr(t, res, tt.wantType)
			}
			if n := len(fb.requests()); n != tt.wantReqs {
				t.Errorf("got %d backend requests, want %d", n, tt.wantReqs)
			}
		})
	}
}

func TestDefaultBackoff(t *testing.T) {
	var got []time.Duration
	for i := range 7 {
		got = append(got, tasks.DefaultBackoff(i))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second, 2 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("backoff (-want +got):\n%s", d)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == "backend_request" {
			out = append(out, m)
		}
	}
	return out
}

func TestLogEvent(t *testing.T) {
	fb := newFakeBackend(t)
	fb.fail = func(n int, _ *http.Request) (int, string) {
		if n == 1 {
			return 404, `{"detail":"nope"}`
		}
		return 0, ""
	}
	var buf syncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{Logger: logger})
	wantErr(t, call(t, cs, "alice", tasks.ToolDeleteTask, map[string]any{"task_id": 5}), "not_found_error")
	wantOK(t, call(t, cs, "bob", tasks.ToolListTasks, nil))

	events := buf.lines(t)
	if len(events) != 2 {
		t.Fatalf("got %d backend_request events, want 2", len(events))
	}
	for i, want := range []map[string]any{
		{"level": "INFO", "event": "backend_request", "user_id": "alice", "session_id": "sess-alice", "method": "DELETE",
			"endpoint": "/tasks/5", "status_code": 404.0, "error": "HTTP 404 Not Found", "attempt": 1.0},
		{"level": "INFO", "event": "backend_request", "user_id": "bob", "session_id": "sess-bob", "method": "GET",
			"endpoint": "/tasks", "status_code": 200.0, "error": nil, "attempt": 1.0},
	} {
		e := events[i]
		if id, _ := e["request_id"].(string); id == "" {
			t.Errorf("event %d: no request_id", i)
		}
		if _, ok := e["duration_ms"].(float64); !ok {
			t.Errorf("event %d: duration_ms = %v, want a number", i, e["duration_ms"])
		}
		for k, v := range want {
			if e[k] != v {
				t.Errorf("event %d: got %s=%v, want %v", i, k, e[k], v)
			}
		}
	}
	if events[0]["request_id"] == events[1]["request_id"] {
		t.Errorf("two tool calls share request_id %v", events[0]["request_id"])
	}
	if strings.Contains(buf.b.String(), testToken) {
		t.Errorf("the service token was logged")
	}
}

func TestStreamableHTTP(t *testing.T) {
	fb := newFakeBackend(t)
	fb.add(tasks.Task{ID: 1, Title: "over HTTP", Priority: "High", UserID: "carol"})
	srv, err := tasks.NewServer(testSettings(fb.srv.URL), tasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(tasks.HTTPHandler(srv))
	defer hs.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	got := wantOK(t, call(t, cs, "carol", tasks.ToolListTasks, nil))
	if tasks := got["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["title"] != "over HTTP" {
		t.Errorf("got %v", got)
	}
	wantErr(t, call(t, cs, "", tasks.ToolListTasks, nil), "authentication_error")
	wantErr(t, call(t, cs, "carol", tasks.ToolDeleteTask, map[string]any{"task_id": 0}), "validation_error")
	if r := fb.requests(); len(r) != 1 || r[0].UserID != "carol" {
		t.Errorf("got backend requests %+v, want one for carol", r)
	}
}

func TestNewServerRejectsBadSettings(t *testing.T) {
	for _, s := range []tasks.Settings{
		{BackendURL: "http://x", BackendTimeout: time.Second},
		{ServiceAuthToken: "t", BackendTimeout: time.Second},
		{ServiceAuthToken: "t", BackendURL: "http://x"},
		{ServiceAuthToken: "t", BackendURL: "http://x", BackendTimeout: time.Second, BackendMaxRetries: -1},
	} {
		if _, err := tasks.NewServer(s, tasks.Options{}); err == nil {
			t.Errorf("NewServer(%+v): got nil error", s)
		}
	}
}
