package taskapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskwire"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Request bodies are decoded field by field, so that every problem is
// reported at once: a wrong type in one field does not hide a bad value in
// another.

// Suggestions shown for invalid fields.
const (
	suggestTitle    = "Provide a task title (1-200 characters)"
	suggestPriority = "Use one of: Low, Medium, High, Urgent"
	suggestDueDate  = "Use ISO 8601 format: 2025-12-20T10:00:00Z"
	suggestDesc     = "Send the description as a string, or null to clear it"
	suggestBody     = "Send a JSON object, e.g. {\"title\": \"Buy milk\"}"
)

// receivedLimit is how much of a rejected value an error repeats.
const receivedLimit = 100

// fieldErrors collects the problems of one request.
type fieldErrors []fault.FieldDetail

func (f *fieldErrors) add(field, msg, received, suggestion string) {
	*f = append(*f, fault.FieldDetail{Field: field, Message: msg, ReceivedValue: received, Suggestion: suggestion})
}

// validationFailed is the 422 error for fields.
func validationFailed(msg string, fields []fault.FieldDetail) error {
	e := fault.New(fault.Validation, "%s", msg)
	e.Fields = fields
	for _, f := range fields {
		if f.Suggestion != "" && !slices.Contains(e.Suggestions, f.Suggestion) {
			e.Suggestions = append(e.Suggestions, f.Suggestion)
		}
	}
	return e
}

// joinValidation merges the field problems of errs into one validation
// error. Any error that is not a validation error wins as it is.
func joinValidation(msg string, errs ...error) error {
	var fields []fault.FieldDetail
	for _, err := range errs {
		if err == nil {
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Validation {
			return err
		}
		fields = append(fields, fe.Fields...)
	}
	if len(fields) == 0 {
		return nil
	}
	return validationFailed(msg, fields)
}

// shorten is s as repeated in an error: at most receivedLimit characters.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= receivedLimit {
		return s
	}
	r := []rune(s)
	return string(r[:receivedLimit]) + "…"
}

// readObject reads the body of r as a JSON object, limited to
// MaxBodyBytes.
func readObject(w http.ResponseWriter, r *http.Request, what string) (map[string]json.RawMessage, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, fault.New(fault.LimitExceeded, "the request body is larger than %d bytes (1 MiB)", MaxBodyBytes).
				WithSuggestions("send a smaller request; descriptions are meant to be short")
		}
		return nil, fault.Wrap(fault.Validation, err, "%s failed: the request body could not be read", what)
	}
	body := func(msg, received string) error {
		return validationFailed(what+" failed due to invalid input", []fault.FieldDetail{{
			Field: "body", Message: msg, ReceivedValue: received, Suggestion: suggestBody}})
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, body("the request body is empty", "")
	}
	if !json.Valid(data) {
		var syn *json.SyntaxError
		msg := "malformed JSON"
		if err := json.Unmarshal(data, new(any)); errors.As(err, &syn) {
			msg = fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, syn)
		}
		return nil, body(msg, shorten(string(data)))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, body("the request body must be a JSON object", shorten(string(data)))
	}
	return m, nil
}

// fieldReader reads the fields of one request object.
type fieldReader struct {
	obj   map[string]json.RawMessage
	known []string
	errs  fieldErrors
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// str reads field as a string. ok is false when it is absent, null, or
// not a string (reported, with nullable saying whether null is allowed).
func (f *fieldReader) str(field string, nullable bool, suggestion string) (s string, present, null, ok bool) {
	f.known = append(f.known, field)
	raw, present := f.obj[field]
	if !present {
		return "", false, false, false
	}
	if isNull(raw) {
		if !nullable {
			f.errs.add(field, field+" cannot be null", "null", suggestion)
		}
		return "", true, true, false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		f.errs.add(field, field+" must be a string", shorten(string(raw)), suggestion)
		return "", true, false, false
	}
	return s, true, false, true
}

func (f *fieldReader) title(required bool) *string {
	s, present, _, ok := f.str("title", false, suggestTitle)
	switch {
	case !present && required:
		f.errs.add("title", "title is required", "", suggestTitle)
	case !ok:
	case taskwire.TextProblem(s) != "":
		f.errs.add("title", "Title "+taskwire.TextProblem(s), shorten(s), suggestTitle)
	case strings.TrimSpace(s) == "":
		f.errs = append(f.errs, fault.FieldDetail{Field: "title", Message: "Title cannot be empty",
			ReceivedValue: s, Received: true, Suggestion: suggestTitle})
	case utf8.RuneCountInString(s) > store.MaxTitleLength:
		f.errs.add("title", fmt.Sprintf("Title is too long: %d characters, at most %d allowed",
			utf8.RuneCountInString(s), store.MaxTitleLength), shorten(s), "Shorten the title to at most 200 characters")
	default:
		return &s
	}
	return nil
}

func (f *fieldReader) priority() *store.Priority {
	s, _, _, ok := f.str("priority", false, suggestPriority)
	if !ok {
		return nil
	}
	p := store.Priority(s)
	if p.Valid() {
		return &p
	}
	suggestion := suggestPriority
	for _, v := range store.Priorities() {
		if strings.EqualFold(s, string(v)) {
			suggestion = fmt.Sprintf("Use %q: priorities are case-sensitive (Low, Medium, High, Urgent)", v)
		}
	}
	f.errs.add("priority", "Invalid priority: must be one of Low, Medium, High, Urgent", shorten(s), suggestion)
	return nil
}

func (f *fieldReader) description() store.Change[string] {
	s, present, null, ok := f.str("description", true, suggestDesc)
	switch {
	case ok && taskwire.TextProblem(s) != "":
		f.errs.add("description", "Description "+taskwire.TextProblem(s), shorten(s), suggestDesc)
		return store.Change[string]{}
	case ok:
		return store.Change[string]{Set: true, Value: &s}
	case null:
		return store.Change[string]{Set: true}
	case present:
		return store.Change[string]{} // reported
	}
	return store.Change[string]{}
}

func (f *fieldReader) dueDate() store.Change[time.Time] {
	s, _, null, ok := f.str("due_date", true, suggestDueDate)
	switch {
	case null:
		return store.Change[time.Time]{Set: true}
	case !ok:
		return store.Change[time.Time]{}
	}
	if t, ok := taskwire.ParseDueDate(s); ok {
		return store.Change[time.Time]{Set: true, Value: &t}
	}
	f.errs.add("due_date", "Invalid datetime format", shorten(s), suggestDueDate)
	return store.Change[time.Time]{}
}

// unknown reports the fields that were not read, in name order.
func (f *fieldReader) unknown(hint func(field string) string) {
	var names []string
	for name := range f.obj {
		if !slices.Contains(f.known, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		f.errs.add(shorten(name), "unknown field", shorten(string(f.obj[name])), hint(name))
	}
}

func taskFieldsHint(field string) string {
	if field == "completed" {
		return "Change completion with PATCH /tasks/{id} and {\"completed\": true}"
	}
	return "Remove it; the fields are title, description, priority and due_date"
}

// decodeCreate reads the body of POST /tasks.
func decodeCreate(w http.ResponseWriter, r *http.Request) (store.NewTask, error) {
	const what = "Task creation"
	obj, err := readObject(w, r, what)
	if err != nil {
		return store.NewTask{}, err
	}
	f := fieldReader{obj: obj}
	var t store.NewTask
	if title := f.title(true); title != nil {
		t.Title = *title
	}
	t.Description = f.description().Value
	if p := f.priority(); p != nil {
		t.Priority = *p
	}
	t.DueDate = f.dueDate().Value
	f.unknown(taskFieldsHint)
	if len(f.errs) > 0 {
		return store.NewTask{}, validationFailed(what+" failed due to invalid input", f.errs)
	}
	return t, nil
}

// decodeUpdate reads the body of PUT /tasks/{id}.
func decodeUpdate(w http.ResponseWriter, r *http.Request) (store.TaskUpdate, error) {
	const what = "Task update"
	obj, err := readObject(w, r, what)
	if err != nil {
		return store.TaskUpdate{}, err
	}
	f := fieldReader{obj: obj}
	u := store.TaskUpdate{
		Title:       f.title(false),
		Description: f.description(),
		Priority:    f.priority(),
		DueDate:     f.dueDate(),
	}
	f.unknown(taskFieldsHint)
	if len(f.errs) > 0 {
		return store.TaskUpdate{}, validationFailed(what+" failed due to invalid input", f.errs)
	}
	return u, nil
}

// decodeCompletion reads the body of PATCH /tasks/{id}.
func decodeCompletion(w http.ResponseWriter, r *http.Request) (bool, error) {
	const what = "Task completion update"
	obj, err := readObject(w, r, what)
	if err != nil {
		return false, err
	}
	const suggestion = "Send {\"completed\": true} or {\"completed\": false}"
	f := fieldReader{obj: obj, known: []string{"completed"}}
	var completed bool
	raw, ok := obj["completed"]
	switch {
	case !ok:
		f.errs.add("completed", "completed is required", "", suggestion)
	case json.Unmarshal(raw, &completed) != nil || isNull(raw):
		f.errs.add("completed", "completed must be true or false", shorten(string(raw)), suggestion)
	}
	f.unknown(func(string) string {
		return "Remove it; PATCH only changes completion: use PUT /tasks/{id} for other fields"
	})
	if len(f.errs) > 0 {
		return false, validationFailed(what+" failed due to invalid input", f.errs)
	}
	return completed, nil
}
