package cli

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestElicitWithTheTSFormExample: the TypeScript SDK's own form
// elicitation example (elicitationFormExample.js, over streamable HTTP)
// through switchboard call on a terminal: each field is asked with its
// title, in the order the server wrote them, a value the schema refuses (not an email, too short) is asked
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
	// In the order the server wrote them (username, email, password,
	// newsletter, role, interests), the required ones marked.
	p.expect("Username (username) — required")
	p.answer("> ", "ab")
	p.answer("try again", "ada")
	p.expect("Email (email) — required")
	p.answer("> ", "not-an-email")
	p.answer("try again", "ada@example.com")
	p.expect("Password (password) — required")
	p.answer("> ", "short")
	p.answer("try again", "correct horse")
	p.expect("Newsletter (newsletter)")
	p.answer("> ", "y")
	p.expect("Role (role)")
	p.answer("> ", "Designer")
	p.expect("Interests (interests)")
	p.answer("> ", "")
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call register_user")
	wantContains(t, "the result", out, `Registration successful!`, `Username: ada`, `Email: ada@example.com`, `Newsletter: Yes`)

	r := runCLI(t, "call", "--url", url, "register_user")
	wantContains(t, "piped", r.stdout+r.stderr, "Registration cancelled by user.", "--elicit")
}

// TestElicitTSFormExampleThroughTheDaemon: when a daemon runs the call,
// the form that comes back over the control socket is asked in the order
// the server wrote it too.
func TestElicitTSFormExampleThroughTheDaemon(t *testing.T) {
	t.Parallel()
	url := testpeer.StartElicitationFormExample(t)
	cfg := writeConfigWith(t, map[string]string{}, "  - name: forms\n    transport: http\n    url: "+url+"\n")
	d := startDaemon(t, cfg)
	before := d.requests.Load()

	p := startOnPTY(t, nil, "call", "--config", cfg, "forms", "register_user")
	p.expect("Please provide your registration information:")
	for _, f := range []struct{ label, answer string }{
		{"Username (username) — required", "ada"},
		{"Email (email) — required", "ada@example.com"},
		{"Password (password) — required", "correct horse"},
		{"Newsletter (newsletter)", "n"},
		{"Role (role)", "Designer"},
		{"Interests (interests)", ""},
	} {
		p.expect(f.label)
		p.answer("> ", f.answer)
	}
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call register_user")
	wantContains(t, "the result", out, `Registration successful!`, `Username: ada`, `Newsletter: No`)
	if d.requests.Load() == before {
		t.Errorf("the daemon served no request: the call did not go through it")
	}
}
