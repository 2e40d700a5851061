package procgroup_test

import (
	"slices"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/procgroup"
)

// TestEnv: a child gets only the base variables of Switchboard's
// environment (all of it with inherit), then each layer, a later one
// winning; sorted.
func TestEnv(t *testing.T) {
	t.Setenv("PATH", "/bin")
	t.Setenv("SWITCHBOARD_TEST_SECRET", "s3cret")
	t.Setenv("SWITCHBOARD_TEST_BASE", "b")

	got := procgroup.Env([]string{"PATH", "SWITCHBOARD_TEST_BASE", "SWITCHBOARD_TEST_UNSET"}, false,
		map[string]string{"A": "1", "B": "env"}, map[string]string{"B": "event", "PATH": "/usr/bin"})
	want := []string{"A=1", "B=event", "PATH=/usr/bin", "SWITCHBOARD_TEST_BASE=b"}
	if !slices.Equal(got, want) {
		t.Errorf("base: got %q, want %q", got, want)
	}

	got = procgroup.Env(procgroup.BaseEnv, true, map[string]string{"SWITCHBOARD_TEST_SECRET": "mine"})
	if !slices.Contains(got, "SWITCHBOARD_TEST_SECRET=mine") || !slices.Contains(got, "SWITCHBOARD_TEST_BASE=b") || !slices.IsSorted(got) {
		t.Errorf("inherit: got %q, want the whole environment, sorted, the layer winning", got)
	}
	if got := procgroup.Env(procgroup.BaseEnv, false); slices.Contains(got, "SWITCHBOARD_TEST_SECRET=s3cret") {
		t.Errorf("got %q, want nothing of Switchboard's environment beyond the base", got)
	}
}
