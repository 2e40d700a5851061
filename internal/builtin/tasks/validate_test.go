package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

// validationCases are arguments each tool must reject, with the exact
// field details the AI gets.
var validationCases = []struct {
	name   string
	tool   string
	args   string
	fields string // details.fields as JSON
}{
	{"create: empty title and bad due_date", tasks.ToolCreateTask, `{"title":"","due_date":"tomorrow"}`, `[
		{"field":"title","message":"Title cannot be empty","suggestion":"Provide a task title (1-200 characters)"},
		{"field":"due_date","message":"Invalid datetime format","received_value":"tomorrow","suggestion":"Use ISO 8601 format: 2025-12-20T10:00:00Z"}]`},
	{"create: NUL title", tasks.ToolCreateTask, `{"title":"\u0000"}`, `[
		{"field":"title","message":"Title must not contain NUL characters (U+0000)","received_value":"\u0000","suggestion":"Provide a task title (1-200 characters)"}]`},
	{"create: NUL inside title and description", tasks.ToolCreateTask, `{"title":"a\u0000b","description":"p\u0000q"}`, `[
		{"field":"title","message":"Title must not contain NUL characters (U+0000)","received_value":"a\u0000b","suggestion":"Provide a task title (1-200 characters)"},
		{"field":"description","message":"Description must not contain NUL characters (U+0000)","received_value":"p\u0000q","suggestion":"Provide the description as a string, or null to clear it"}]`},
	{"update: NUL title and description", tasks.ToolUpdateTask, `{"task_id":2,"title":"\u0000\u0000","description":"\u0000"}`, `[
		{"field":"title","message":"Title must not contain NUL characters (U+0000)","received_value":"\u0000\u0000","suggestion":"Provide a task title (1-200 characters)"},
		{"field":"description","message":"Description must not contain NUL characters (U+0000)","received_value":"\u0000","suggestion":"Provide the description as a string, or null to clear it"}]`},
	{"create: due_date with a space", tasks.ToolCreateTask, `{"title":"x","due_date":"2025-12-20 10:00:00"}`, `[
		{"field":"due_date","message":"Invalid datetime format","received_value":"2025-12-20 10:00:00","suggestion":"Use ISO 8601 format: 2025-12-20T10:00:00Z"}]`},
	{"create: missing title", tasks.ToolCreateTask, `{}`, `[
		{"field":"title","message":"Title is required","suggestion":"Provide a task title (1-200 characters)"}]`},
	{"create: title too long", tasks.ToolCreateTask, `{"title":"` + strings.Repeat("é", 201) + `"}`, `[
		{"field":"title","message":"Title must be at most 200 characters (got 201)","received_value":"` + strings.Repeat("é", 100) + `…","suggestion":"Provide a task title (1-200 characters)"}]`},
	{"create: bad priority and types", tasks.ToolCreateTask, `{"title":5,"priority":"high","description":["x"]}`, `[
		{"field":"title","message":"title must be a string","received_value":"5","suggestion":"Provide a task title (1-200 characters)"},
		{"field":"description","message":"description must be a string","received_value":"[\"x\"]","suggestion":"Provide the description as a string, or null to clear it"},
		{"field":"priority","message":"Priority must be one of Low, Medium, High, Urgent","received_value":"high","suggestion":"Use one of: Low, Medium, High, Urgent"}]`},
	{"create: unknown field", tasks.ToolCreateTask, `{"title":"x","completed":true}`, `[
		{"field":"completed","message":"completed is not a parameter of create_task","received_value":"true","suggestion":"Completion is changed with mark_task_completed, not update_task"}]`},
	{"update: missing task_id and nothing to change", tasks.ToolUpdateTask, `{"title":null}`, `[
		{"field":"task_id","message":"task_id is required","suggestion":"Use the positive integer id of a task from list_tasks"},
		{"field":"title","message":"Title cannot be null; omit it to keep the current title","received_value":"null","suggestion":"Provide a task title (1-200 characters)"}]`},
	{"update: completion is not updated here", tasks.ToolUpdateTask, `{"task_id":1,"completed":true}`, `[
		{"field":"completed","message":"completed is not a parameter of update_task","received_value":"true","suggestion":"Completion is changed with mark_task_completed, not update_task"}]`},
	{"update: nothing to change", tasks.ToolUpdateTask, `{"task_id":1}`, `[
		{"field":"arguments","message":"Nothing to update","suggestion":"Pass at least one of title, description, priority, due_date; use mark_task_completed to complete a task"}]`},
	{"delete: zero", tasks.ToolDeleteTask, `{"task_id":0}`, `[
		{"field":"task_id","message":"task_id must be greater than 0","received_value":"0","suggestion":"Use the positive integer id of a task from list_tasks"}]`},
	{"delete: string id", tasks.ToolDeleteTask, `{"task_id":"7"}`, `[
		{"field":"task_id","message":"task_id must be an integer","received_value":"7","suggestion":"Use the positive integer id of a task from list_tasks"}]`},
	{"complete: fraction", tasks.ToolMarkTaskCompleted, `{"task_id":1.5}`, `[
		{"field":"task_id","message":"task_id must be an integer","received_value":"1.5","suggestion":"Use the positive integer id of a task from list_tasks"}]`},
	{"list: unexpected parameter", tasks.ToolListTasks, `{"status":"open"}`, `[
		{"field":"status","message":"status is not a parameter of list_tasks","received_value":"open","suggestion":"Remove it"}]`},
}

// validCases are arguments each tool must accept.
var validCases = []struct{ tool, args string }{
	{tasks.ToolListTasks, `{}`},
	{tasks.ToolCreateTask, `{"title":"x"}`},
	{tasks.ToolCreateTask, `{"title":"x","description":null,"due_date":null,"priority":"Urgent"}`},
	{tasks.ToolCreateTask, `{"title":"x","due_date":"2025-12-20T10:00:00.5+02:00"}`},
	{tasks.ToolCreateTask, `{"title":"x","due_date":"2025-12-20"}`},
	{tasks.ToolCreateTask, `{"title":"x","due_date":"2025-12-20T10:00:00"}`},
	{tasks.ToolUpdateTask, `{"task_id":3,"due_date":"2025-12-20"}`},
	{tasks.ToolUpdateTask, `{"task_id":3,"due_date":"2025-12-20T10:00:00.123456"}`},
	{tasks.ToolUpdateTask, `{"task_id":3,"due_date":null}`},
	{tasks.ToolUpdateTask, `{"task_id":3.0,"description":"d"}`},
	{tasks.ToolDeleteTask, `{"task_id":9007199254740991}`},
	{tasks.ToolMarkTaskCompleted, `{"task_id":1}`},
}

func TestValidationThroughMCP(t *testing.T) {
	fb := newFakeBackend(t)
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})
	for _, tt := range validationCases {
		t.Run(tt.name, func(t *testing.T) {
			got := wantErr(t, call(t, cs, "alice", tt.tool, json.RawMessage(tt.args)), "validation_error")
			if want := tasks.FailureMessages[tt.tool]; got["message"] != want {
				t.Errorf("got message %q, want %q", got["message"], want)
			}
			details, _ := got["details"].(map[string]any)
			var want any
			json.Unmarshal([]byte(tt.fields), &want)
			if d := cmp.Diff(want, details["fields"]); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
		})
	}
	if n := len(fb.requests()); n != 0 {
		t.Errorf("got %d backend requests for invalid input, want 0", n)
	}
}

// TestSchemasAgreeWithValidation checks the advertised JSON Schemas
// accept and reject the same arguments the handlers do.
func TestSchemasAgreeWithValidation(t *testing.T) {
	schemas := map[string]*jsonschema.Schema{}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	listed, err := connect(t, testSettings("http://127.0.0.1:1"), tasks.Options{}).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		url := "mem:///" + tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = c.Compile(url); err != nil {
			t.Fatalf("compiling %s schema: %v", tool.Name, err)
		}
	}
	check := func(tool, args string) (schemaOK, handlerOK bool) {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		fe, _ := tasks.Validate(tool, json.RawMessage(args))
		return schemas[tool].Validate(v) == nil, fe == nil
	}
	for _, tt := range validationCases {
		schemaOK, handlerOK := check(tt.tool, tt.args)
		// "Nothing to update" is beyond what the schema says.
		if handlerOK || (schemaOK && !strings.Contains(tt.fields, "Nothing to update")) {
			t.Errorf("%s %s: schema accepts=%v handler accepts=%v, want both to reject", tt.tool, tt.args, schemaOK, handlerOK)
		}
	}
	for _, tt := range validCases {
		if schemaOK, handlerOK := check(tt.tool, tt.args); !schemaOK || !handlerOK {
			t.Errorf("%s %s: schema accepts=%v handler accepts=%v, want both to accept", tt.tool, tt.args, schemaOK, handlerOK)
		}
	}
}

func TestValidArgumentsReachBackend(t *testing.T) {
	fb := newFakeBackend(t)
	for i := int64(1); i <= 3; i++ {
		fb.add(tasks.Task{ID: i, Title: "t", Priority: "Low", UserID: "alice"})
	}
	fb.add(tasks.Task{ID: 9007199254740991, Title: "big", Priority: "Low", UserID: "alice"})
	cs := connect(t, testSettings(fb.srv.URL), tasks.Options{})
	for _, tt := range validCases {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args), Meta: map[string]any{"user_id": "alice"}})
		if err != nil {
			t.Fatal(err)
		}
		wantOK(t, res)
	}
}

func FuzzValidate(f *testing.F) {
	for _, tt := range validationCases {
		f.Add(tt.tool, tt.args)
	}
	for _, tt := range validCases {
		f.Add(tt.tool, tt.args)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		fe, ok := tasks.Validate(tool, json.RawMessage(args))
		if !ok {
			return
		}
		if fe != nil {
			if len(fe.Fields) == 0 {
				t.Errorf("validation error without fields for %s %q", tool, args)
			}
			if _, err := json.Marshal(fe); err != nil {
				t.Errorf("marshal: %v", err)
			}
		}
	})
}
