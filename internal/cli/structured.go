package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// printStructured writes a result's structuredContent after its content,
// as indented JSON: under a "structuredContent:" line when content came
// before it, alone when there was none (what a script reads). Content
// that already is structuredContent serialized as text (what the
// specification asks of a tool, for older clients) was printed above, so
// it is not printed twice.
func (a *app) printStructured(out io.Writer, res *mcp.CallToolResult) error {
	if res.StructuredContent == nil || echoesStructured(res) {
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

// echoesStructured reports whether a text block of res holds the same JSON
// value as its structuredContent.
func echoesStructured(res *mcp.CallToolResult) bool {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return false
	}
	var want any
	if json.Unmarshal(b, &want) != nil {
		return false
	}
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		var got any
		if json.Unmarshal([]byte(t.Text), &got) == nil && reflect.DeepEqual(got, want) {
			return true
		}
	}
	return false
}
