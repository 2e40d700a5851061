package project_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/project"
)

func TestIndexWalk(t *testing.T) {
	root := t.TempDir()
	writeQueryFiles(t, root, map[string]string{
		".gitignore":               "*.tmp\ngenerated/\n!important.tmp\n",
		"main.go":                  "package main\n",
		"scratch.tmp":              "x",
		"important.tmp":            "x",
		"generated/code.go":        "package generated\n",
		"pkg/.gitignore":           "secret.txt\n/only_here.txt\n",
		"pkg/lib.go":               "package pkg\n",
		"pkg/secret.txt":           "x",
		"pkg/only_here.txt":        "x",
		"pkg/deeper/only_here.txt": "x",
		"pkg/deeper/secret.txt":    "x",
		".git/config":              "[core]\n",
		"big.txt":                  strings.Repeat("x", 2048),
		"image.png":                "\x89PNG\x00\x00",
	})
	outside := t.TempDir()
	writeQueryFiles(t, outside, map[string]string{"leak.go": "package leak\n"})
	if err := os.Symlink(filepath.Join(outside, "leak.go"), filepath.Join(root, "leak.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "outdir")); err != nil {
		t.Fatal(err)
	}
	ix, err := project.BuildIndex(root, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Complete() {
		t.Fatal("got an incomplete index after build")
	}
	got := ix.Files()
	slices.Sort(got)
	want := []string{".gitignore", "important.tmp", "main.go", "pkg/.gitignore", "pkg/deeper/only_here.txt", "pkg/lib.go"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("indexed files mismatch (-want +got):\n%s", diff)
	}
	p := ix.Progress()
	if p.Status != project.StatusComplete || p.TotalFiles != 7 || p.ProcessedFiles != 7 || p.PercentComplete != 100 {
		t.Errorf("got progress %+v, want Complete 7/7 (the binary file counted, then skipped)", p)
	}
}

// TestIndexListsWhatGitShows checks that in a git work tree the index
// holds what git shows: tracked files even when a .gitignore matches them,
// untracked files unless any ignore rule excludes them (.gitignore,
// .git/info/exclude, core.excludesFile), never a nested repository's files,
// deleted files or symbolic links — and that a GIT_DIR in the environment
// (set when switchboard runs from a git hook) does not point git elsewhere.
func TestIndexListsWhatGitShows(t *testing.T) {
	root := t.TempDir()
	gitIn(t, root, "init", "-q")
	excludes := filepath.Join(t.TempDir(), "global-ignore")
	writeQueryFiles(t, root, map[string]string{
		".gitignore":        "*.tmp\n",
		"main.go":           "package main\n",
		"tracked.tmp":       "tracked though ignored",
		"scratch.tmp":       "x",
		"local.txt":         "excluded by .git/info/exclude",
		"global.txt":        "excluded by core.excludesFile",
		"deleted.go":        "package main\n",
		"pkg/lib.go":        "package pkg\n",
		"nested/inner.go":   "package inner\n",
		"nested/.gitignore": "",
	})
	if err := os.WriteFile(filepath.Join(root, ".git", "info", "exclude"), []byte("local.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(excludes, []byte("global.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "config", "core.excludesFile", excludes)
	gitIn(t, filepath.Join(root, "nested"), "init", "-q")
	gitIn(t, root, "add", "-f", "tracked.tmp", "deleted.go", "main.go")
	if err := os.Remove(filepath.Join(root, "deleted.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("main.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	gitIn(t, other, "init", "-q")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))

	ix, err := project.BuildIndex(root, 1024)
	if err != nil {
		t.Fatal(err)
	}
	got := ix.Files()
	slices.Sort(got)
	want := []string{".gitignore", "main.go", "pkg/lib.go", "tracked.tmp"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("indexed files mismatch (-want +got):\n%s", diff)
	}

	// A subdirectory of a work tree as the root: git lists what is under it.
	sub, err := project.BuildIndex(filepath.Join(root, "pkg"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if files := sub.Files(); len(files) != 1 || files[0] != "lib.go" {
		t.Errorf("a root inside a work tree: got %d files %v, want only lib.go", len(files), files)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	srv, err := project.NewServer(project.Options{Root: newQueryRepo(t, queryRepoFiles), RescanInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Progress().Status != project.StatusComplete {
		if time.Now().After(deadline) {
			t.Fatalf("index not complete: %+v", srv.Progress())
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: got %v, want nil after cancellation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5s of cancellation")
	}
	if err := srv.Run(context.Background()); err == nil {
		t.Errorf("second Run: got nil, want an error")
	}
}
