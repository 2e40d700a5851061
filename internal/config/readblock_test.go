package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// TestReadBlockByName checks the reading side of the by-name passage on
// a block the code base does not have yet: every key, strings and lists
// of strings included, is read into the resolved field of the same name
// with its variables expanded, and written back by writeFields, with no
// code of its own; a key read by hand is left alone, and a value that
// does not expand is left out with its problem at its line. A string the
// schema holds to an enum is taken as written into a field of a named
// string type, a list of durations becomes one of time.Duration, a block
// within the block is read alike, and Pos is where each block's key is.
func TestReadBlockByName(t *testing.T) {
	t.Parallel()
	type fileBlock struct {
		Limit   *int                 `json:"limit,omitempty"`
		Wait    *schema.Duration     `json:"wait,omitempty"`
		Label   *string              `json:"label,omitempty"`
		Tags    []string             `json:"tags,omitempty"`
		Checked *string              `json:"checked,omitempty"`
		Broken  *string              `json:"broken,omitempty"`
		Mode    *string              `json:"mode,omitempty" jsonschema:"enum=one,enum=two"`
		Waits   []schema.BackoffStep `json:"waits,omitempty"`
		Inner   *struct {
			Limit *int    `json:"limit,omitempty"`
			Label *string `json:"label,omitempty"`
		} `json:"inner,omitempty"`
	}
	type mode string
	type inner struct {
		Limit int
		Label string
		Pos   Pos
	}
	type block struct {
		Limit   int
		Wait    time.Duration
		Label   string
		Tags    []string
		Checked string
		Broken  string
		Mode    mode
		Waits   []time.Duration
		Inner   inner
		Pos     Pos
	}
	const text = "blk:\n  limit: 3\n  wait: 90s\n  label: ${WHO}-$$1\n  tags: [a, \"${WHO}\"]\n  checked: by hand\n  broken: ${NOT_SET}\n  mode: two\n  waits: [1s, 2m]\n  inner:\n    limit: 4\n    label: ${WHO}\n"
	ps := &problems{}
	root := parseTree("f.yaml", []byte(text), ps)
	if root == nil {
		t.Fatalf("parsing: %v", ps.errs)
	}
	lookup := func(k string) (string, bool) { return map[string]string{"WHO": "ann"}[k], k == "WHO" }
	r := &resolver{tree: root, ps: ps, x: &expander{lookup: lookup}, lookup: lookup}
	var in fileBlock
	if err := decodeValue(instance(root.get("blk").value, nil), &in); err != nil {
		t.Fatal(err)
	}
	var b block
	r.readBlock(&b, &in, []any{"blk"}, "checked")
	want := block{Limit: 3, Wait: 90 * time.Second, Label: "ann-$1", Tags: []string{"a", "ann"}, Mode: "two", Waits: []time.Duration{time.Second, 2 * time.Minute},
		Inner: inner{Limit: 4, Label: "ann", Pos: Pos{File: "f.yaml", Line: 10, Col: 3}}, Pos: Pos{File: "f.yaml", Line: 1, Col: 1}}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	if len(ps.errs) != 1 || ps.errs[0].Field != "blk.broken" || ps.errs[0].Pos.Line != 7 || !strings.Contains(ps.errs[0].Message, "NOT_SET") {
		t.Errorf("problems %v, want one for blk.broken at line 7 naming NOT_SET", ps.errs)
	}
	var plain block // what readFields takes without the tree: the enum and the durations
	readFields(&plain, &in)
	if plain.Mode != "two" || len(plain.Waits) != 2 || plain.Label != "" {
		t.Errorf("readFields read mode %q, waits %v, label %q; want two, two waits and no label (a string to expand)", plain.Mode, plain.Waits, plain.Label)
	}
	var out fileBlock
	writeFields(&out, b)
	if got := *out.Label; got != "ann-$$1" {
		t.Errorf("wrote label %q, want %q (a literal $ written $$)", got, "ann-$$1")
	}
	if !reflect.DeepEqual(out.Tags, b.Tags) {
		t.Errorf("wrote tags %v, want %v", out.Tags, b.Tags)
	}
}
