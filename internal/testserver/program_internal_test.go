package testserver

import (
	"os"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testbuild"
)

// TestUpToDateProgramIsNotLinkedAgain checks that building the program
// again when nothing changed leaves go build's output in place, so go
// build found it up to date and did not link it again (2.5 s of CPU, in
// every package's test binary under plain go test), and leaves the
// installed program in place too. (go build touches an up-to-date
// output's modification time; linking writes a new file.)
func TestUpToDateProgramIsNotLinkedAgain(t *testing.T) {
	t.Parallel()
	capture()
	if started.goCmd == "" || started.root == "" || started.cacheDir == "" {
		t.Fatalf("the test server program cannot be built here: go command %q, module directory %q, cache directory %q", started.goCmd, started.root, started.cacheDir)
	}
	out, err := buildInCache()
	if err != nil {
		t.Fatal(err)
	}
	files := []struct{ what, path string }{
		{"go build's output", testbuild.StagedPath(out)},
		{"the installed program", out},
	}
	// Held open, a replaced file keeps its inode, which a new file
	// cannot then reuse.
	before := make([]os.FileInfo, len(files))
	for i, f := range files {
		fd, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		if before[i], err = fd.Stat(); err != nil {
			t.Fatal(err)
		}
	}
	again, err := buildInCache()
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Fatalf("building again: got %s, want %s", again, out)
	}
	for i, f := range files {
		after, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before[i], after) {
			t.Errorf("building again with nothing changed replaced %s, %s: want it left in place", f.what, f.path)
		}
	}
}
