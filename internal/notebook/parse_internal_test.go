// Internal on purpose: fuzzes the parser against the byte offsets of blocks and results (start, end), which only the package sees.

package notebook

import "testing"

// FuzzParse checks that any input parses without panicking into blocks
// in document order whose offsets lie within the document.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"# Doc\n\n```alpha\ntool: echo\nmessage: one\n```\n\n```alpha\ntool: echo\nmessage: two\n```\n",
		"- ```alpha ^id\n  tool: t\n  ```\n  <!-- switchboard:result hash=1 status=success -->\n  x\n  <!-- /switchboard:result -->\n",
		"> ```mcp\n> server: alpha\n> tool: t\n> ```\n",
		"---\nswitchboard:\n  bindings:\n    - heading: A\n      server: alpha\n---\n# A\n```mcp\ntool: t\n```\n",
		"````alpha\n```\ntool: t\n````\n",
		"```alpha\ntool: [\n```\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d := Parse("doc.md", src, []string{"alpha"})
		prevEnd := 0
		for _, b := range d.Blocks {
			if b.start < prevEnd || b.start > b.end || b.end > len(src) {
				t.Fatalf("block at line %d: offsets %d..%d out of order (previous end %d, length %d)", b.Line, b.start, b.end, prevEnd, len(src))
			}
			if b.Line < 1 || b.EndLine < b.Line {
				t.Fatalf("block lines %d..%d", b.Line, b.EndLine)
			}
			prevEnd = b.end
			if b.Result != nil {
				if b.Result.start < b.end || b.Result.end > len(src) {
					t.Fatalf("result %d..%d outside %d..%d", b.Result.start, b.Result.end, b.end, len(src))
				}
				prevEnd = b.Result.end
			}
			if b.Err == nil && b.Tool == "" {
				t.Fatalf("block at line %d has no tool and no error", b.Line)
			}
			_ = b.Hash()
		}
	})
}
