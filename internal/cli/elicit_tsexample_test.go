package cli

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestElicitWithTheTSFormExample: the TypeScript SDK's own form
// elicitation example (elicitationFormExample.js, over streamable HTTP)
// through switchboard call on a terminal: each field is asked with its
// title, a value the schema refuses (not an email, too short) is asked
// again, an optional array is left out, the boolean and the titled choice
// take their answers, and the server gets the
// accepted form; piped, the question is declined with a note, and the
// server says so.
func TestElicitWithTheTSFormExample(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	url := testpeer.StartElicitationFormExample(t)

	p := startOnPTY(t, nil, "call", "--url", url, "register_user")
	p.expect("Please provide your registration information:")
	// Required fields first, then by name (the SDK hands the schema over
	// as a map: elicit.go).
	p.expect("Email (email)")
	p.answer("> ", "not-an-email")
	p.answer("try again", "ada@example.com")
	p.expect("Password (password)")
	p.answer("> ", "short")
	p.answer("try again", "correct horse")
	p.expect("Username (username)")
	p.answer("> ", "ab")
	p.answer("try again", "ada")
	p.expect("Interests (interests)")
	p.answer("> ", "")
	p.expect("Newsletter (newsletter)")
	p.answer("> ", "y")
	p.expect("Role (role)")
	p.answer("> ", "Designer")
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call register_user")
	wantContains(t, "the result", out, `Registration successful!`, `Username: ada`, `Email: ada@example.com`, `Newsletter: Yes`)

	r := runCLI(t, "call", "--url", url, "register_user")
	wantContains(t, "piped", r.stdout+r.stderr, "Registration cancelled by user.", "--elicit")
}
