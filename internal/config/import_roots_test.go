package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestImportMakesRelativeRootsAbsolute: config import writes a server's
// relative roots as absolute paths, as it does its env_file and cwd, so
// that the output, saved in another folder, gives the server the same
// folders; a ~/ path and a file:// URI are kept as written.
func TestImportMakesRelativeRootsAbsolute(t *testing.T) {
	src, elsewhere := t.TempDir(), t.TempDir()
	for _, d := range []string{"src", "docs"} {
		if err := os.Mkdir(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	uri := "file://" + filepath.ToSlash(filepath.Join(src, "docs"))
	p := config.WriteFile(t, src, "switchboard.yaml", "servers:\n"+
		"  - name: fs\n    command: npx\n    roots: [src, ./docs]\n"+
		"  - name: kept\n    command: npx\n    roots: [\"~/notes\", \""+uri+"\"]\n")
	out, err := config.Import(p, config.TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"roots: [" + filepath.Join(src, "src") + ", " + filepath.Join(src, "docs") + "]",
		"roots: [\"~/notes\", \"" + uri + "\"]",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output:\n%s\nwant it to contain %q", out, want)
		}
	}
	cfg, err := config.Load(config.WriteFile(t, elsewhere, "switchboard.yaml", string(out)), config.TestOpts)
	if err != nil {
		t.Fatalf("loading the imported file from another folder: %v", err)
	}
	fs, _ := cfg.Server("fs")
	want := []string{"file://" + filepath.ToSlash(filepath.Join(src, "src")), uri}
	if len(fs.CannotStart) != 0 || !slices.Equal(fs.Roots, want) {
		t.Errorf("fs from another folder: got roots %v (cannot start: %v), want %v", fs.Roots, fs.CannotStart, want)
	}
}
