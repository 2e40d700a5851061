package web

import (
	"fmt"
	"slices"
	"testing"
)

// TestTaskFollowers checks who a task's status goes to: only the
// sessions that were shown the task, each once, the newest
// maxTaskFollowers of them, for at most maxFollowedTasks tasks (the
// oldest forgotten first).
func TestTaskFollowers(t *testing.T) {
	t.Parallel()
	var f taskFollowers
	f.note("a", "t1", "s1")
	f.note("a", "t1", "s1")
	f.note("a", "t1", "s2")
	f.note("b", "t1", "s3")
	f.note("a", "", "s4")
	f.note("a", "t2", "")
	if got, want := f.sessions("a", "t1"), []string{"s1", "s2"}; !slices.Equal(got, want) {
		t.Errorf("a/t1 goes to %v, want %v", got, want)
	}
	if got := f.sessions("a", "t2"); len(got) != 0 {
		t.Errorf("a/t2 (never shown) goes to %v, want no one", got)
	}
	for i := range maxTaskFollowers + 1 {
		f.note("c", "t", fmt.Sprint("s", i))
	}
	if got := f.sessions("c", "t"); len(got) != maxTaskFollowers || got[0] != "s1" {
		t.Errorf("c/t goes to %d sessions from %v, want the newest %d", len(got), got[:1], maxTaskFollowers)
	}
	for i := range maxFollowedTasks {
		f.note("d", fmt.Sprint(i), "s")
	}
	if got := f.sessions("a", "t1"); len(got) != 0 {
		t.Errorf("the oldest task is still followed by %v past %d tasks", got, maxFollowedTasks)
	}
	if got := f.sessions("d", fmt.Sprint(maxFollowedTasks-1)); !slices.Equal(got, []string{"s"}) {
		t.Errorf("the newest task goes to %v, want [s]", got)
	}
}
