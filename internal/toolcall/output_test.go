package toolcall_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// TestOutputSchemaChecked: a result whose structuredContent does not match
// the tool's outputSchema (or lacks it) is output_invalid, in the result
// and the history, with the problem's path; the result itself is returned
// as the server sent it.
func TestOutputSchemaChecked(t *testing.T) {
	srv := config.Server{Name: "wx", Transport: config.TransportHTTP, URL: testserver.Weather(t), Enabled: true, LoadTools: true,
		RequestTimeout: 10 * time.Second, ConnectTimeout: 10 * time.Second, TerminateOnClose: true}
	f := newFixture(t, []config.Server{srv}, nil)
	for _, tc := range []struct {
		tool, mode string
		status     toolcall.Status
		problem    string // the history's error message contains it
	}{
		{"weather", "valid", toolcall.StatusSuccess, ""},
		{"weather", "wrong_type", toolcall.StatusOutputInvalid, "; temp: got string, want number"},
		{"weather", "missing_field", toolcall.StatusOutputInvalid, "; city: required by the output schema, but missing"},
		{"weather", "no_structured", toolcall.StatusOutputInvalid, "; (structuredContent): missing"},
		{"weather", "tool_error", toolcall.StatusError, ""},
		{"plain", "", toolcall.StatusSuccess, ""},
	} {
		t.Run(tc.tool+"/"+tc.mode, func(t *testing.T) {
			id := "out-" + tc.tool + "-" + tc.mode
			res, err := f.eng.Call(context.Background(), toolcall.Request{ID: id, Server: "wx", Tool: tc.tool, Source: toolcall.SourceCLI,
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
				if rec.kind != toolcall.ErrorKindOutputInvalid || !strings.Contains(rec.msg, "the result of wx/weather does not match the tool's output schema"+tc.problem) {
					t.Errorf("history: got kind %q message %q, want %s with %q", rec.kind, rec.msg, toolcall.ErrorKindOutputInvalid, tc.problem)
				}
			}
		})
	}
}
