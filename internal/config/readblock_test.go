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
// does not expand is left out with its problem at its line.
func TestReadBlockByName(t *testing.T) {
	t.Parallel()
	type fileBlock struct {
		Limit   *int             `json:"limit,omitempty"`
		Wait    *schema.Duration `json:"wait,omitempty"`
		Label   *string          `json:"label,omitempty"`
		Tags    []string         `json:"tags,omitempty"`
		Checked *string          `json:"checked,omitempty"`
		Broken  *string          `json:"broken,omitempty"`
	}
	type block struct {
		Limit   int
		Wait    time.Duration
		Label   string
		Tags    []string
		Checked string
		Broken  string
	}
	const text = "blk:\n  limit: 3\n  wait: 90s\n  label: ${WHO}-$$1\n  tags: [a, \"${WHO}\"]\n  checked: by hand\n  broken: ${NOT_SET}\n"
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
	want := block{Limit: 3, Wait: 90 * time.Second, Label: "ann-$1", Tags: []string{"a", "ann"}}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("read (-want +got):\n%s", diff)
	}
	if len(ps.errs) != 1 || ps.errs[0].Field != "blk.broken" || ps.errs[0].Pos.Line != 7 || !strings.Contains(ps.errs[0].Message, "NOT_SET") {
		t.Errorf("problems %v, want one for blk.broken at line 7 naming NOT_SET", ps.errs)
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
