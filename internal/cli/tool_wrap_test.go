package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestToolWrapsOnANarrowTerminal: on a 60-column terminal `switchboard
// tool` wraps a parameter's text under its column instead of cutting it,
// so that its allowed values stay readable ("one of …" was cut to
// `"New York…`), and keeps the name and type whole.
func TestToolWrapsOnANarrowTerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	a := &app{stdout: &out, stderr: io.Discard, termWidth: func(io.Writer) (int, bool) { return 60, true }}
	err := a.describeTool(control.ToolInfo{Server: "everything", Name: "get-structured-content", InputSchema: map[string]any{
		"type":     "object",
		"required": []any{"location"},
		"properties": map[string]any{
			"location": map[string]any{"type": "string", "description": "Choose city", "enum": []any{"New York", "Chicago", "Los Angeles"}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := strings.Cut(out.String(), "Parameters:\n")
	params, _, _ = strings.Cut(params, "Call it:")
	for _, line := range strings.Split(strings.TrimRight(params, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > 60 {
			t.Errorf("line %q is %d wide, want at most 60", line, n)
		}
	}
	if strings.Contains(params, "…") {
		t.Errorf("parameters:\n%s\nwant nothing cut", params)
	}
	if got := strings.Join(strings.Fields(params), " "); !strings.Contains(got, `location string, required Choose city; one of "New York", "Chicago", "Los Angeles"`) {
		t.Errorf("parameters:\n%s\nwant the name, type and every allowed value", params)
	}
}

// TestToolShowsWholeParameterDescriptions: tool cut each parameter's
// description at 70 characters (server-everything's errorPath ended in
// "When false (default), s…"), where the tool's own page is the place to
// read it; the description is now whole, on one line that the column
// wraps.
func TestToolShowsWholeParameterDescriptions(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "tool", "--url", everythingURL(t), "trigger-url-elicitation")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool trigger-url-elicitation", squeeze(r.stdout),
		"errorPath boolean Controls which elicitation mechanism is used. When false (default), sends an elicitation/create request (request path).",
		"so the client does not loop on the same error.; default false")
	if params, _, _ := strings.Cut(r.stdout, "Call it:"); strings.Contains(params, "…") {
		t.Errorf("tool trigger-url-elicitation:\n%s\nwant nothing cut", r.stdout)
	}
}
