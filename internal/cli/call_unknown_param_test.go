package cli

import (
	"strings"
	"testing"
)

// TestCallNotesUnknownParameters: server-everything's echo lets through
// arguments its schema does not name, so a misspelt one was sent without
// a word (a misspelt optional parameter silently ignored; here the
// required one reported only as missing). The call now notes each
// argument the schema does not name, with the closest parameter.
func TestCallNotesUnknownParameters(t *testing.T) {
	t.Parallel()
	url := everythingURL(t)
	r := runCLI(t, "call", "--url", url, "echo", "mesage=hi")
	wantCode(t, r, ExitFailure)
	wantContains(t, "echo mesage=hi", r.stderr, `note: echo has no parameter "mesage" in its input schema; it is sent as given (did you mean "message"?)`, "message: required, but missing")

	r = runCLI(t, "call", "--url", url, "get-sum", "a=1", "b=2", "c=3")
	wantCode(t, r, ExitOK)
	wantContains(t, "get-sum c=3", r.stderr, `note: get-sum has no parameter "c" in its input schema; it is sent as given (its parameters are: a, b)`)

	r = runCLI(t, "call", "--url", url, "echo", "message=hi")
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "no parameter") {
		t.Errorf("echo message=hi: got stderr %q, want no note", r.stderr)
	}
}
