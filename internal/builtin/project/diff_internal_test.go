// Internal on purpose: tests and fuzzes the unified-diff parser (parseUnifiedDiff) over diffs no repository of a test produces.

package project

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseUnifiedDiff(t *testing.T) {
	files := parseUnifiedDiff(readSampleDiff(t))
	type row struct {
		Old, New, Change string
		Binary           bool
		OldMode, NewMode string
		Added, Removed   int
	}
	var got []row
	for _, f := range files {
		got = append(got, row{f.OldPath, f.NewPath, f.Change, f.Binary, f.OldMode, f.NewMode, f.Added, f.Removed})
	}
	want := []row{
		// The "--- a comment" line is a removed line inside the hunk.
		{"internal/api/handler.go", "internal/api/handler.go", ChangeModified, false, "", "", 5, 3},
		{"docs/old name.md", "docs/new name.md", ChangeRenamed, false, "", "", 1, 1},
		{"", "assets/logo.png", ChangeAdded, true, "", "100644", 0, 0},
		{"scripts/run.sh", "scripts/run.sh", ChangeModified, false, "100644", "100755", 0, 0},
		{"migrations/0001_init.sql", "", ChangeDeleted, false, "100644", "", 0, 2},
		{"", "with\ttab.txt", ChangeAdded, false, "", "100644", 1, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed files mismatch (-want +got):\n%s", diff)
	}
}

func TestParsePlainUnifiedDiff(t *testing.T) {
	plain := "--- a.txt\t2026-01-01 00:00:00\n+++ a.txt\t2026-01-02 00:00:00\n@@ -1,2 +1,2 @@\n-one\n+uno\n two\n" +
		"--- /dev/null\n+++ b.txt\n@@ -0,0 +1 @@\n+new\n"
	files := parseUnifiedDiff([]byte(plain))
	if len(files) != 2 {
		t.Fatalf("got %d files, want 2", len(files))
	}
	if f := files[0]; f.Path() != "a.txt" || f.Change != ChangeModified || f.Added != 1 || f.Removed != 1 {
		t.Errorf("got %+v, want a.txt modified +1 -1", *f)
	}
	if f := files[1]; f.Path() != "b.txt" || f.Change != ChangeAdded || f.Added != 1 {
		t.Errorf("got %+v, want b.txt added +1", *f)
	}
}

func FuzzParseUnifiedDiff(f *testing.F) {
	f.Add(readSampleDiff(f))
	f.Add([]byte("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"))
	f.Add([]byte("diff --git \"a/x\\\"\" b/y\n@@ -1,1000000 +1 @@\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fl := range parseUnifiedDiff(data) {
			if fl.Path() == "" {
				t.Errorf("got a file without a path: %+v", *fl)
			}
			if !slices.Contains([]string{ChangeAdded, ChangeModified, ChangeDeleted, ChangeRenamed}, fl.Change) {
				t.Errorf("got change type %q", fl.Change)
			}
			if fl.Added < 0 || fl.Removed < 0 || len(fl.AddedLines) > maxKeptLines || len(fl.RemovedLines) > maxKeptLines {
				t.Errorf("got counts %d/%d, kept %d/%d", fl.Added, fl.Removed, len(fl.AddedLines), len(fl.RemovedLines))
			}
		}
	})
}

// readSampleDiff reads testdata/sample.diff, git diff output covering every
// kind of change (the black-box tests read it too).
func readSampleDiff(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sample.diff"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
