package notebook_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

// blockView is what a test checks of a parsed block.
type blockView struct {
	Line, EndLine int
	Explicit      string
	Tool          string
	ID            string
	Args          map[string]any
	Err           string // a substring of the error, or ""
}

func view(d *notebook.Document) []blockView {
	var out []blockView
	for _, b := range d.Blocks {
		v := blockView{Line: b.Line, EndLine: b.EndLine, Explicit: b.Explicit, Tool: b.Tool, ID: b.ID, Args: b.Args}
		if b.Err != nil {
			v.Err = b.Err.Error()
			v.Args = nil
		}
		out = append(out, v)
	}
	return out
}

func TestParse(t *testing.T) {
	servers := []string{"alpha", "beta"}
	tests := []struct {
		name string
		doc  string
		want []blockView
	}{
		{name: "a block", doc: "```alpha\ntool: echo\nmessage: hi\ncount: 3\n```\n",
			want: []blockView{{Line: 1, EndLine: 5, Explicit: "alpha", Tool: "echo", Args: map[string]any{"message": "hi", "count": uint64(3)}}}},
		{name: "other info strings are left alone", doc: "```go\ntool: x\n```\n\n```\ntool: x\n```\n\n    ```alpha\n    tool: indented code\n    ```\n"},
		{name: "an id and other attributes", doc: "```beta ^forecast {.wide}\ntool: t\n```\n",
			want: []blockView{{Line: 1, EndLine: 3, Explicit: "beta", Tool: "t", ID: "forecast", Args: map[string]any{}}}},
		{name: "an invalid id", doc: "```beta ^no/slash\ntool: t\n```\n",
			want: []blockView{{Line: 1, EndLine: 3, Explicit: "beta", Err: `invalid block id "^no/slash"`}}},
		{name: "mcp with a server", doc: "```mcp\nserver: beta\ntool: t\nx: 1\n```\n",
			want: []blockView{{Line: 1, EndLine: 5, Explicit: "beta", Tool: "t", Args: map[string]any{"x": uint64(1)}}}},
		{name: "mcp without a server", doc: "```mcp\ntool: t\n```\n",
			want: []blockView{{Line: 1, EndLine: 3, Tool: "t", Args: map[string]any{}}}},
		{name: "a server-named block keeps server as a parameter", doc: "```alpha\ntool: t\nserver: s\n```\n",
			want: []blockView{{Line: 1, EndLine: 4, Explicit: "alpha", Tool: "t", Args: map[string]any{"server": "s"}}}},
		{name: "inside a longer fence", doc: "````markdown\n```alpha\ntool: t\n```\n````\n"},
		{name: "front matter is not a heading", doc: "---\ntitle: x\n---\n```alpha\ntool: t\n```\n",
			want: []blockView{{Line: 4, EndLine: 6, Explicit: "alpha", Tool: "t", Args: map[string]any{}}}},
		{name: "bad YAML names the block's line", doc: "# H\n\n```alpha\ntool: t\nx: [1\n```\n",
			want: []blockView{{Line: 3, EndLine: 6, Explicit: "alpha", Err: "invalid YAML: line 2 of the block"}}},
		{name: "not a mapping", doc: "```alpha\n- a\n```\n", want: []blockView{{Line: 1, EndLine: 3, Explicit: "alpha", Err: "must be a mapping"}}},
		{name: "empty", doc: "```alpha\n```\n", want: []blockView{{Line: 1, EndLine: 2, Explicit: "alpha", Err: "the block is empty"}}},
		{name: "no tool", doc: "```alpha\nx: 1\n```\n", want: []blockView{{Line: 1, EndLine: 3, Explicit: "alpha", Err: "tool: is missing"}}},
		{name: "not closed", doc: "```alpha\ntool: t\n", want: []blockView{{Line: 1, EndLine: 2, Explicit: "alpha", Err: "the fence is not closed"}}},
		{name: "a quote ends an unclosed fence", doc: "> ```alpha\n> tool: t\n\n```\n",
			want: []blockView{{Line: 1, EndLine: 2, Explicit: "alpha", Err: "the fence is not closed"}}},
		{name: "a result without its closing marker", doc: "```alpha\ntool: t\n```\n<!-- switchboard:result hash=x status=success -->\nok\n",
			want: []blockView{{Line: 1, EndLine: 3, Explicit: "alpha", Err: "no closing marker"}}},
		{name: "blocks inside a result are not run", doc: "```alpha\ntool: t\n```\n\n<!-- switchboard:result hash=x status=success -->\n```alpha\ntool: inner\n```\n<!-- /switchboard:result -->\n\n```beta\ntool: u\n```\n",
			want: []blockView{
				{Line: 1, EndLine: 3, Explicit: "alpha", Tool: "t", Args: map[string]any{}},
				{Line: 11, EndLine: 13, Explicit: "beta", Tool: "u", Args: map[string]any{}},
			}},
		{name: "tabs and CRLF", doc: "- ```alpha\r\n\ttool: t\r\n\tk: v\r\n  ```\r\n",
			want: []blockView{{Line: 1, EndLine: 4, Explicit: "alpha", Tool: "t", Args: map[string]any{"k": "v"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := notebook.Parse("doc.md", []byte(tt.doc), servers)
			got := view(d)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d blocks %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				w := tt.want[i]
				if w.Err != "" {
					if !strings.Contains(got[i].Err, w.Err) {
						t.Errorf("block %d error: got %q, want it to contain %q", i, got[i].Err, w.Err)
					}
					got[i].Err = w.Err
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadings(t *testing.T) {
	doc := "---\nx: 1\n---\n# One\n\nTwo\n---\n\n### Three ###\n\n## Four\n\n> # Quoted\n"
	d := notebook.Parse("doc.md", []byte(doc), nil)
	var got []string
	for _, h := range d.Headings {
		parent := ""
		if h.Parent >= 0 {
			parent = d.Headings[h.Parent].Text
		}
		got = append(got, fmt.Sprintf("%s@%d<%s", h, h.Line, parent))
	}
	want := []string{"# One@4<", "## Two@6<One", "### Three@9<Two", "## Four@11<One", "# Quoted@13<"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headings (-want +got):\n%s", diff)
	}
}

// FuzzRunTwice checks that running any document twice changes nothing the
// second time: the results written by the first run are found again.
func FuzzRunTwice(f *testing.F) {
	for _, s := range []string{
		twoBlocks,
		"- ```alpha ^id\n  tool: t\n  ```\n\n> ```mcp\n> tool: t\n> ```\n",
		"1. ```alpha\n   tool: t\n   ```\n2. x\n",
		"```alpha\ntool: t\n```",
		"```alpha\ntool: \"<!-- /switchboard:result -->\"\n```\n",
		"```alpah ^x\ntool: t\n```\n\n```alpha ^x\ntool: t\n```\n\n```alpha ^x\ntool: u\n```\n",
	} {
		f.Add([]byte(s))
	}
	cfg := testConfig(okServers(f, "alpha")...)
	caller := &fakeCaller{call: func(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
		return textResult(req.Tool + "\n" + req.Tool), nil
	}}
	f.Fuzz(func(t *testing.T, src []byte) {
		p := filepath.Join(t.TempDir(), "doc.md")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller}); err != nil {
			return // front matter problems, too many blocks
		}
		first, _ := os.ReadFile(p)
		rep, err := notebook.Run(context.Background(), p, notebook.Options{Config: cfg, Caller: caller})
		if err != nil {
			t.Fatalf("second run: %v", err)
		}
		if rep.Written {
			second, _ := os.ReadFile(p)
			t.Fatalf("second run changed the document\nsource:\n%q\nfirst:\n%q\nsecond:\n%q", src, first, second)
		}
	})
}
