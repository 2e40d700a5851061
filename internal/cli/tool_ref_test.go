package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// shipSchema is a tool's input schema as pydantic (FastMCP) writes one: a
// model parameter is a $ref into $defs, an optional one an anyOf of that
// $ref and null.
const shipSchema = `{"type":"object",
 "$defs":{"Address":{"type":"object","title":"Address","properties":{"street":{"type":"string"},"zip":{"type":"string","description":"Postal code"}},"required":["street"]},
          "Priority":{"type":"integer","enum":[1,2,3],"title":"Priority"}},
 "properties":{"name":{"type":"string"},
               "home":{"$ref":"#/$defs/Address","description":"Home address"},
               "address":{"anyOf":[{"$ref":"#/$defs/Address"},{"type":"null"}],"default":null},
               "priority":{"$ref":"#/$defs/Priority"}},
 "required":["name","home"]}`

// refServerURL serves, over streamable HTTP until t ends, a go-sdk server
// whose tool ship has shipSchema and answers with the arguments it got.
func refServerURL(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "refs", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ship", InputSchema: json.RawMessage(shipSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(h.Close)
	return h.URL
}

// TestToolAndCallFollowRefs: a parameter whose schema is a $ref (a
// pydantic model) was shown as "any" without its fields, and an optional
// one (anyOf $ref and null) as "null", so that call refused any object
// given for it ("want null"). Both are now read through the $ref: the go-sdk
// conformance server's json_schema_2020_12_tool, and a go-sdk server with
// a pydantic-shaped schema.
func TestToolAndCallFollowRefs(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "tool", "--stdio", testpeer.ConformanceCommand(t), "json_schema_2020_12_tool")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool json_schema_2020_12_tool", squeeze(r.stdout), "address object", "address.city string", "address.street string")

	url := refServerURL(t)
	r = runCLI(t, "tool", "--url", url, "ship")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool ship", squeeze(r.stdout), "home object, required Home address", "home.street string, required",
		"home.zip string Postal code", "address null|object default null", "address.street string, required", "priority integer one of 1, 2, 3")

	r = runCLI(t, "call", "--url", url, "ship", "name=a", `home={"street":"x","zip":"02134"}`, `address={"street":"y"}`, "priority=2")
	wantCode(t, r, ExitOK)
	wantContains(t, "call ship", r.stdout, `"address":{"street":"y"}`, `"home":{"street":"x","zip":"02134"}`, `"priority":2`)

	r = runCLI(t, "call", "--url", url, "ship", "name=a", `home={"street":"x"}`, "priority=high")
	wantCode(t, r, ExitFailure)
	wantContains(t, "call ship priority=high", r.stderr, `priority: want an integer, got "high"`)
}

// squeeze is s with each run of white space made one space: a table's
// rows as words.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestToolShowsTheOutputSchema: call holds a result to the tool's output
// schema, but neither tool nor tools --json showed that schema, so a
// server author could not see what their structuredContent is checked
// against (server-everything's get-structured-content).
func TestToolShowsTheOutputSchema(t *testing.T) {
	t.Parallel()
	url := everythingURL(t)
	r := runCLI(t, "tool", "--url", url, "get-structured-content")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool get-structured-content", squeeze(r.stdout), "Result (structuredContent): conditions string, required Weather conditions description",
		"humidity number, required Humidity percentage", "temperature number, required Temperature in celsius")

	r = runCLI(t, "tools", "--url", url, "--json")
	wantCode(t, r, ExitOK)
	var tools []struct {
		Name         string `json:"name"`
		OutputSchema *struct {
			Properties map[string]any `json:"properties"`
		} `json:"outputSchema"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, r.stdout)
	}
	for _, tl := range tools {
		if tl.Name != "get-structured-content" {
			continue
		}
		if tl.OutputSchema == nil || tl.OutputSchema.Properties["temperature"] == nil {
			t.Errorf("tools --json: get-structured-content has outputSchema %+v, want the server's, with temperature", tl.OutputSchema)
		}
		return
	}
	t.Errorf("tools --json lists no get-structured-content:\n%s", r.stdout)
}
