package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/fault"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

func TestSQLiteTasks(t *testing.T)   { testTaskStore(t, openSQLiteTest) }
func TestPostgresTasks(t *testing.T) { testTaskStore(t, openPostgresTest) }

func ptr[T any](v T) *T { return &v }

// testTaskStore is the suite every TaskStore implementation passes.
func testTaskStore(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	tasks := func(t *testing.T) store.TaskStore { return open(t).(store.TaskStore) }

	t.Run("CreateAndGet", func(t *testing.T) {
		s := tasks(t)
		due := time.Date(2026, 12, 20, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
		before := time.Now().UTC().Truncate(time.Microsecond)
		got, err := s.Create(ctx, "alice", store.NewTask{Title: "Buy milk", Description: ptr("2%"), Priority: store.PriorityHigh, DueDate: &due})
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().UTC()
		if got.ID <= 0 {
			t.Errorf("got ID %d, want a positive ID", got.ID)
		}
		if got.CreatedAt.Before(before) || got.CreatedAt.After(after) || got.CreatedAt.Location() != time.UTC {
			t.Errorf("got CreatedAt %v, want a UTC time between %v and %v", got.CreatedAt, before, after)
		}
		want := store.Task{
			ID: got.ID, UserID: "alice", Title: "Buy milk", Description: ptr("2%"), Priority: store.PriorityHigh,
			DueDate:   ptr(time.Date(2026, 12, 20, 9, 0, 0, 123456000, time.UTC)),
			CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Create mismatch (-want +got):\n%s", diff)
		}
		read, err := s.Get(ctx, "alice", got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, read); diff != "" {
			t.Errorf("Get mismatch (-want +got):\n%s", diff)
		}

		// The minimal task: default priority, no description or due date.
		min, err := s.Create(ctx, "alice", store.NewTask{Title: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if min.Priority != store.PriorityMedium || min.Description != nil || min.DueDate != nil || min.Completed {
			t.Errorf("minimal task: got %+v, want priority Medium, no description or due date, not completed", min)
		}
		if min.ID <= got.ID {
			t.Errorf("second task has ID %d, want more than %d", min.ID, got.ID)
		}
	})

	t.Run("ListNewestFirstAndFilter", func(t *testing.T) {
		s := tasks(t)
		for i, title := range []string{"a", "b", "c", "d"} {
			task, err := s.Create(ctx, "alice", store.NewTask{Title: title})
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				if _, err := s.SetCompleted(ctx, "alice", task.ID, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := s.Create(ctx, "bob", store.NewTask{Title: "bob's"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name      string
			completed *bool
			want      []string
		}{
			{"all", nil, []string{"d", "c", "b", "a"}},
			{"completed", ptr(true), []string{"d", "b"}},
			{"open", ptr(false), []string{"c", "a"}},
		} {
			got, err := s.List(ctx, "alice", tc.completed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, titles(got)); diff != "" {
				t.Errorf("List(%s) titles (-want +got):\n%s", tc.name, diff)
			}
		}
		got, err := s.List(ctx, "carol", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || len(got) != 0 {
			t.Errorf("List for a user with no tasks: got %#v, want an empty, non-nil slice", got)
		}
	})

	t.Run("Update", func(t *testing.T) {
		s := tasks(t)
		due := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
		orig, err := s.Create(ctx, "alice", store.NewTask{Title: "t", Description: ptr("d"), Priority: store.PriorityLow, DueDate: &due})
		if err != nil {
			t.Fatal(err)
		}
		// Nothing to change: the task as it is.
		same, err := s.Update(ctx, "alice", orig.ID, store.TaskUpdate{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(orig, same); diff != "" {
			t.Errorf("empty update changed the task (-want +got):\n%s", diff)
		}
		// Only the given fields change.
		got, err := s.Update(ctx, "alice", orig.ID, store.TaskUpdate{Title: ptr("new"), Priority: ptr(store.PriorityUrgent)})
		if err != nil {
			t.Fatal(err)
		}
		want := orig
		want.Title, want.Priority, want.UpdatedAt = "new", store.PriorityUrgent, got.UpdatedAt
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Update mismatch (-want +got):\n%s", diff)
		}
		if got.UpdatedAt.Before(orig.UpdatedAt) {
			t.Errorf("UpdatedAt went back from %v to %v", orig.UpdatedAt, got.UpdatedAt)
		}
		// Clearing the description and due date.
		got, err = s.Update(ctx, "alice", orig.ID, store.TaskUpdate{Description: store.Change[string]{Set: true}, DueDate: store.Change[time.Time]{Set: true}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != nil || got.DueDate != nil || got.Title != "new" {
			t.Errorf("after clearing: got %+v, want no description or due date, title kept", got)
		}
		// Setting them again.
		due2 := time.Date(2027, 1, 1, 8, 30, 0, 0, time.UTC)
		got, err = s.Update(ctx, "alice", orig.ID, store.TaskUpdate{Description: store.Change[string]{Set: true, Value: ptr("again")}, DueDate: store.Change[time.Time]{Set: true, Value: &due2}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description == nil || *got.Description != "again" || got.DueDate == nil || !got.DueDate.Equal(due2) {
			t.Errorf("after setting: got %+v, want description %q and due date %v", got, "again", due2)
		}
		read, err := s.Get(ctx, "alice", orig.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, read); diff != "" {
			t.Errorf("Get after Update (-want +got):\n%s", diff)
		}
	})

	t.Run("SetCompleted", func(t *testing.T) {
		s := tasks(t)
		task, err := s.Create(ctx, "alice", store.NewTask{Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []bool{true, true, false} {
			got, err := s.SetCompleted(ctx, "alice", task.ID, c)
			if err != nil {
				t.Fatal(err)
			}
			if got.Completed != c {
				t.Errorf("SetCompleted(%v): got completed %v", c, got.Completed)
			}
		}
	})

	t.Run("OtherUsersAndMissingTasksAreNotFound", func(t *testing.T) {
		s := tasks(t)
		task, err := s.Create(ctx, "alice", store.NewTask{Title: "secret"})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{task.ID, task.ID + 1000} {
			check := func(op string, err error) {
				t.Helper()
				if k := fault.KindOf(err); k != fault.NotFound {
					t.Errorf("%s(bob, %d): got %v (kind %q), want kind %q", op, id, err, k, fault.NotFound)
				}
			}
			_, err := s.Get(ctx, "bob", id)
			check("Get", err)
			_, err = s.Update(ctx, "bob", id, store.TaskUpdate{Title: ptr("mine")})
			check("Update", err)
			_, err = s.Update(ctx, "bob", id, store.TaskUpdate{})
			check("Update (empty)", err)
			_, err = s.SetCompleted(ctx, "bob", id, true)
			check("SetCompleted", err)
			check("Delete", s.Delete(ctx, "bob", id))
		}
		got, err := s.Get(ctx, "alice", task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(task, got); diff != "" {
			t.Errorf("another user changed the task (-want +got):\n%s", diff)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := tasks(t)
		a, _ := s.Create(ctx, "alice", store.NewTask{Title: "a"})
		b, err := s.Create(ctx, "alice", store.NewTask{Title: "b"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "alice", b.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "alice", b.ID); fault.KindOf(err) != fault.NotFound {
			t.Errorf("Get after Delete: got %v, want kind %q", err, fault.NotFound)
		}
		if err := s.Delete(ctx, "alice", b.ID); fault.KindOf(err) != fault.NotFound {
			t.Errorf("deleting twice: got %v, want kind %q", err, fault.NotFound)
		}
		// The ID of a deleted task is not given to another.
		c, err := s.Create(ctx, "alice", store.NewTask{Title: "c"})
		if err != nil {
			t.Fatal(err)
		}
		if c.ID <= b.ID {
			t.Errorf("new task after deleting %d got ID %d: IDs must not be reused", b.ID, c.ID)
		}
		got, _ := s.List(ctx, "alice", nil)
		if diff := cmp.Diff([]string{"c", "a"}, titles(got)); diff != "" || a.ID == 0 {
			t.Errorf("List after Delete (-want +got):\n%s", diff)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		s := tasks(t)
		task, err := s.Create(ctx, "alice", store.NewTask{Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("é", store.MaxTitleLength+1)
		for name, err := range map[string]error{
			"empty title":         second(s.Create(ctx, "alice", store.NewTask{Title: " "})),
			"long title":          second(s.Create(ctx, "alice", store.NewTask{Title: long})),
			"bad priority":        second(s.Create(ctx, "alice", store.NewTask{Title: "t", Priority: "Whenever"})),
			"no user":             second(s.Create(ctx, "", store.NewTask{Title: "t"})),
			"update empty title":  second(s.Update(ctx, "alice", task.ID, store.TaskUpdate{Title: ptr("")})),
			"update bad priority": second(s.Update(ctx, "alice", task.ID, store.TaskUpdate{Priority: ptr(store.Priority("low"))})),
			"list no user":        second(s.List(ctx, "", nil)),
		} {
			if k := fault.KindOf(err); k != fault.Validation {
				t.Errorf("%s: got %v (kind %q), want kind %q", name, err, k, fault.Validation)
			}
		}
		// 200 characters, not bytes, is the limit.
		if _, err := s.Create(ctx, "alice", store.NewTask{Title: long[len("é"):]}); err != nil {
			t.Errorf("Create with a 200-character title: %v", err)
		}
	})

	t.Run("SurvivesReopen", func(t *testing.T) {
		s1 := open(t)
		task, err := s1.(store.TaskStore).Create(ctx, "alice", store.NewTask{Title: "kept"})
		if err != nil {
			t.Fatal(err)
		}
		s1.Close()
		got, err := tasks(t).Get(ctx, "alice", task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(task, got); diff != "" {
			t.Errorf("task after reopening (-want +got):\n%s", diff)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func titles(ts []store.Task) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Title)
	}
	return out
}
