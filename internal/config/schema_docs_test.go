package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// The HTML comments that, on the line before a ```yaml fence, mark a
// documented switchboard.yaml that must not pass the schema:
// InvalidExample one that is wrong on purpose (to show an error), and
// plannedExample one that documents keys ahead of the code (remove the
// mark when they land: the test then fails until it is).
const (
	InvalidExample = "<!-- schema: invalid -->"
	plannedExample = "<!-- schema: planned -->"
)

// TestDocsExamplesMatchSchema checks every switchboard.yaml example in
// docs/*.md and README.md against the schema: a ```yaml block whose
// top-level keys are all keys of switchboard.yaml is one. An example
// marked InvalidExample must break a rule of the schema instead.
func TestDocsExamplesMatchSchema(t *testing.T) {
	checked, invalid := 0, 0
	eachDocsExample(t, func(f, before, src string, root *node) {
		checked++
		vs, err := schema.Validate(instance(root, nil))
		if err != nil {
			t.Fatal(err)
		}
		if before == InvalidExample || before == plannedExample {
			invalid++
			if len(vs) == 0 {
				t.Errorf("%s: an example marked %s breaks no rule of the schema (remove the mark):\n%s", f, before, src)
			}
			return
		}
		for _, v := range vs {
			t.Errorf("%s: example breaks the schema: %s: %s; %s\n%s", filepath.Base(f), strings.Join(v.Path, "."), v.Message, v.Fix, src)
		}
	})
	t.Logf("checked %d examples (%d marked as not passing)", checked, invalid)
	if checked < 15 {
		t.Errorf("found %d switchboard.yaml examples in the docs, want at least 15", checked)
	}
}

// eachDocsExample calls fn with every switchboard.yaml example in
// docs/*.md and README.md: a ```yaml block whose top-level keys are all
// keys of switchboard.yaml, with the line before its fence (a mark such as
// InvalidExample), its source and its parsed tree. Other blocks (a
// client's file, front matter, a workflow) are skipped.
func eachDocsExample(t *testing.T, fn func(file, before, src string, root *node)) {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?s)(?:([^\n]*)\n)?```ya?ml\n(.*?)```")
	for _, f := range append(files, "../../README.md") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatch(string(data), -1) {
			before, src := strings.TrimSpace(m[1]), m[2]
			ps := &problems{}
			root := parseTree(f, []byte(src), ps)
			if len(ps.errs) > 0 || root == nil || root.kind != kindMap || !nativeExample(root) {
				continue
			}
			fn(f, before, src, root)
		}
	}
}

// nativeExample reports whether every top-level key of a document is a
// key of switchboard.yaml.
func nativeExample(root *node) bool {
	for _, p := range root.pairs {
		if !contains(nativeKeys, p.key) && !strings.HasPrefix(p.key, "x-") {
			return false
		}
	}
	return len(root.pairs) > 0
}
