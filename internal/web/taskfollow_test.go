package web

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestTaskFollowers checks who a task's status goes to — only the
// sessions that were shown the task, each once, the latest
// maxTaskFollowers of them, for at most maxFollowedTasks tasks (the
// oldest forgotten first) — and what a session's event stream gets on
// opening: the statuses announced since it was shown each task.
func TestTaskFollowers(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	sorted := func(s []string) []string { slices.Sort(s); return s }
	var f taskFollowers
	f.note("a", "t1", "s1", at(1))
	f.note("a", "t1", "s1", at(2))
	f.note("a", "t1", "s2", at(3))
	f.note("b", "t1", "s3", at(3))
	f.note("a", "", "s4", at(3))
	f.note("a", "t2", "", at(3))
	if got, want := sorted(f.announced("a", "t1", []byte("done"), at(3))), []string{"s1", "s2"}; !slices.Equal(got, want) {
		t.Errorf("a/t1 goes to %v, want %v", got, want)
	}
	if got := f.announced("a", "t2", []byte("x"), at(3)); len(got) != 0 {
		t.Errorf("a/t2 (never shown) goes to %v, want no one", got)
	}
	// s1 and s2 were shown t1 before (or as) it was announced; s3 was
	// shown b's t1, announced never.
	for _, s := range []string{"s1", "s2"} {
		if got := f.missed(s); len(got) != 1 || string(got[0]) != "done" {
			t.Errorf("%s missed %q, want [done]", s, got)
		}
	}
	if got := f.missed("s3"); len(got) != 0 {
		t.Errorf("s3 missed %q, want nothing", got)
	}
	f.note("a", "t1", "s1", at(4))
	if got := f.missed("s1"); len(got) != 0 {
		t.Errorf("s1, shown t1 again after its status, missed %q, want nothing", got)
	}

	for i := range maxTaskFollowers + 1 {
		f.note("c", "t", fmt.Sprint("s", i), at(10+i))
	}
	got := f.announced("c", "t", []byte("x"), at(100))
	if len(got) != maxTaskFollowers || slices.Contains(got, "s0") {
		t.Errorf("c/t goes to %v, want the %d shown it last (not s0)", sorted(got), maxTaskFollowers)
	}
	for i := range maxFollowedTasks {
		f.note("d", fmt.Sprint(i), "s", at(200))
	}
	if got := f.announced("a", "t1", []byte("x"), at(300)); len(got) != 0 {
		t.Errorf("the oldest task still goes to %v past %d tasks", got, maxFollowedTasks)
	}
	if got := f.announced("d", fmt.Sprint(maxFollowedTasks-1), []byte("x"), at(300)); !slices.Equal(got, []string{"s"}) {
		t.Errorf("the newest task goes to %v, want [s]", got)
	}
}
