package tasks_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

const testToken = "s3cret-service-token"

// seenRequest is one request the fake backend received.
type seenRequest struct {
	Method, Path                 string
	Authorization, UserID, CType string
	Body                         string
}

// fakeBackend is an in-memory REST task backend implementing the contract
// the server talks to. fail, if set, is consulted first for every request:
// n counts requests from 1; returning status 0 serves normally, -1 hangs
// until the client gives up.
type fakeBackend struct {
	srv  *httptest.Server
	fail func(n int, r *http.Request) (status int, body string)

	mu     sync.Mutex
	seen   []seenRequest
	tasks  map[int64]tasks.Task
	nextID int64
}

func newFakeBackend(t *testing.T) *fakeBackend {
	t.Helper()
	fb := &fakeBackend{tasks: map[int64]tasks.Task{}, nextID: 1}
	fb.srv = httptest.NewServer(http.HandlerFunc(fb.serve))
	t.Cleanup(fb.srv.Close)
	return fb
}

// requests returns what the backend has received so far.
func (fb *fakeBackend) requests() []seenRequest {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return append([]seenRequest(nil), fb.seen...)
}

// add stores a task directly.
func (fb *fakeBackend) add(t tasks.Task) tasks.Task {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if t.ID == 0 {
		t.ID = fb.nextID
	}
	fb.nextID = max(fb.nextID, t.ID) + 1
	if t.CreatedAt == "" {
		t.CreatedAt, t.UpdatedAt = "2025-12-18T09:00:00Z", "2025-12-18T09:00:00Z"
	}
	fb.tasks[t.ID] = t
	return t
}

func (fb *fakeBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fb.mu.Lock()
	fb.seen = append(fb.seen, seenRequest{
		Method: r.Method, Path: r.URL.Path,
		Authorization: r.Header.Get("Authorization"), UserID: r.Header.Get("X-User-ID"), CType: r.Header.Get("Content-Type"),
		Body: string(body),
	})
	n := len(fb.seen)
	fail := fb.fail
	fb.mu.Unlock()

	if fail != nil {
		switch status, b := fail(n, r); {
		case status == -1:
			<-r.Context().Done()
			return
		case status != 0:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, b)
			return
		}
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"detail": "bad token"})
		return
	}
	user := r.Header.Get("X-User-ID")

	fb.mu.Lock()
	defer fb.mu.Unlock()
	if r.URL.Path == "/tasks" {
		switch r.Method {
		case http.MethodGet:
			out := []tasks.Task{}
			for _, id := range slices.Sorted(maps.Keys(fb.tasks)) {
				if t := fb.tasks[id]; t.UserID == user {
					out = append(out, t)
				}
			}
			writeJSON(w, http.StatusOK, out)
		case http.MethodPost:
			var in struct {
				Title       string  `json:"title"`
				Description *string `json:"description"`
				Priority    string  `json:"priority"`
				DueDate     *string `json:"due_date"`
			}
			if err := json.Unmarshal(body, &in); err != nil {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": err.Error()})
				return
			}
			t := tasks.Task{ID: fb.nextID, Title: in.Title, Description: in.Description, Priority: in.Priority, DueDate: in.DueDate,
				CreatedAt: "2025-12-18T10:00:00Z", UpdatedAt: "2025-12-18T10:00:00Z", UserID: user}
			fb.nextID++
			fb.tasks[t.ID] = t
			writeJSON(w, http.StatusCreated, t)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
		return
	}
	idStr, ok := strings.CutPrefix(r.URL.Path, "/tasks/")
	id, err := strconv.ParseInt(idStr, 10, 64)
	if !ok || err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
		return
	}
	t, ok := fb.tasks[id]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Task not found"})
		return
	}
	if t.UserID != user {
		writeJSON(w, http.StatusForbidden, map[string]string{"detail": "Not your task"})
		return
	}
	switch r.Method {
	case http.MethodPut:
		var in map[string]any
		json.Unmarshal(body, &in)
		for k, v := range in {
			switch k {
			case "title":
				t.Title = v.(string)
			case "priority":
				t.Priority = v.(string)
			case "description", "due_date":
				var p *string
				if s, ok := v.(string); ok {
					p = &s
				}
				if k == "description" {
					t.Description = p
				} else {
					t.DueDate = p
				}
			}
		}
	case http.MethodPatch:
		var in struct{ Completed bool }
		json.Unmarshal(body, &in)
		t.Completed = in.Completed
	case http.MethodDelete:
		delete(fb.tasks, id)
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	t.UpdatedAt = "2025-12-18T11:00:00Z"
	fb.tasks[id] = t
	writeJSON(w, http.StatusOK, t)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprint("encoding fake response: ", err))
	}
}
