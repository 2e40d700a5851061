package config

import (
	"os"
	"path/filepath"
	"strings"
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
	for _, pattern := range []string{"testdata/clients/*/*", "testdata/clients/*/.*/*", "testdata/clients/*/.continue/mcpServers/*"} {
		more, _ := filepath.Glob(pattern)
		files = append(files, more...)
	}
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
		if diff := cmp.Diff(cfg.Limits, again.Limits); diff != "" {
			t.Fatalf("resolved limits differ (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(cfg.History, again.History); diff != "" {
			t.Fatalf("resolved history differs (-want +got):\n%s", diff)
		}

		imported := emitImport(name, p)
		back := parse(name, imported, testOpts)
		if errs := importBlocking(back.ps.errs); len(errs) > 0 {
			t.Fatalf("import does not parse back: %v\ninput:\n%s\nimport:\n%s", (&ValidationError{Problems: errs}).Error(), data, imported)
		}
		if diff := cmp.Diff(cfg.Servers, back.cfg.Servers, ignorePos); diff != "" {
			t.Fatalf("import resolves differently (-want +got):\n%s\ninput:\n%s\nimport:\n%s", diff, data, imported)
		}
		if diff := cmp.Diff(cfg.Limits, back.cfg.Limits); diff != "" {
			t.Fatalf("import limits differ (-want +got):\n%s\ninput:\n%s\nimport:\n%s", diff, data, imported)
		}
		if diff := cmp.Diff(cfg.History, back.cfg.History); diff != "" {
			t.Fatalf("import history differs (-want +got):\n%s\ninput:\n%s\nimport:\n%s", diff, data, imported)
		}
	})
}

// FuzzParseSize checks that ParseSize never panics, accepts no negative
// size, and reads back what formatSize writes.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "1048576", "512B", "1 KiB", "2mb", "1GiB", "1.5MiB", "-1", "", " ", "9223372036854775807", "8589934592GiB", "1 Mi B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseSize(s)
		if err != nil {
			if v != 0 {
				t.Fatalf("ParseSize(%q) = %d with error %v, want 0", s, v, err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParseSize(%q) = %d, want a size >= 0", s, v)
		}
		text := formatSize(v)
		again, err := ParseSize(text)
		if err != nil || again != v {
			t.Fatalf("ParseSize(formatSize(%d) = %q) = %d, %v; want %d", v, text, again, err, v)
		}
		if u, err := ParseSize(strings.ToUpper(s)); err != nil || u != v {
			t.Fatalf("ParseSize(%q) = %d, %v; want %d as for %q", strings.ToUpper(s), u, err, v, s)
		}
	})
}
