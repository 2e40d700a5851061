package toolcall

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// weatherOutputSchema is the output schema of outputServer's tools.
const weatherOutputSchema = `{"type":"object","properties":{"temp":{"type":"number"},"city":{"type":"string"}},"required":["temp","city"]}`

// outputServer is a go-sdk streamable-HTTP server whose tool "weather"
// declares weatherOutputSchema and answers as its argument "mode" says:
// valid, wrong_type, missing_field, no_structured, or tool_error; "plain"
// declares none.
func outputServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "wx", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "weather", InputSchema: map[string]any{"type": "object"}, OutputSchema: json.RawMessage(weatherOutputSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Mode string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "mode " + args.Mode}}}
			switch args.Mode {
			case "valid":
				res.StructuredContent = map[string]any{"temp": 21.5, "city": "Oslo"}
			case "wrong_type":
				res.StructuredContent = map[string]any{"temp": "warm", "city": "Oslo"}
			case "missing_field":
				res.StructuredContent = map[string]any{"temp": 3}
			case "tool_error":
				res.IsError = true
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

// TestOutputSchemaChecked: a result whose structuredContent does not match
// the tool's outputSchema (or lacks it) is output_invalid, in the result
// and the history, with the problem's path; the result itself is returned
// as the server sent it.
func TestOutputSchemaChecked(t *testing.T) {
	srv := config.Server{Name: "wx", Transport: config.TransportHTTP, URL: outputServer(t), Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
	f := newFixture(t, []config.Server{srv}, nil)
	for _, tc := range []struct {
		tool, mode string
		status     Status
		problem    string // the history's error message contains it
	}{
		{"weather", "valid", StatusSuccess, ""},
		{"weather", "wrong_type", StatusOutputInvalid, "; temp: got string, want number"},
		{"weather", "missing_field", StatusOutputInvalid, "; city: required by the output schema, but missing"},
		{"weather", "no_structured", StatusOutputInvalid, "; (structuredContent): missing"},
		{"weather", "tool_error", StatusError, ""},
		{"plain", "", StatusSuccess, ""},
	} {
		t.Run(tc.tool+"/"+tc.mode, func(t *testing.T) {
			id := "out-" + tc.tool + "-" + tc.mode
			res, err := f.eng.Call(context.Background(), Request{ID: id, Server: "wx", Tool: tc.tool, Source: SourceCLI,
				Arguments: map[string]any{"mode": tc.mode}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("status: got %s, want %s (output error %+v)", res.Status, tc.status, res.OutputError)
			}
			if want := "mode " + tc.mode; tc.tool == "weather" && textOf(res) != want {
				t.Errorf("content: got %q, want %q, unchanged", textOf(res), want)
			}
			if tc.mode == "wrong_type" {
				if got, _ := res.StructuredContent.(map[string]any); got == nil || got["temp"] != "warm" {
					t.Errorf("structuredContent: got %#v, want the server's, unchanged", res.StructuredContent)
				}
			}
			if (res.OutputError != nil) != (tc.problem != "") {
				t.Errorf("output error: got %+v, want one: %v", res.OutputError, tc.problem != "")
			}
			var rec *struct{ status, kind, msg string }
			for _, r := range f.rec.all() {
				if r.ID == id {
					rec = &struct{ status, kind, msg string }{r.Status, r.ErrorKind, r.ErrorMessage}
				}
			}
			if rec == nil {
				t.Fatal("the call is not in the history")
			}
			if rec.status != string(tc.status) {
				t.Errorf("history status: got %s, want %s", rec.status, tc.status)
			}
			if tc.problem != "" {
				if rec.kind != ErrorKindOutputInvalid || !strings.Contains(rec.msg, "the result of wx/weather does not match the tool's output schema"+tc.problem) {
					t.Errorf("history: got kind %q message %q, want %s with %q", rec.kind, rec.msg, ErrorKindOutputInvalid, tc.problem)
				}
			}
		})
	}
}
