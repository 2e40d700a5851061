package notebook_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// TestGolden runs the documents in testdata against test servers and
// compares the result with the .golden.md files; a second run must change
// nothing.
func TestGolden(t *testing.T) {
	cfg := testConfig(okServers(t, "alpha", "beta")...)
	cfg.Notebook.Bindings = []config.Binding{
		{Heading: "Config section", Server: "beta", Pos: config.Pos{File: "switchboard.yaml", Line: 3}},
		{Heading: "### Override", Server: "alpha", Pos: config.Pos{File: "switchboard.yaml", Line: 5}},
		{StartLine: 71, EndLine: 76, Server: "beta", Pos: config.Pos{File: "switchboard.yaml", Line: 7}},
	}
	eng := newEngine(t, cfg)
	tests := []struct {
		doc        string
		wantFailed int
		check      func(t *testing.T, path string, rep *notebook.Report)
	}{
		{doc: "content.md", wantFailed: 5, check: func(t *testing.T, path string, rep *notebook.Report) {
			img := filepath.Join(filepath.Dir(path), "content."+imageHash(t, path)+".1.png")
			got, err := os.ReadFile(img)
			if err != nil || !bytes.Equal(got, testserver.PNG) {
				t.Errorf("image file %s: got %d bytes (%v), want the server's PNG", img, len(got), err)
			}
		}},
		{doc: "containers.md"},
		{doc: "bindings.md", check: func(t *testing.T, _ string, rep *notebook.Report) {
			// Lines of the document as written, results and all (the
			// range binding counts lines without them: 71-76 holds the
			// block at line 72 of the document as its author wrote it).
			want := []struct {
				line        int
				server, why string
			}{
				{14, "alpha", "default"},
				{24, "beta", `binding heading "## Beta section" (`},
				{34, "beta", `binding heading "## Beta section" (`},
				{42, "alpha", "binding block ^pinned ("},
				{50, "beta", "explicit"},
				{58, "alpha", "explicit"},
				{69, "alpha", `binding heading "### Override" (switchboard.yaml:5)`},
				{79, "beta", `binding heading "Config section" (switchboard.yaml:3)`},
				{89, "alpha", "default"},
				{99, "beta", "binding lines 71-76 (switchboard.yaml:7)"},
			}
			if len(rep.Blocks) != len(want) {
				t.Fatalf("got %d blocks, want %d", len(rep.Blocks), len(want))
			}
			for i, w := range want {
				b := rep.Blocks[i]
				if b.Line != w.line || b.Server != w.server || !strings.HasPrefix(b.Why, w.why) {
					t.Errorf("block %d: got line %d server %s (%s), want line %d server %s (%s...)", i, b.Line, b.Server, b.Why, w.line, w.server, w.why)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			path := copyDoc(t, tt.doc)
			rep, err := notebook.Run(context.Background(), path, notebook.Options{Config: cfg, Caller: eng})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Failed != tt.wantFailed {
				t.Errorf("failed blocks: got %d, want %d: %+v", rep.Failed, tt.wantFailed, rep.Blocks)
			}
			if !rep.Written {
				t.Errorf("first run: got Written false, want true")
			}
			first, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(tt.doc, ".md")+".golden.md", first)
			if tt.check != nil {
				tt.check(t, path, rep)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("mode after the run: got %v, want 0640", fi.Mode().Perm())
			}

			// Idempotent: a second run finds every result and rewrites
			// nothing.
			rep2, err := notebook.Run(context.Background(), path, notebook.Options{Config: cfg, Caller: eng, Concurrency: 4})
			if err != nil {
				t.Fatalf("second Run: %v", err)
			}
			second, _ := os.ReadFile(path)
			if rep2.Written || !bytes.Equal(first, second) {
				t.Errorf("second run: got Written %v and a changed document, want no change:\n%s", rep2.Written, second)
			}
			ins, err := notebook.Inspect(path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if ins.Failed != countInvalid(ins) {
				t.Errorf("Inspect after the run: got %d missing, stale, invalid or failed, want only the %d invalid or failed: %+v", ins.Failed, countInvalid(ins), ins.Blocks)
			}
		})
	}
}

// countInvalid counts the blocks that cannot run and those whose recorded
// result is a failed call.
func countInvalid(r *notebook.Report) int {
	n := 0
	for _, b := range r.Blocks {
		switch b.Status {
		case notebook.StatusInvalid, "error", "timeout", "cancelled":
			n++
		}
	}
	return n
}

// imageHash returns the hash of the image block in content.md.
func imageHash(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := notebook.Parse(path, src, []string{"alpha", "beta"})
	d.Resolve(testConfig(okServers(t, "alpha", "beta")...))
	for _, b := range d.Blocks {
		if b.Tool == "image" {
			return b.Hash()
		}
	}
	t.Fatal("no image block")
	return ""
}
