package cli

import (
	"strings"
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
	// In the order the server wrote them, the required ones marked.
	// A bound is said in the header's words, "at least 8 characters", not
	// the validator's "minLength: got 5, want 8", and so is an array's
	// number of choices.
	askForm(p, []formStep{
		{"Username (username) — required", []string{"ab"}},
		{"at least 3 characters, got 2; try again.", []string{"ada"}},
		{"Email (email) — required", []string{"not-an-email", "ada@example.com"}},
		{"Password (password) — required", []string{"short"}},
		{"at least 8 characters, got 5; try again.", []string{"correct horse"}},
		{"Newsletter (newsletter)", []string{"y"}},
		{"Role (role)", []string{"Designer"}},
		{"Interests (interests) — array, choose 1 to 3", []string{"1,2,3,4"}},
		{"choose at most 3, got 4; try again.", []string{"2"}},
	})
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call register_user")
	wantContains(t, "the result", out, `Registration successful!`, `Username: ada`, `Email: ada@example.com`, `Newsletter: Yes`)
	if strings.Contains(out, "minLength") || strings.Contains(out, "maxItems") {
		t.Errorf("a bound is named by its keyword:\n%s", out)
	}

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
	askForm(p, []formStep{
		{"Username (username) — required", []string{"ada"}},
		{"Email (email) — required", []string{"ada@example.com"}},
		{"Password (password) — required", []string{"correct horse"}},
		{"Newsletter (newsletter)", []string{"n"}},
		{"Role (role)", []string{"Designer"}},
		{"Interests (interests)", []string{""}},
	})
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call register_user")
	wantContains(t, "the result", out, `Registration successful!`, `Username: ada`, `Newsletter: No`)
	if d.requests.Load() == before {
		t.Errorf("the daemon served no request: the call did not go through it")
	}
}
