package toolcall_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// TestHistoryNamesInvalidFields: a call refused for invalid arguments is
// in the history with the names of the fields that were wrong (what
// `history show` explains it with), never their values.
func TestHistoryNamesInvalidFields(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []config.Server{testserver.Server(t, "alpha", "ok")}, nil)
	_, err := f.eng.Call(context.Background(), toolcall.Request{ID: "bad-add", Server: "alpha", Tool: "add", Source: toolcall.SourceCLI,
		Arguments: map[string]any{"a": "two-secret-value"}})
	if fault.KindOf(err) != fault.Validation {
		t.Fatalf("add with a bad a and no b: got %v, want a validation error", err)
	}
	for _, r := range f.rec.all() {
		if r.ID != "bad-add" {
			continue
		}
		if want := "arguments for alpha/add are invalid (a, b)"; r.ErrorMessage != want {
			t.Errorf("history message: got %q, want %q", r.ErrorMessage, want)
		}
		if strings.Contains(r.ErrorMessage, "two-secret-value") {
			t.Errorf("the history holds an argument's value: %q", r.ErrorMessage)
		}
		return
	}
	t.Fatal("the refused call is not in the history")
}
