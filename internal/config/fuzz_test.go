package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks that parsing never panics, and that whatever parses
// re-validates: its resolved form (MarshalResolved) parses to the same
// configuration, and its import parses back.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/formats/*")
	files = append(files, "testdata/.vscode/mcp.json")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, tt := range badFiles {
		f.Add([]byte(tt.src))
	}
	const name = "testdata/fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		p := parse(name, data, testOpts)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("parse took %v on %q", d, data)
		}
		cfg := p.cfg
		_ = cfg.Redacted()
		if len(p.ps.errs) > 0 {
			return
		}
		out, err := MarshalResolved(cfg)
		if err != nil {
			t.Fatalf("MarshalResolved: %v", err)
		}
		again, err := Parse(name, out, Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatalf("resolved output does not parse: %v\ninput:\n%s\noutput:\n%s", err, data, out)
		}
		if diff := cmp.Diff(cfg.Servers, again.Servers, ignorePos); diff != "" {
			t.Fatalf("resolved output differs (-want +got):\n%s\ninput:\n%s\noutput:\n%s", diff, data, out)
		}
		if diff := cmp.Diff(cfg.Defaults, again.Defaults); diff != "" {
			t.Fatalf("resolved defaults differ (-want +got):\n%s", diff)
		}

		imported := emitImport(name, p)
		back := parse(name, imported, testOpts)
		if errs := importBlocking(back.ps.errs); len(errs) > 0 {
			t.Fatalf("import does not parse back: %v\ninput:\n%s\nimport:\n%s", (&ValidationError{Problems: errs}).Error(), data, imported)
		}
		if diff := cmp.Diff(cfg.Servers, back.cfg.Servers, ignorePos); diff != "" {
			t.Fatalf("import resolves differently (-want +got):\n%s\ninput:\n%s\nimport:\n%s", diff, data, imported)
		}
	})
}
