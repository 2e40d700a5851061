package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskwire"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// maxTitleLen is the longest title, in characters.
const maxTitleLen = 200

// fieldSuggestions are the per-field corrections shown to the AI.
var fieldSuggestions = map[string]string{
	"title":       "Provide a task title (1-200 characters)",
	"description": "Provide the description as a string, or null to clear it",
	"priority":    "Use one of: Low, Medium, High, Urgent",
	"due_date":    "Use ISO 8601 format: 2025-12-20T10:00:00Z",
	"task_id":     "Use the positive integer id of a task from list_tasks",
	"completed":   "Completion is changed with mark_task_completed, not update_task",
}

// failureMessages are the top-level validation messages, per tool.
var failureMessages = map[string]string{
	ToolListTasks:         "Listing tasks failed due to invalid input",
	ToolCreateTask:        "Task creation failed due to invalid input",
	ToolUpdateTask:        "Task update failed due to invalid input",
	ToolDeleteTask:        "Task deletion failed due to invalid input",
	ToolMarkTaskCompleted: "Marking the task completed failed due to invalid input",
}

// createParams are create_task's validated arguments.
type createParams struct {
	Title       string  `json:"title"`
	Description *string `json:"description,omitempty"`
	Priority    string  `json:"priority"`
	DueDate     *string `json:"due_date,omitempty"`
}

// updateParams are update_task's validated arguments. Body holds only the
// fields to change; a nil value clears the field.
type updateParams struct {
	TaskID int64
	Body   map[string]any
}

// args checks one tool call's arguments, collecting every problem.
type args struct {
	tool   string
	vals   map[string]json.RawMessage
	fields []fault.FieldDetail
}

// parseArgs decodes raw as a JSON object with only the allowed keys.
func parseArgs(tool string, raw json.RawMessage, allowed ...string) *args {
	a := &args{tool: tool, vals: map[string]json.RawMessage{}}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return a
	}
	if err := json.Unmarshal(raw, &a.vals); err != nil {
		a.fields = append(a.fields, fault.FieldDetail{
			Field:         "arguments",
			Message:       "Arguments must be a JSON object",
			ReceivedValue: display(raw),
			Suggestion:    "Pass the parameters as an object, e.g. {\"task_id\": 1}",
		})
		return a
	}
	keys := make([]string, 0, len(a.vals))
	for k := range a.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(allowed, k) {
			continue
		}
		sugg := fieldSuggestions["completed"]
		if k != "completed" {
			sugg = "Remove it"
			if len(allowed) > 0 {
				sugg += "; the parameters are: " + strings.Join(allowed, ", ")
			}
		}
		a.fields = append(a.fields, fault.FieldDetail{
			Field:         k,
			Message:       fmt.Sprintf("%s is not a parameter of %s", k, tool),
			ReceivedValue: display(a.vals[k]),
			Suggestion:    sugg,
		})
	}
	return a
}

// fail records a problem with field.
func (a *args) fail(field, msg string) {
	a.fields = append(a.fields, fault.FieldDetail{
		Field:         field,
		Message:       msg,
		ReceivedValue: display(a.vals[field]),
		Suggestion:    fieldSuggestions[field],
	})
}

// err returns the collected problems as a validation error, or nil.
func (a *args) err() *fault.Error {
	if len(a.fields) == 0 {
		return nil
	}
	e := fault.New(fault.Validation, "%s", failureMessages[a.tool])
	e.Fields = a.fields
	for _, f := range a.fields {
		if f.Suggestion != "" && !slices.Contains(e.Suggestions, f.Suggestion) {
			e.Suggestions = append(e.Suggestions, f.Suggestion)
		}
	}
	return e
}

// has reports whether the field was given, and whether it was null.
func (a *args) has(field string) (present, null bool) {
	v, ok := a.vals[field]
	return ok, ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// str returns a string field; ok is false if it is absent, null or invalid.
func (a *args) str(field string) (s string, ok bool) {
	present, null := a.has(field)
	if !present || null {
		return "", false
	}
	if err := json.Unmarshal(a.vals[field], &s); err != nil {
		a.fail(field, fmt.Sprintf("%s must be a string", field))
		return "", false
	}
	return s, true
}

// title checks a title; ok is false if it is absent, null or invalid.
func (a *args) title() (string, bool) {
	s, ok := a.str("title")
	if !ok {
		return "", false
	}
	switch n := utf8.RuneCountInString(s); {
	case taskwire.TextProblem(s) != "":
		a.fail("title", "Title "+taskwire.TextProblem(s))
		return "", false
	case strings.TrimSpace(s) == "":
		a.fail("title", "Title cannot be empty")
		return "", false
	case n > maxTitleLen:
		a.fail("title", fmt.Sprintf("Title must be at most %d characters (got %d)", maxTitleLen, n))
		return "", false
	}
	return s, true
}

// priority checks a priority level.
func (a *args) priority() (string, bool) {
	s, ok := a.str("priority")
	if ok && !slices.Contains(Priorities, s) {
		a.fail("priority", "Priority must be one of Low, Medium, High, Urgent")
		return "", false
	}
	return s, ok
}

// description checks a description; ok is false if it is absent, null or
// invalid.
func (a *args) description() (string, bool) {
	s, ok := a.str("description")
	if ok && taskwire.TextProblem(s) != "" {
		a.fail("description", "Description "+taskwire.TextProblem(s))
		return "", false
	}
	return s, ok
}

// dueDate checks an ISO 8601 due date, accepting exactly the forms the
// reference backend accepts ([taskwire.ParseDueDate]). The value is sent
// to the backend as given.
func (a *args) dueDate() (string, bool) {
	s, ok := a.str("due_date")
	if !ok {
		return "", false
	}
	if _, ok := taskwire.ParseDueDate(s); !ok {
		a.fail("due_date", "Invalid datetime format")
		return "", false
	}
	return s, true
}

// taskID checks the required, positive integer task_id.
func (a *args) taskID() int64 {
	present, null := a.has("task_id")
	if !present || null {
		a.fail("task_id", "task_id is required")
		return 0
	}
	var f float64
	if err := json.Unmarshal(a.vals["task_id"], &f); err != nil {
		a.fail("task_id", "task_id must be an integer")
		return 0
	}
	if f != math.Trunc(f) || f > math.MaxInt64 || f < math.MinInt64 {
		a.fail("task_id", "task_id must be an integer")
		return 0
	}
	if f <= 0 {
		a.fail("task_id", "task_id must be greater than 0")
		return 0
	}
	var n int64
	if err := json.Unmarshal(a.vals["task_id"], &n); err != nil {
		n = int64(f) // e.g. 42.0
	}
	return n
}

// validateList checks list_tasks' (empty) arguments.
func validateList(raw json.RawMessage) *fault.Error {
	return parseArgs(ToolListTasks, raw).err()
}

// validateCreate checks create_task's arguments.
func validateCreate(raw json.RawMessage) (createParams, *fault.Error) {
	a := parseArgs(ToolCreateTask, raw, "title", "description", "priority", "due_date")
	p := createParams{Priority: "Medium"}
	if present, null := a.has("title"); !present || null {
		a.fail("title", "Title is required")
	} else {
		p.Title, _ = a.title()
	}
	if s, ok := a.description(); ok {
		p.Description = &s
	}
	if present, null := a.has("priority"); present && null {
		a.fail("priority", "Priority cannot be null; omit it to use Medium")
	} else if s, ok := a.priority(); ok {
		p.Priority = s
	}
	if s, ok := a.dueDate(); ok {
		p.DueDate = &s
	}
	return p, a.err()
}

// validateUpdate checks update_task's arguments.
func validateUpdate(raw json.RawMessage) (updateParams, *fault.Error) {
	a := parseArgs(ToolUpdateTask, raw, "task_id", "title", "description", "priority", "due_date")
	p := updateParams{TaskID: a.taskID(), Body: map[string]any{}}
	if present, null := a.has("title"); present && null {
		a.fail("title", "Title cannot be null; omit it to keep the current title")
	} else if s, ok := a.title(); ok {
		p.Body["title"] = s
	}
	if present, null := a.has("description"); null {
		p.Body["description"] = nil
	} else if s, ok := a.description(); present && ok {
		p.Body["description"] = s
	}
	if present, null := a.has("priority"); present && null {
		a.fail("priority", "Priority cannot be null; omit it to keep the current priority")
	} else if s, ok := a.priority(); ok {
		p.Body["priority"] = s
	}
	if _, null := a.has("due_date"); null {
		p.Body["due_date"] = nil
	} else if s, ok := a.dueDate(); ok {
		p.Body["due_date"] = s
	}
	if len(a.fields) == 0 && len(p.Body) == 0 {
		a.fields = append(a.fields, fault.FieldDetail{
			Field:      "arguments",
			Message:    "Nothing to update",
			Suggestion: "Pass at least one of title, description, priority, due_date; use mark_task_completed to complete a task",
		})
	}
	return p, a.err()
}

// validateTaskID checks the arguments of a tool that takes only task_id.
func validateTaskID(tool string, raw json.RawMessage) (int64, *fault.Error) {
	a := parseArgs(tool, raw, "task_id")
	id := a.taskID()
	return id, a.err()
}

// display renders a received JSON value for an error: strings unquoted,
// anything else as JSON, truncated.
func display(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var s string
	if t := bytes.TrimSpace(raw); bytes.Equal(t, []byte("null")) {
		return "null"
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		s = string(bytes.TrimSpace(raw))
	}
	const max = 100
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return s
}
