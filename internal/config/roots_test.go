package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

func TestServerRoots(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"docs", "src"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "switchboard.yaml")
	src := `servers:
  - name: fs
    command: npx
    roots: [./docs, "file://` + filepath.ToSlash(filepath.Join(dir, "src")) + `", "` + dir + `"]
`
	cfg, err := config.Parse(file, []byte(src), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"file://" + filepath.ToSlash(filepath.Join(dir, "docs")), "file://" + filepath.ToSlash(filepath.Join(dir, "src")), "file://" + filepath.ToSlash(dir)}
	if got := cfg.Servers[0].Roots; !slices.Equal(got, want) {
		t.Errorf("roots: got %q, want %q", got, want)
	}
	// The roots survive writing the configuration out and reading it back.
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := config.Parse(file, out, config.Options{})
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", out, err)
	}
	if got := again.Servers[0].Roots; !slices.Equal(got, want) {
		t.Errorf("roots read back: got %q, want %q", got, want)
	}
}

func TestServerRootsErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(filepath.Join(dir, "a-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	src := `servers:
  - name: fs
    command: npx
    roots: [nope, https://example.com/x, a-file, "", [x]]
`
	_, err := config.Parse(file, []byte(src), config.Options{})
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("got %v, want a validation error", err)
	}
	got := err.Error()
	for _, want := range []string{
		"switchboard.yaml:4:13: servers.fs.roots[0]: directory " + filepath.Join(dir, "nope") + " does not exist",
		`switchboard.yaml:4:19: servers.fs.roots[1]: "https://example.com/x" is not a directory: a root is a path or a file:// URI`,
		"servers.fs.roots[2]: " + filepath.Join(dir, "a-file") + " is not a directory",
		"servers.fs.roots[3]: is empty",
		"servers.fs.roots",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the errors lack %q:\n%s", want, got)
		}
	}
}
