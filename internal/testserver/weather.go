package testserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WeatherOutputSchema is the outputSchema of [Weather]'s tool "weather".
const WeatherOutputSchema = `{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"}},"required":["temp","city"]}`

// Weather serves, over streamable HTTP on 127.0.0.1 until the test ends,
// a go-sdk server whose tool "weather" declares [WeatherOutputSchema] and
// answers with the text "mode M" and, as its argument mode says:
// structuredContent that matches (valid, the default), a temp that is a
// string (wrong_type), no city (missing_field), no structuredContent
// (no_structured), or a tool error (tool_error). Its tool "plain"
// declares no output schema. It returns the endpoint URL.
func Weather(t testing.TB) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "wx", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(WeatherOutputSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Mode string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mode " + args.Mode}},
				StructuredContent: map[string]any{"temp": 21.5, "city": "Oslo"}}
			switch args.Mode {
			case "wrong_type":
				res.StructuredContent = map[string]any{"temp": "warm", "city": "Oslo"}
			case "missing_field":
				res.StructuredContent = map[string]any{"temp": 3}
			case "no_structured":
				res.StructuredContent = nil
			case "tool_error":
				res.StructuredContent, res.IsError = nil, true
			}
			return res, nil
		})
	s.AddTool(&mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}
