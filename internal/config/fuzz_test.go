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
	for _, tt := range BadFiles {
		f.Add([]byte(tt.Src))
	}
	const name = "testdata/fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		p := parse(name, data, TestOpts)
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
		if diff := cmp.Diff(cfg.Servers, again.Servers, IgnorePos); diff != "" {
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
		back := parse(name, imported, TestOpts)
		if errs := importBlocking(back.ps.errs); len(errs) > 0 {
			t.Fatalf("import does not parse back: %v\ninput:\n%s\nimport:\n%s", (&ValidationError{Problems: errs}).Error(), data, imported)
		}
		if diff := cmp.Diff(cfg.Servers, back.cfg.Servers, IgnorePos); diff != "" {
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

// FuzzParseTOML checks that reading a TOML file (Codex's config.toml)
// never panics, that every node it builds has a position inside the file,
// and that what it reads as a Codex file resolves without panicking.
func FuzzParseTOML(f *testing.F) {
	if data, err := os.ReadFile("testdata/clients/codex/config.toml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"[mcp_servers.a]\ncommand = \"npx\"\n",
		"[[a]]\nx = 1\n[a.b]\ny = [1, {z = 2}]\n",
		"a.b.c = 'x'\n[d]\ne = 1979-05-27T07:32:00Z\n",
		"[mcp_servers.a]\nargs = \"x\"\nenv = { A = 1 }\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps := &problems{}
		root := parseTOML("f.toml", string(data), ps)
		lines := strings.Count(string(data), "\n") + 1
		var walk func(n *node)
		walk = func(n *node) {
			if n.pos.Line < 1 || n.pos.Line > lines || n.pos.Col < 1 {
				t.Fatalf("node at %v, outside the %d lines of %q", n.pos, lines, data)
			}
			for _, p := range n.pairs {
				walk(p.value)
			}
			for _, it := range n.items {
				walk(it)
			}
		}
		if root != nil {
			walk(root)
		}
		_ = parse("f.toml", data, TestOpts)
	})
}
