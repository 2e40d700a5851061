package tasks_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

// The task server against the real reference backend (internal/builtin/
// taskapi) over HTTP, with the backend's tasks in SQLite and in
// PostgreSQL, both opened as `switchboard builtin task-api --db` opens
// them (store.OpenTasks).

// refStore is a kind of database the reference backend keeps its tasks in.
type refStore struct {
	name string
	// dsn returns a fresh, empty database for t: a SQLite path or a
	// postgres:// DSN.
	dsn func(t *testing.T) string
	// check reports whether db is a store of this kind.
	check func(db store.TaskDatabase) bool
}

var refStores = []refStore{
	{
		name:  "sqlite",
		dsn:   func(t *testing.T) string { return filepath.Join(t.TempDir(), "tasks.db") },
		check: func(db store.TaskDatabase) bool { _, ok := db.(*store.SQLite); return ok },
	},
	{
		// A schema of its own on the binary's shared server; testpg fails
		// the test, saying how to install PostgreSQL, when there is none.
		name:  "postgres",
		dsn:   func(t *testing.T) string { return testpg.Schema(t, testpg.Shared(t)) },
		check: func(db store.TaskDatabase) bool { _, ok := db.(*store.Postgres); return ok },
	},
}

// refBackend is the reference backend serving over HTTP for one test.
type refBackend struct {
	url string
	db  store.TaskDatabase
}

// startRefBackend serves the reference backend, with testToken as its
// service token, over a fresh database of kind k until t ends.
func startRefBackend(t *testing.T, k refStore) *refBackend {
	t.Helper()
	db, err := store.OpenTasks(context.Background(), k.dsn(t), store.Options{})
	if err != nil {
		t.Fatalf("store.OpenTasks (%s): %v", k.name, err)
	}
	t.Cleanup(func() { db.Close() })
	if !k.check(db) {
		t.Fatalf("store.OpenTasks (%s): got %T, want a %s store", k.name, db, k.name)
	}
	h, err := taskapi.NewHandler(taskapi.Options{Store: db, ServiceToken: testToken})
	if err != nil {
		t.Fatalf("taskapi.NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &refBackend{url: srv.URL, db: db}
}

// taskID reads a task's id from a result, failing unless it is a
// positive integer.
func taskID(t *testing.T, task map[string]any) int64 {
	t.Helper()
	f, ok := task["id"].(float64)
	if !ok || f <= 0 || f != float64(int64(f)) {
		t.Fatalf("task id: got %v, want a positive integer (%v)", task["id"], task)
	}
	return int64(f)
}

// withoutTimes drops the server-set timestamps, after checking they are
// RFC 3339 UTC and that updated_at is not before created_at.
func withoutTimes(t *testing.T, task map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	var times [2]time.Time
	for k, v := range task {
		out[k] = v
	}
	for i, k := range []string{"created_at", "updated_at"} {
		s, _ := task[k].(string)
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || tm.Location() != time.UTC {
			t.Errorf("%s: got %v, want an RFC 3339 UTC time", k, task[k])
		}
		times[i] = tm
		delete(out, k)
	}
	if times[1].Before(times[0]) {
		t.Errorf("updated_at %v is before created_at %v", times[1], times[0])
	}
	return out
}

// TestToolsAgainstReferenceBackend calls every tool against the reference
// backend on each store, checks each answer, and checks what the store
// holds afterwards.
func TestToolsAgainstReferenceBackend(t *testing.T) {
	for _, k := range refStores {
		t.Run(k.name, func(t *testing.T) {
			be := startRefBackend(t, k)
			cs := connect(t, testSettings(be.url), tasks.Options{})

			// create_task, with defaults and with every field.
			milk := wantOK(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "Buy milk"}))
			milkID := taskID(t, milk)
			want := map[string]any{"id": float64(milkID), "title": "Buy milk", "description": nil, "completed": false,
				"priority": "Medium", "due_date": nil, "user_id": "alice"}
			if d := cmp.Diff(want, withoutTimes(t, milk)); d != "" {
				t.Errorf("create_task with defaults (-want +got):\n%s", d)
			}
			report := wantOK(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{
				"title": "Report", "description": "Q4", "priority": "Urgent", "due_date": "2025-12-20T11:00:00+01:00"}))
			reportID := taskID(t, report)
			want = map[string]any{"id": float64(reportID), "title": "Report", "description": "Q4", "completed": false,
				"priority": "Urgent", "due_date": "2025-12-20T10:00:00Z", "user_id": "alice"}
			if d := cmp.Diff(want, withoutTimes(t, report)); d != "" {
				t.Errorf("create_task with every field (-want +got):\n%s", d)
			}
			if reportID == milkID {
				t.Fatalf("two tasks got the same id %d", milkID)
			}

			// list_tasks: both, newest first.
			list := wantOK(t, call(t, cs, "alice", tasks.ToolListTasks, map[string]any{}))
			listed, _ := list["tasks"].([]any)
			if len(listed) != 2 {
				t.Fatalf("list_tasks: got %v, want 2 tasks", list)
			}
			if d := cmp.Diff([]any{report, milk}, listed); d != "" {
				t.Errorf("list_tasks (-want +got):\n%s", d)
			}

			// update_task: given fields change, null clears, the rest stays.
			upd := wantOK(t, call(t, cs, "alice", tasks.ToolUpdateTask, map[string]any{
				"task_id": reportID, "title": "Q4 report", "priority": "High", "due_date": nil}))
			want = map[string]any{"id": float64(reportID), "title": "Q4 report", "description": "Q4", "completed": false,
				"priority": "High", "due_date": nil, "user_id": "alice"}
			if d := cmp.Diff(want, withoutTimes(t, upd)); d != "" {
				t.Errorf("update_task (-want +got):\n%s", d)
			}
			if upd["created_at"] != report["created_at"] {
				t.Errorf("update_task changed created_at: got %v, want %v", upd["created_at"], report["created_at"])
			}
			upd = wantOK(t, call(t, cs, "alice", tasks.ToolUpdateTask, map[string]any{"task_id": reportID, "description": nil}))
			if upd["description"] != nil || upd["title"] != "Q4 report" {
				t.Errorf("update_task clearing description: got %v, want description null, title kept", upd)
			}

			// mark_task_completed.
			done := wantOK(t, call(t, cs, "alice", tasks.ToolMarkTaskCompleted, map[string]any{"task_id": milkID}))
			if done["completed"] != true || done["title"] != "Buy milk" {
				t.Errorf("mark_task_completed: got %v, want the task, completed", done)
			}

			// delete_task.
			del := wantOK(t, call(t, cs, "alice", tasks.ToolDeleteTask, map[string]any{"task_id": milkID}))
			wantDel := map[string]any{"deleted": true, "task_id": float64(milkID), "message": fmt.Sprintf("Task %d was deleted.", milkID)}
			if d := cmp.Diff(wantDel, del); d != "" {
				t.Errorf("delete_task (-want +got):\n%s", d)
			}

			// The backend's 404 for the deleted task, through each tool
			// that takes an id.
			for _, tool := range []string{tasks.ToolUpdateTask, tasks.ToolMarkTaskCompleted, tasks.ToolDeleteTask} {
				args := map[string]any{"task_id": milkID}
				if tool == tasks.ToolUpdateTask {
					args["title"] = "again"
				}
				wantErr(t, call(t, cs, "alice", tool, args), "not_found_error")
			}

			// What the store holds: the updated report, and no milk.
			ctx := context.Background()
			got, err := be.db.Get(ctx, "alice", reportID)
			if err != nil {
				t.Fatalf("store Get(%d): %v", reportID, err)
			}
			if got.Title != "Q4 report" || got.Description != nil || got.Priority != "High" || got.DueDate != nil || got.Completed {
				t.Errorf("stored task %d: got %+v, want the updated report", reportID, got)
			}
			if _, err := be.db.Get(ctx, "alice", milkID); fault.KindOf(err) != fault.NotFound {
				t.Errorf("stored task %d after delete_task: got err %v, want not found", milkID, err)
			}
			all, err := be.db.List(ctx, "alice", nil)
			if err != nil || len(all) != 1 {
				t.Errorf("stored tasks of alice: got %d (%v), want 1", len(all), err)
			}
		})
	}
}

// TestUsersIsolatedByReferenceBackend checks that the user id in _meta
// reaches the backend as the task owner: on each store, bob can neither
// see nor change alice's task, and is told it does not exist.
func TestUsersIsolatedByReferenceBackend(t *testing.T) {
	for _, k := range refStores {
		t.Run(k.name, func(t *testing.T) {
			be := startRefBackend(t, k)
			cs := connect(t, testSettings(be.url), tasks.Options{})
			alices := wantOK(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "alice's plan"}))
			id := taskID(t, alices)
			if alices["user_id"] != "alice" {
				t.Errorf("owner: got %v, want alice", alices["user_id"])
			}

			if got := wantOK(t, call(t, cs, "bob", tasks.ToolListTasks, nil)); len(got["tasks"].([]any)) != 0 {
				t.Errorf("bob's list: got %v, want none", got)
			}
			wantErr(t, call(t, cs, "bob", tasks.ToolUpdateTask, map[string]any{"task_id": id, "title": "bob's now"}), "not_found_error")
			wantErr(t, call(t, cs, "bob", tasks.ToolMarkTaskCompleted, map[string]any{"task_id": id}), "not_found_error")
			wantErr(t, call(t, cs, "bob", tasks.ToolDeleteTask, map[string]any{"task_id": id}), "not_found_error")

			bobs := wantOK(t, call(t, cs, "bob", tasks.ToolCreateTask, map[string]any{"title": "bob's"}))
			if bobs["user_id"] != "bob" {
				t.Errorf("owner: got %v, want bob", bobs["user_id"])
			}
			list := wantOK(t, call(t, cs, "alice", tasks.ToolListTasks, nil))["tasks"].([]any)
			if d := cmp.Diff([]any{alices}, list); d != "" {
				t.Errorf("alice's list after bob's attempts (-want +got):\n%s", d)
			}
		})
	}
}

// TestReferenceBackendRejectsWrongToken checks the backend's own 401 maps
// to authentication_error.
func TestReferenceBackendRejectsWrongToken(t *testing.T) {
	be := startRefBackend(t, refStores[0])
	s := testSettings(be.url)
	s.ServiceAuthToken = "not-" + testToken
	cs := connect(t, s, tasks.Options{})
	wantErr(t, call(t, cs, "alice", tasks.ToolListTasks, nil), "authentication_error")
}

// TestDueDateFormsAgreeWithReferenceBackend checks that the server accepts
// the due dates the reference backend accepts (a date alone, a date-time
// without a zone: both UTC), passes them on, and refuses what the backend
// refuses before sending anything.
func TestDueDateFormsAgreeWithReferenceBackend(t *testing.T) {
	be := startRefBackend(t, refStores[0])
	cs := connect(t, testSettings(be.url), tasks.Options{})
	for _, tc := range []struct{ in, want string }{
		{"2025-12-20", "2025-12-20T00:00:00Z"},
		{"2025-12-20T10:00:00", "2025-12-20T10:00:00Z"},
		{"2025-12-20T10:00:00.25", "2025-12-20T10:00:00.25Z"},
		{"2025-12-20T11:00:00+01:00", "2025-12-20T10:00:00Z"},
	} {
		created := wantOK(t, call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "t", "due_date": tc.in}))
		if created["due_date"] != tc.want {
			t.Errorf("create_task due_date %q: got %v, want %s", tc.in, created["due_date"], tc.want)
		}
		updated := wantOK(t, call(t, cs, "alice", tasks.ToolUpdateTask, map[string]any{"task_id": taskID(t, created), "due_date": tc.in}))
		if updated["due_date"] != tc.want {
			t.Errorf("update_task due_date %q: got %v, want %s", tc.in, updated["due_date"], tc.want)
		}
	}
	for _, bad := range []string{"tomorrow", "2025-12-20 10:00", "20/12/2025", "0001-01-01T00:00:00Z"} {
		res := call(t, cs, "alice", tasks.ToolCreateTask, map[string]any{"title": "t", "due_date": bad})
		got := wantErr(t, res, "validation_error")
		if !strings.Contains(fmt.Sprint(got["details"]), "Invalid datetime format") {
			t.Errorf("create_task due_date %q: got %v, want Invalid datetime format", bad, got)
		}
	}
}

// TestNULTextRejectedBeforeReferenceBackend checks a title or description
// with NUL is refused, not stored changed.
func TestNULTextRejectedBeforeReferenceBackend(t *testing.T) {
	be := startRefBackend(t, refStores[0])
	cs := connect(t, testSettings(be.url), tasks.Options{})
	for _, args := range []map[string]any{{"title": "\x00"}, {"title": "a\x00b"}, {"title": "t", "description": "p\x00q"}} {
		wantErr(t, call(t, cs, "alice", tasks.ToolCreateTask, args), "validation_error")
	}
	stored, err := be.db.List(context.Background(), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 0 {
		t.Errorf("got %d stored tasks after rejected creates, want 0: %+v", len(stored), stored)
	}
}
