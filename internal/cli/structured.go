package cli

import (
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// printStructured writes a result's structuredContent after its content,
// as indented JSON: under a "structuredContent:" line when content came
// before it, alone when there was none (what a script reads).
func (a *app) printStructured(out io.Writer, res *mcp.CallToolResult) error {
	if res.StructuredContent == nil {
		return nil
	}
	if len(res.Content) > 0 {
		if _, err := fmt.Fprintln(out, "structuredContent:"); err != nil {
			return err
		}
	}
	return a.printJSONTo(out, res.StructuredContent)
}

// warnOutputInvalid tells the person on stderr that the result does not
// match the tool's output schema, and where.
func (a *app) warnOutputInvalid(oe *toolcall.OutputError) {
	if oe == nil {
		return
	}
	fmt.Fprintf(a.stderr, "warning: %s (the result is shown as the server sent it)\n", oe.Message)
	for _, f := range oe.Fields {
		fmt.Fprintf(a.stderr, "  %s: %s\n", f.Field, f.Message)
	}
}
