package taskapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/store"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
)

const testToken = "s3cret-service-token"

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	t    *testing.T
	url  string
	logs *syncBuffer
}

// newTestServer serves the API over a real SQLite file, or over ts when
// given.
func newTestServer(t *testing.T, ts store.TaskStore) *testServer {
	t.Helper()
	if ts == nil {
		db, err := store.OpenTasks(context.Background(), filepath.Join(t.TempDir(), "tasks.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		ts = db
	}
	logs := &syncBuffer{}
	h, err := taskapi.NewHandler(taskapi.Options{Store: ts, ServiceToken: testToken, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testServer{t: t, url: srv.URL, logs: logs}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic value.
func (r response) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("response body %q is not JSON: %v", r.body, err)
	}
	return v
}

func (r response) obj(t *testing.T) map[string]any {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		t.Fatalf("response body %s is not a JSON object", r.body)
	}
	return m
}

// do sends a request as user (with the right token); user "" sends no
// X-User-ID.
func (s *testServer) do(user, method, path, body string) response {
	return s.doWith(map[string]string{"Authorization": "Bearer " + testToken, "X-User-ID": user}, method, path, body)
}

func (s *testServer) doWith(headers map[string]string, method, path, body string) response {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, data}
}

// expect checks the status and returns the response.
func (s *testServer) expect(want int, user, method, path, body string) response {
	s.t.Helper()
	r := s.do(user, method, path, body)
	if r.status != want {
		s.t.Fatalf("%s %s: got status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	return r
}

// create makes a task for user and returns its ID.
func (s *testServer) create(user, body string) string {
	s.t.Helper()
	m := s.expect(http.StatusCreated, user, "POST", "/tasks", body).obj(s.t)
	return jsonNumber(m["id"])
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestNewHandlerNeedsTokenAndStore(t *testing.T) {
	if _, err := taskapi.NewHandler(taskapi.Options{Store: &fakeStore{}}); err == nil {
		t.Error("NewHandler without a token: got no error")
	}
	if _, err := taskapi.NewHandler(taskapi.Options{ServiceToken: "x"}); err == nil {
		t.Error("NewHandler without a store: got no error")
	}
}

func TestTaskLifecycle(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		before := time.Now().UTC().Add(-time.Second)

		// Create: defaults filled in, 201 with Location.
		r := s.expect(http.StatusCreated, "alice", "POST", "/tasks", `{"title":"Buy milk"}`)
		got := r.obj(t)
		id := jsonNumber(got["id"])
		if loc := r.header.Get("Location"); loc != "/tasks/"+id {
			t.Errorf("Location: got %q, want %q", loc, "/tasks/"+id)
		}
		created, err := time.Parse(time.RFC3339Nano, got["created_at"].(string))
		if err != nil || created.Before(before) || !strings.HasSuffix(got["created_at"].(string), "Z") {
			t.Errorf("created_at: got %v (%v), want a recent RFC 3339 UTC time", got["created_at"], err)
		}
		want := map[string]any{
			"id": got["id"], "title": "Buy milk", "description": nil, "completed": false, "priority": "Medium",
			"due_date": nil, "created_at": got["created_at"], "updated_at": got["created_at"], "user_id": "alice",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("created task (-want +got):\n%s", diff)
		}

		// Create with every field; the due date comes back in UTC.
		full := s.expect(http.StatusCreated, "alice", "POST", "/tasks",
			`{"title":"Report","description":"Q3","priority":"Urgent","due_date":"2025-12-20T11:00:00+01:00"}`).obj(t)
		if full["due_date"] != "2025-12-20T10:00:00Z" || full["description"] != "Q3" || full["priority"] != "Urgent" {
			t.Errorf("created task with every field: got %v", full)
		}
		fullID := jsonNumber(full["id"])

		// Get.
		if diff := cmp.Diff(want, s.expect(http.StatusOK, "alice", "GET", "/tasks/"+id, "").obj(t)); diff != "" {
			t.Errorf("GET /tasks/%s (-want +got):\n%s", id, diff)
		}

		// List: newest first.
		list := s.expect(http.StatusOK, "alice", "GET", "/tasks", "").json(t).([]any)
		if len(list) != 2 || jsonNumber(list[0].(map[string]any)["id"]) != fullID {
			t.Errorf("GET /tasks: got %v, want the two tasks, newest (%s) first", list, fullID)
		}

		// PUT: given fields change, absent ones are kept.
		upd := s.expect(http.StatusOK, "alice", "PUT", "/tasks/"+fullID, `{"title":"Report v2","priority":"Low"}`).obj(t)
		if upd["title"] != "Report v2" || upd["priority"] != "Low" || upd["description"] != "Q3" ||
			upd["due_date"] != "2025-12-20T10:00:00Z" || upd["completed"] != false {
			t.Errorf("after PUT: got %v, want title and priority changed, the rest kept", upd)
		}
		// PUT with null clears description and due date.
		upd = s.expect(http.StatusOK, "alice", "PUT", "/tasks/"+fullID, `{"description":null,"due_date":null}`).obj(t)
		if upd["description"] != nil || upd["due_date"] != nil || upd["title"] != "Report v2" {
			t.Errorf("after PUT with nulls: got %v, want description and due_date null, title kept", upd)
		}
		// PUT with a date alone: midnight UTC.
		upd = s.expect(http.StatusOK, "alice", "PUT", "/tasks/"+fullID, `{"due_date":"2026-01-31"}`).obj(t)
		if upd["due_date"] != "2026-01-31T00:00:00Z" {
			t.Errorf("due_date from a date: got %v, want 2026-01-31T00:00:00Z", upd["due_date"])
		}

		// Without a zone: UTC.
		upd = s.expect(http.StatusOK, "alice", "PUT", "/tasks/"+fullID, `{"due_date":"2026-01-31T08:00:00.25"}`).obj(t)
		if upd["due_date"] != "2026-01-31T08:00:00.25Z" {
			t.Errorf("due_date without a zone: got %v, want 2026-01-31T08:00:00.25Z", upd["due_date"])
		}

		// PATCH completes, and the list filter follows.
		done := s.expect(http.StatusOK, "alice", "PATCH", "/tasks/"+id, `{"completed":true}`).obj(t)
		if done["completed"] != true {
			t.Errorf("after PATCH: got completed %v, want true", done["completed"])
		}
		for q, wantID := range map[string]string{"true": id, "false": fullID} {
			l := s.expect(http.StatusOK, "alice", "GET", "/tasks?completed="+q, "").json(t).([]any)
			if len(l) != 1 || jsonNumber(l[0].(map[string]any)["id"]) != wantID {
				t.Errorf("GET /tasks?completed=%s: got %v, want only task %s", q, l, wantID)
			}
		}
		undone := s.expect(http.StatusOK, "alice", "PATCH", "/tasks/"+id, `{"completed":false}`).obj(t)
		if undone["completed"] != false {
			t.Errorf("after PATCH false: got completed %v", undone["completed"])
		}

		// DELETE: 204 with no body, then 404.
		r = s.expect(http.StatusNoContent, "alice", "DELETE", "/tasks/"+id, "")
		if len(r.body) != 0 {
			t.Errorf("DELETE body: got %q, want none", r.body)
		}
		s.expect(http.StatusNotFound, "alice", "GET", "/tasks/"+id, "")
		s.expect(http.StatusNotFound, "alice", "DELETE", "/tasks/"+id, "")

		// An empty list is [], not null.
		s.expect(http.StatusNoContent, "alice", "DELETE", "/tasks/"+fullID, "")
		if r := s.expect(http.StatusOK, "alice", "GET", "/tasks", ""); strings.TrimSpace(string(r.body)) != "[]" {
			t.Errorf("empty list: got %s, want []", r.body)
		}
	})
}

func TestAuthentication(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		for _, tc := range []struct {
			name    string
			headers map[string]string
			want    int
			message string
		}{
			{"no token", map[string]string{"X-User-ID": "alice"}, 401, "missing service token"},
			{"wrong token", map[string]string{"Authorization": "Bearer nope", "X-User-ID": "alice"}, 401, "invalid service token"},
			{"token prefix", map[string]string{"Authorization": "Bearer " + testToken[:5], "X-User-ID": "alice"}, 401, "invalid service token"},
			{"basic scheme", map[string]string{"Authorization": "Basic " + testToken, "X-User-ID": "alice"}, 401, "missing service token"},
			{"no user", map[string]string{"Authorization": "Bearer " + testToken}, 401, "missing user: the X-User-ID header is required"},
			{"user too long", map[string]string{"Authorization": "Bearer " + testToken, "X-User-ID": strings.Repeat("u", 201)}, 401,
				"invalid user: the X-User-ID header is longer than 200 characters"},
			{"user of 200", map[string]string{"Authorization": "Bearer " + testToken, "X-User-ID": strings.Repeat("u", 200)}, 200, ""},
			{"lower-case scheme", map[string]string{"Authorization": "bearer " + testToken, "X-User-ID": "alice"}, 200, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, path := range []string{"/tasks", "/tasks/1"} {
					r := s.doWith(tc.headers, "GET", path, "")
					if path == "/tasks/1" && tc.want == 200 {
						tc.want = 404 // authenticated; no such task
					}
					if r.status != tc.want {
						t.Fatalf("GET %s: got status %d, want %d; body %s", path, r.status, tc.want, r.body)
					}
					if tc.want != 401 {
						continue
					}
					m := r.obj(t)
					if m["error_type"] != "authentication_error" || m["message"] != tc.message {
						t.Errorf("GET %s: got %v, want authentication_error %q", path, m, tc.message)
					}
					if r.header.Get("WWW-Authenticate") == "" {
						t.Errorf("GET %s: no WWW-Authenticate header on 401", path)
					}
				}
			})
		}
		// Authentication comes before validation: a bad ID or body without a
		// token is still 401.
		r := s.doWith(map[string]string{"X-User-ID": "alice"}, "PUT", "/tasks/abc", `{`)
		if r.status != 401 {
			t.Errorf("unauthenticated PUT with bad input: got status %d, want 401", r.status)
		}
	})
}

func TestUsersAreIsolated(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		id := s.create("alice", `{"title":"alice's","description":"private"}`)
		orig := s.expect(http.StatusOK, "alice", "GET", "/tasks/"+id, "").obj(t)

		for _, req := range []struct{ method, body string }{
			{"GET", ""}, {"PUT", `{"title":"mine now"}`}, {"PUT", `{}`}, {"PATCH", `{"completed":true}`}, {"DELETE", ""},
		} {
			r := s.expect(http.StatusNotFound, "bob", req.method, "/tasks/"+id, req.body)
			// The same answer as for a task that does not exist.
			missing := s.expect(http.StatusNotFound, "bob", req.method, "/tasks/999999", req.body).obj(t)
			m := r.obj(t)
			if m["error_type"] != "not_found_error" {
				t.Errorf("bob %s /tasks/%s: got %v, want not_found_error", req.method, id, m)
			}
			if m["message"] != strings.Replace(missing["message"].(string), "999999", id, 1) {
				t.Errorf("bob %s: message %q differs from a missing task's %q", req.method, m["message"], missing["message"])
			}
		}
		if l := s.expect(http.StatusOK, "bob", "GET", "/tasks", "").json(t).([]any); len(l) != 0 {
			t.Errorf("bob's list: got %v, want empty", l)
		}
		bobs := s.create("bob", `{"title":"bob's"}`)
		if l := s.expect(http.StatusOK, "alice", "GET", "/tasks", "").json(t).([]any); len(l) != 1 {
			t.Errorf("alice's list: got %v, want only her task", l)
		}
		if diff := cmp.Diff(orig, s.expect(http.StatusOK, "alice", "GET", "/tasks/"+id, "").obj(t)); diff != "" {
			t.Errorf("bob changed alice's task (-want +got):\n%s", diff)
		}
		s.expect(http.StatusNotFound, "alice", "GET", "/tasks/"+bobs, "")
	})
}

func TestNotFoundMessage(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		got := s.expect(http.StatusNotFound, "alice", "GET", "/tasks/42", "").obj(t)
		want := map[string]any{
			"error_type":  "not_found_error",
			"message":     "no task 42",
			"suggestions": []any{"list your tasks to find the task's ID"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("404 body (-want +got):\n%s", diff)
		}
	})
}

// field is a details.fields entry as the client sees it.
type field map[string]any

// fdEmpty is a field detail whose received value was the empty string:
// seed 002 shows it as "received_value": "".
func fdEmpty(name, msg, suggestion string) field {
	f := fd(name, msg, "", suggestion)
	f["received_value"] = ""
	return f
}

func fd(name, msg, received, suggestion string) field {
	f := field{"field": name, "message": msg}
	if received != "" {
		f["received_value"] = received
	}
	if suggestion != "" {
		f["suggestion"] = suggestion
	}
	return f
}

func TestValidation(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		id := s.create("alice", `{"title":"t"}`)
		long := strings.Repeat("x", 201)
		const (
			bodyHint = "Send a JSON object, e.g. {\"title\": \"Buy milk\"}"
			doneHint = "Send {\"completed\": true} or {\"completed\": false}"
			idHint   = "use the id of a task from GET /tasks"
		)
		for _, tc := range []struct {
			name, method, path, body string
			message                  string
			fields                   []field
		}{
			{"empty title", "POST", "/tasks", `{"title":""}`, "Task creation failed due to invalid input",
				[]field{fdEmpty("title", "Title cannot be empty", taskapi.SuggestTitle)}},
			{"blank title", "POST", "/tasks", `{"title":"   "}`, "Task creation failed due to invalid input",
				[]field{fd("title", "Title cannot be empty", "   ", taskapi.SuggestTitle)}},
			{"NUL title", "POST", "/tasks", `{"title":"\u0000"}`, "Task creation failed due to invalid input",
				[]field{fd("title", "Title must not contain NUL characters (U+0000)", "\x00", taskapi.SuggestTitle)}},
			{"NUL inside title", "POST", "/tasks", `{"title":"a\u0000b"}`, "Task creation failed due to invalid input",
				[]field{fd("title", "Title must not contain NUL characters (U+0000)", "a\x00b", taskapi.SuggestTitle)}},
			{"NUL description", "POST", "/tasks", `{"title":"t","description":"p\u0000q"}`, "Task creation failed due to invalid input",
				[]field{fd("description", "Description must not contain NUL characters (U+0000)", "p\x00q", taskapi.SuggestDesc)}},
			{"update NUL title and description", "PUT", "/tasks/" + id, `{"title":"\u0000\u0000","description":"\u0000"}`,
				"Task update failed due to invalid input", []field{
					fd("title", "Title must not contain NUL characters (U+0000)", "\x00\x00", taskapi.SuggestTitle),
					fd("description", "Description must not contain NUL characters (U+0000)", "\x00", taskapi.SuggestDesc),
				}},
			{"missing title", "POST", "/tasks", `{"priority":"High"}`, "Task creation failed due to invalid input",
				[]field{fd("title", "title is required", "", taskapi.SuggestTitle)}},
			{"null title", "POST", "/tasks", `{"title":null}`, "Task creation failed due to invalid input",
				[]field{fd("title", "title cannot be null", "null", taskapi.SuggestTitle)}},
			{"long title", "POST", "/tasks", `{"title":"` + long + `"}`, "Task creation failed due to invalid input",
				[]field{fd("title", "Title is too long: 201 characters, at most 200 allowed", long[:100]+"…",
					"Shorten the title to at most 200 characters")}},
			{"bad priority", "POST", "/tasks", `{"title":"t","priority":"Whenever"}`, "Task creation failed due to invalid input",
				[]field{fd("priority", "Invalid priority: must be one of Low, Medium, High, Urgent", "Whenever", taskapi.SuggestPriority)}},
			{"priority case", "POST", "/tasks", `{"title":"t","priority":"high"}`, "Task creation failed due to invalid input",
				[]field{fd("priority", "Invalid priority: must be one of Low, Medium, High, Urgent", "high",
					`Use "High": priorities are case-sensitive (Low, Medium, High, Urgent)`)}},
			{"null priority", "POST", "/tasks", `{"title":"t","priority":null}`, "Task creation failed due to invalid input",
				[]field{fd("priority", "priority cannot be null", "null", taskapi.SuggestPriority)}},
			{"bad due date", "POST", "/tasks", `{"title":"t","due_date":"tomorrow"}`, "Task creation failed due to invalid input",
				[]field{fd("due_date", "Invalid datetime format", "tomorrow", taskapi.SuggestDueDate)}},
			{"wrong types", "POST", "/tasks", `{"title":5,"description":["a"],"priority":1,"due_date":true}`,
				"Task creation failed due to invalid input", []field{
					fd("title", "title must be a string", "5", taskapi.SuggestTitle),
					fd("description", "description must be a string", `["a"]`, taskapi.SuggestDesc),
					fd("priority", "priority must be a string", "1", taskapi.SuggestPriority),
					fd("due_date", "due_date must be a string", "true", taskapi.SuggestDueDate),
				}},
			{"everything at once", "POST", "/tasks", `{"title":"","priority":"x","due_date":"tomorrow","color":"red","completed":true}`,
				"Task creation failed due to invalid input", []field{
					fdEmpty("title", "Title cannot be empty", taskapi.SuggestTitle),
					fd("priority", "Invalid priority: must be one of Low, Medium, High, Urgent", "x", taskapi.SuggestPriority),
					fd("due_date", "Invalid datetime format", "tomorrow", taskapi.SuggestDueDate),
					fd("color", "unknown field", `"red"`, "Remove it; the fields are title, description, priority and due_date"),
					fd("completed", "unknown field", "true", "Change completion with PATCH /tasks/{id} and {\"completed\": true}"),
				}},
			{"malformed JSON", "POST", "/tasks", `{"title":`, "Task creation failed due to invalid input",
				[]field{fd("body", "malformed JSON at byte 9: unexpected end of JSON input", `{"title":`, bodyHint)}},
			{"malformed JSON at a byte", "POST", "/tasks", `{"title" "x"}`, "Task creation failed due to invalid input",
				[]field{fd("body", "malformed JSON at byte 10: invalid character '\"' after object key", `{"title" "x"}`, bodyHint)}},
			{"array body", "POST", "/tasks", `[1]`, "Task creation failed due to invalid input",
				[]field{fd("body", "the request body must be a JSON object", "[1]", bodyHint)}},
			{"null body", "POST", "/tasks", `null`, "Task creation failed due to invalid input",
				[]field{fd("body", "the request body must be a JSON object", "null", bodyHint)}},
			{"empty body", "POST", "/tasks", ``, "Task creation failed due to invalid input",
				[]field{fd("body", "the request body is empty", "", bodyHint)}},
			{"update bad fields", "PUT", "/tasks/" + id, `{"title":"","description":1,"due_date":"31/12/2025","completed":true}`,
				"Task update failed due to invalid input", []field{
					fdEmpty("title", "Title cannot be empty", taskapi.SuggestTitle),
					fd("description", "description must be a string", "1", taskapi.SuggestDesc),
					fd("due_date", "Invalid datetime format", "31/12/2025", taskapi.SuggestDueDate),
					fd("completed", "unknown field", "true", "Change completion with PATCH /tasks/{id} and {\"completed\": true}"),
				}},
			{"update null title", "PUT", "/tasks/" + id, `{"title":null}`, "Task update failed due to invalid input",
				[]field{fd("title", "title cannot be null", "null", taskapi.SuggestTitle)}},
			{"update bad id and body", "PUT", "/tasks/abc", `{"priority":"Soon"}`, "Task update failed due to invalid input",
				[]field{
					fd("id", "task ID must be a positive integer", "abc", idHint),
					fd("priority", "Invalid priority: must be one of Low, Medium, High, Urgent", "Soon", taskapi.SuggestPriority),
				}},
			{"patch missing completed", "PATCH", "/tasks/" + id, `{}`, "Task completion update failed due to invalid input",
				[]field{fd("completed", "completed is required", "", doneHint)}},
			{"patch wrong type", "PATCH", "/tasks/" + id, `{"completed":"yes"}`, "Task completion update failed due to invalid input",
				[]field{fd("completed", "completed must be true or false", `"yes"`, doneHint)}},
			{"patch null", "PATCH", "/tasks/" + id, `{"completed":null}`, "Task completion update failed due to invalid input",
				[]field{fd("completed", "completed must be true or false", "null", doneHint)}},
			{"patch other fields", "PATCH", "/tasks/" + id, `{"completed":true,"title":"x"}`, "Task completion update failed due to invalid input",
				[]field{fd("title", "unknown field", `"x"`, "Remove it; PATCH only changes completion: use PUT /tasks/{id} for other fields")}},
			{"patch bad id", "PATCH", "/tasks/0", `{"completed":true}`, "Task completion update failed due to invalid input",
				[]field{fd("id", "task ID must be a positive integer", "0", idHint)}},
			{"get negative id", "GET", "/tasks/-1", "", "Invalid task ID",
				[]field{fd("id", "task ID must be a positive integer", "-1", idHint)}},
			{"get huge id", "GET", "/tasks/99999999999999999999", "", "Invalid task ID",
				[]field{fd("id", "task ID must be a positive integer", "99999999999999999999", idHint)}},
			{"delete non-numeric id", "DELETE", "/tasks/1.5", "", "Invalid task ID",
				[]field{fd("id", "task ID must be a positive integer", "1.5", idHint)}},
			{"list bad filter", "GET", "/tasks?completed=yes", "", "Listing tasks failed due to invalid input",
				[]field{fd("completed", "completed must be true or false", "yes",
					"use ?completed=true or ?completed=false, or leave it out for all tasks")}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := s.expect(http.StatusUnprocessableEntity, "alice", tc.method, tc.path, tc.body)
				var got struct {
					ErrorType string `json:"error_type"`
					Message   string `json:"message"`
					Details   struct {
						Fields []field `json:"fields"`
					} `json:"details"`
					Suggestions []string `json:"suggestions"`
				}
				if err := json.Unmarshal(r.body, &got); err != nil {
					t.Fatal(err)
				}
				if got.ErrorType != "validation_error" || got.Message != tc.message {
					t.Errorf("got error_type %q, message %q; want validation_error, %q", got.ErrorType, got.Message, tc.message)
				}
				if diff := cmp.Diff(tc.fields, got.Details.Fields); diff != "" {
					t.Errorf("details.fields (-want +got):\n%s", diff)
				}
				// The suggestions gather the fields' suggestions, once each.
				var want []string
				for _, f := range tc.fields {
					if sg, _ := f["suggestion"].(string); sg != "" && !contains(want, sg) {
						want = append(want, sg)
					}
				}
				if diff := cmp.Diff(want, got.Suggestions); diff != "" {
					t.Errorf("suggestions (-want +got):\n%s", diff)
				}
			})
		}
		// Nothing was changed by the rejected requests.
		task := s.expect(http.StatusOK, "alice", "GET", "/tasks/"+id, "").obj(t)
		if task["title"] != "t" || task["completed"] != false {
			t.Errorf("task after rejected requests: got %v", task)
		}
		if l := s.expect(http.StatusOK, "alice", "GET", "/tasks", "").json(t).([]any); len(l) != 1 {
			t.Errorf("tasks after rejected creates: got %d, want 1", len(l))
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestValidationErrorShape(t *testing.T) {
	// Seed 002's example, whole.
	forEachStore(t, func(t *testing.T, s *testServer) {
		r := s.expect(http.StatusUnprocessableEntity, "alice", "POST", "/tasks", `{"title":"","due_date":"tomorrow"}`)
		want := map[string]any{
			"error_type": "validation_error",
			"message":    "Task creation failed due to invalid input",
			"details": map[string]any{"fields": []any{
				map[string]any{"field": "title", "message": "Title cannot be empty", "received_value": "", "suggestion": "Provide a task title (1-200 characters)"},
				map[string]any{"field": "due_date", "message": "Invalid datetime format", "received_value": "tomorrow",
					"suggestion": "Use ISO 8601 format: 2025-12-20T10:00:00Z"},
			}},
			"suggestions": []any{"Provide a task title (1-200 characters)", "Use ISO 8601 format: 2025-12-20T10:00:00Z"},
		}
		if diff := cmp.Diff(want, r.obj(t)); diff != "" {
			t.Errorf("422 body (-want +got):\n%s", diff)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type: got %q, want application/json", ct)
		}
	})
}

func TestBodyTooLarge(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		id := s.create("alice", `{"title":"t"}`)
		big := `{"title":"t","description":"` + strings.Repeat("a", taskapi.MaxBodyBytes) + `"}`
		for _, req := range []struct{ method, path string }{{"POST", "/tasks"}, {"PUT", "/tasks/" + id}, {"PATCH", "/tasks/" + id}} {
			m := s.expect(http.StatusRequestEntityTooLarge, "alice", req.method, req.path, big).obj(t)
			if m["error_type"] != "limit_exceeded_error" || m["message"] != "the request body is larger than 1048576 bytes (1 MiB)" {
				t.Errorf("%s %s: got %v, want limit_exceeded_error", req.method, req.path, m)
			}
		}
		// Just under the limit is fine.
		ok := `{"title":"t","description":"` + strings.Repeat("a", taskapi.MaxBodyBytes-40) + `"}`
		s.expect(http.StatusCreated, "alice", "POST", "/tasks", ok)
	})
}

func TestUnknownRoutes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		r := s.do("alice", "DELETE", "/tasks", "")
		if r.status != http.StatusMethodNotAllowed || r.obj(t)["error_type"] != "validation_error" {
			t.Errorf("DELETE /tasks: got %d %s, want 405 validation_error", r.status, r.body)
		}
		if allow := r.header.Get("Allow"); allow != "GET, POST" {
			t.Errorf("DELETE /tasks Allow: got %q, want %q", allow, "GET, POST")
		}
		r = s.do("alice", "POST", "/tasks/1", "{}")
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("POST /tasks/1: got %d, want 405", r.status)
		}
		for _, path := range []string{"/nope", "/tasks/1/extra"} {
			r = s.do("alice", "GET", path, "")
			if r.status != http.StatusNotFound || r.obj(t)["error_type"] != "not_found_error" {
				t.Errorf("GET %s: got %d %s, want 404 not_found_error", path, r.status, r.body)
			}
		}
	})
}

func TestHealthzAndOpenAPINeedNoToken(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		r := s.doWith(nil, "GET", "/healthz", "")
		if r.status != 200 || r.obj(t)["status"] != "ok" {
			t.Errorf("GET /healthz: got %d %s", r.status, r.body)
		}
		r = s.doWith(nil, "GET", "/openapi.json", "")
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("GET /openapi.json: got %d, Content-Type %q", r.status, r.header.Get("Content-Type"))
		}
	})
}

// fakeStore is a TaskStore whose methods are given by the test.
type fakeStore struct {
	list func(ctx context.Context, userID string, completed *bool) ([]store.Task, error)
}

var _ store.TaskStore = (*fakeStore)(nil)

var errFake = errors.New("disk on fire at /var/lib/secret")

func (f *fakeStore) List(ctx context.Context, userID string, completed *bool) ([]store.Task, error) {
	if f.list != nil {
		return f.list(ctx, userID, completed)
	}
	return nil, errFake
}

func (f *fakeStore) Create(context.Context, string, store.NewTask) (store.Task, error) {
	return store.Task{}, errFake
}

func (f *fakeStore) Get(context.Context, string, int64) (store.Task, error) {
	return store.Task{}, errFake
}

func (f *fakeStore) Update(context.Context, string, int64, store.TaskUpdate) (store.Task, error) {
	return store.Task{}, errFake
}

func (f *fakeStore) SetCompleted(context.Context, string, int64, bool) (store.Task, error) {
	return store.Task{}, errFake
}

func (f *fakeStore) Delete(context.Context, string, int64) error { return errFake }

func TestBackendError(t *testing.T) {
	s := newTestServer(t, &fakeStore{})
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/tasks", ""}, {"POST", "/tasks", `{"title":"t"}`}, {"GET", "/tasks/1", ""},
		{"PUT", "/tasks/1", `{}`}, {"PATCH", "/tasks/1", `{"completed":true}`}, {"DELETE", "/tasks/1", ""},
	} {
		r := s.expect(http.StatusInternalServerError, "alice", req.method, req.path, req.body)
		m := r.obj(t)
		if m["error_type"] != "backend_error" || m["message"] != "the task backend failed" {
			t.Errorf("%s %s: got %v, want backend_error", req.method, req.path, m)
		}
		if strings.Contains(string(r.body), "secret") {
			t.Errorf("%s %s: the response shows the internal cause: %s", req.method, req.path, r.body)
		}
	}
	// The cause is logged, under the request ID.
	if !strings.Contains(s.logs.String(), errFake.Error()) {
		t.Errorf("log does not hold the cause %q:\n%s", errFake, s.logs)
	}
}

func TestRequestLog(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		id := s.create("alice", `{"title":"t"}`)
		s.doWith(map[string]string{"Authorization": "Bearer " + testToken, "X-User-ID": "alice", "X-Request-ID": "req-123"},
			"GET", "/tasks/"+id, "")
		s.doWith(map[string]string{"Authorization": "Bearer wrong-" + testToken, "X-User-ID": "mallory"}, "GET", "/tasks", "")

		var events []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(s.logs.String()), "\n") {
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			events = append(events, e)
		}
		if len(events) != 3 {
			t.Fatalf("got %d log events, want one per request (3):\n%s", len(events), s.logs)
		}
		for _, e := range events {
			for _, k := range []string{"request_id", "user_id", "method", "path", "status", "duration"} {
				if _, ok := e[k]; !ok {
					t.Errorf("log event %v has no %q", e, k)
				}
			}
		}
		get := events[1]
		if get["request_id"] != "req-123" || get["user_id"] != "alice" || get["method"] != "GET" ||
			get["path"] != "/tasks/"+id || get["status"] != float64(200) {
			t.Errorf("GET log event: got %v", get)
		}
		// An unauthenticated caller's claimed user is not recorded.
		if bad := events[2]; bad["status"] != float64(401) || bad["user_id"] != "" {
			t.Errorf("401 log event: got %v, want status 401 and no user", bad)
		}
		if strings.Contains(s.logs.String(), testToken) {
			t.Errorf("the log holds the service token:\n%s", s.logs)
		}
	})
}

func TestRequestIDHeader(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *testServer) {
		r := s.do("alice", "GET", "/tasks", "")
		if id := r.header.Get("X-Request-ID"); len(id) < 16 {
			t.Errorf("X-Request-ID: got %q, want a generated ID", id)
		}
		r = s.doWith(map[string]string{"X-Request-ID": "abc"}, "GET", "/healthz", "")
		if id := r.header.Get("X-Request-ID"); id != "abc" {
			t.Errorf("X-Request-ID: got %q, want the caller's %q", id, "abc")
		}
	})
}
