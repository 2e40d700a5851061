// Internal on purpose: renders one embedded resource with renderContent, a result no test server returns with an unclosed fence.

package notebook

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

func TestMarkdownResourceFenceIsClosed(t *testing.T) {
	// A result that declares itself Markdown is written as Markdown; a
	// fence it leaves open is closed so that it cannot swallow the rest of
	// the document.
	var w strings.Builder
	res := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "x://r", MIMEType: "text/markdown", Text: "# R\n```go\nx := 1\n"}}
	if err := renderContent(&w, &Block{Tool: "t"}, toolcall.ContentMarkdown, res, &files{}, new(int)); err != nil {
		t.Fatal(err)
	}
	if want := "# R\n```go\nx := 1\n```\n"; w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}
}
