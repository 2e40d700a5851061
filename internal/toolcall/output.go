package toolcall

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// ErrorKindOutputInvalid is the history's error kind of a call whose
// result does not match its tool's output schema.
const ErrorKindOutputInvalid = "output_invalid"

// OutputError says how a result's structuredContent fails its tool's
// outputSchema: a message naming the server and tool, and one detail per
// problem, named by its path in structuredContent.
type OutputError struct {
	Message string              `json:"message"`
	Fields  []fault.FieldDetail `json:"fields,omitempty"`
}

// String is the message followed by each problem, as the history keeps it.
func (o *OutputError) String() string {
	var b strings.Builder
	b.WriteString(o.Message)
	for _, f := range o.Fields {
		b.WriteString("; ")
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}

// checkOutput checks the server's result, as it came (before truncation
// or redaction change it), against the tool's output schema.
func (c *call) checkOutput(res *mcp.CallToolResult) *OutputError {
	err := c.tool.ValidateOutput(res.StructuredContent, res.IsError)
	if err == nil {
		return nil
	}
	fe := fault.As(err)
	return &OutputError{Message: fe.Message, Fields: fe.Fields}
}
