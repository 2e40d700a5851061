package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/llm"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// asksConfig writes a configuration with the "asks" test server and, when
// srv is set, an llm: block pointing at it.
func asksConfig(t *testing.T, srv *llmtest.Server, extra ...string) string {
	t.Helper()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	for _, k := range []string{llm.EnvBaseURL, llm.EnvModel, llm.EnvAPIKey, llm.EnvOpenAIAPIKey, llm.EnvOpenAIBaseURL} {
		setenv(t, k, "")
	}
	exe := testserver.Command(t)
	var b strings.Builder
	fmt.Fprintf(&b, "defaults:\n  connect_timeout: 10s\n  request_timeout: 60s\n")
	fmt.Fprintf(&b, "security:\n  allowed_commands: [%q]\n", exe)
	if srv != nil {
		fmt.Fprintf(&b, "llm:\n  base_url: %s\n  model: test-model\n  stream: false\n  max_retries: 0\n", srv.URL())
	}
	b.WriteString(strings.Join(extra, ""))
	fmt.Fprintf(&b, "servers:\n  - name: asks\n    command: %q\n    env: %s\n", exe, testserver.EnvYAML("asks"))
	path := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestElicitFormOnATerminal: a go-sdk server's form is asked field by
// field on a real terminal: defaults kept with Enter, choices by number
// or title, a pattern, a bound and a date format checked with a re-ask,
// then accepted; the server gets the typed values.
func TestElicitFormOnATerminal(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	p := startOnPTY(t, nil, "call", "--config", cfg, "asks", "ask")
	p.expect("asks asks: Sign up for the trip")
	// In the order the server wrote them (the go-sdk writes a map's keys
	// sorted), the required ones marked.
	p.expect("Login (login) — required, string, pattern ^[a-z]+$")
	p.expect("Lower-case letters only")
	p.answer("> ", "Ada")
	p.answer("try again", "ada")
	p.expect("Notify me (notify)")
	p.answer("[Y/n] > ", "n")
	p.expect("ratio")
	p.answer("> ", "") // optional, left out
	p.expect("Seats (seats) — required, integer, min 1, max 5")
	p.answer("[2] > ", "9")
	p.answer("try again", "4")
	p.expect("start — string, date")
	p.answer("> ", "next week")
	p.answer("try again", "2026-12-01")
	p.expect("tags")
	p.expect(`["a"]`)
	p.answer(" > ", "2, c")
	p.expect("Team (team)")
	p.expect("2) Blue team (blue)")
	p.answer("[blue] > ", "Red team")
	p.answer("Send this answer to asks? [A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call asks ask")
	wantContains(t, "the result", out, `"action":"accept"`, `"login":"ada"`, `"team":"red"`, `"seats":4`, `"notify":false`, `"start":"2026-12-01"`, `"tags":["b","c"]`)
	if strings.Contains(out, `"ratio"`) {
		t.Errorf("the optional ratio left empty was sent:\n%s", out)
	}
}

// TestElicitDeclineAndCancelOnATerminal: :decline at a field declines,
// c at the end cancels; the server sees each.
func TestElicitDeclineAndCancelOnATerminal(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	p := startOnPTY(t, nil, "call", "--config", cfg, "asks", "ask")
	p.expect("Login (login)")
	p.answer("> ", ":decline")
	out := p.succeeds("call")
	wantContains(t, "declined", out, `{"action":"decline"}`)

	p = startOnPTY(t, nil, "call", "--config", cfg, "asks", "ask")
	for _, ans := range []string{"bob", "", "", "", "", "", ""} {
		p.answer("> ", ans)
	}
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "c")
	out = p.succeeds("call")
	wantContains(t, "cancelled", out, `{"action":"cancel"}`)
}

// TestElicitEverythingOnATerminal: server-everything's elicitation tool,
// which lists only for a client that declares elicitation, is answered on
// a terminal (today's failure: "client does not support elicitation").
func TestElicitEverythingOnATerminal(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	p := startOnPTY(t, nil, "call", "--url", everythingURL(t), "trigger-elicitation-request")
	// In the order the server wrote them.
	askForm(p, []formStep{
		{"Your full, legal name", []string{"Ada Lovelace"}},
		{"Agree to the terms and conditions", []string{"y"}},
		{"Favorite first line of a story", []string{""}},
		{"Your email address", []string{"not-an-email", "ada@example.com"}},
		{"Portfolio / personal website", []string{""}},
		{"Your date of birth", []string{"yesterday", "1815-12-10"}},
		{"Your favorite integer", []string{"7"}},
		{"Favorite number", []string{""}},
		{"Choose your favorite friend", []string{"Joey"}},
		{"Choose your favorite instruments", []string{""}},
		{"Choose your favorite hero", []string{"Wonder Woman"}},
		{"Choose your favorite types of fish", []string{""}},
		{"Choose your favorite type of pet", []string{"2"}},
	})
	p.answer("[A]ccept", "")
	out := p.succeeds("call")
	wantContains(t, "the result", out, "User provided the requested information", "- Name: Ada Lovelace", "- Email: ada@example.com",
		"- Favorite Integer: 7", "- Birthdate: 1815-12-10", `"Joey"`, `"hero-3"`, `"pet-2"`)
}

// formStep is one field of a form asked on the terminal: what shows it
// (its label or description), then the answers typed in turn, each after
// the first at "try again".
type formStep struct {
	shows   string
	answers []string
}

// askForm answers a form's fields in the order given, failing the test
// when a field shows out of that order.
func askForm(p *ptyRun, steps []formStep) {
	p.t.Helper()
	for _, st := range steps {
		p.expect(st.shows)
		for i, ans := range st.answers {
			if i == 0 {
				p.answer("> ", ans)
			} else {
				p.answer("try again", ans)
			}
		}
	}
}

// TestElicitWithoutATerminal: piped, a question is declined with a note
// saying why and how to answer; --elicit accept-defaults answers with the
// defaults, or declines naming the field that has none.
func TestElicitWithoutATerminal(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	r := runCLI(t, "call", "--config", cfg, "asks", "ask")
	wantCode(t, r, ExitOK)
	wantContains(t, "piped", r.stdout, `{"action":"decline"}`)
	wantContains(t, "piped", r.stderr, `asks asked: "Sign up for the trip"; declined: no terminal to ask on`, "--elicit accept-defaults")

	r = runCLI(t, "call", "--config", cfg, "asks", "ask", "--elicit", "accept-defaults")
	wantCode(t, r, ExitOK)
	wantContains(t, "accept-defaults", r.stdout, `{"action":"decline"}`)
	wantContains(t, "accept-defaults", r.stderr, `required field "login" has no default`)

	r = runCLI(t, "call", "--config", cfg, "asks", "ask", "--elicit", "maybe")
	wantCode(t, r, ExitUsage)
	wantContains(t, "bad --elicit", r.stderr, `--elicit "maybe" is not a choice; give ask, decline or accept-defaults`)

	r = runCLI(t, "call", "--url", everythingURL(t), "trigger-url-elicitation", "url=https://example.com/x")
	wantCode(t, r, ExitOK)
	wantContains(t, "url piped", r.stderr, "asked you to open https://example.com/x", "declined: no terminal")
}

// TestElicitURLOnATerminal: URL mode shows the URL and its host, opens
// the browser once the person says so, and accepts once the person says they are done.
func TestElicitURLOnATerminal(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	browser := filepath.Join(dir, "browser")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+opened+".tmp && mv "+opened+".tmp "+opened+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := startOnPTY(t, []string{"BROWSER=" + browser}, "call", "--config", cfg, "asks", "open")
	p.expect("asks asks: Connect your account")
	p.expect("host: example.com")
	p.expect("https://example.com/connect?x=1")
	p.expect("Open example.com in your browser? [y/N] ")
	if _, err := os.Stat(opened); err == nil {
		t.Fatal("the browser was started before the person said so")
	}
	p.send("y")
	p.answer("Press Enter when you are done there", "")
	out := p.succeeds("call")
	wantContains(t, "url", out, `{"action":"accept"}`)
	eventuallyCLI(t, 30*time.Second, "the browser to be started", func() bool {
		_, err := os.Stat(opened)
		return err == nil
	})
	if b, err := os.ReadFile(opened); err != nil || string(b) != "https://example.com/connect?x=1" {
		t.Errorf("the browser was given %q (%v), want the URL", b, err)
	}
}

// TestSamplingOnATerminal: a server's sampling request is shown (system
// prompt, max tokens, preferences, messages), sent to the llm: endpoint
// once approved, and the model's answer is shown and approved before the
// server gets it.
func TestSamplingOnATerminal(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []llmtest.Request
	srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return llmtest.Response{Text: "Cables hum softly"}
	})
	cfg := asksConfig(t, srv)
	p := startOnPTY(t, nil, "call", "--config", cfg, "asks", "sample")
	p.expect("asks asks for a completion by test-model")
	p.expect("system prompt: You write haiku.")
	p.expect("max tokens: 64")
	p.expect("hints claude-haiku")
	p.expect("user: Write a haiku about switchboards.")
	p.answer("Send this to test-model? [y/N] ", "y")
	p.expect("Cables hum softly")
	p.answer("Return this answer to asks? [Y/n] ", "")
	out := p.succeeds("call")
	wantContains(t, "result", out, `"text":"Cables hum softly"`, `"model":"test-model"`)
	mu.Lock()
	if len(got) != 1 || got[0].MaxTokens != 64 || len(got[0].Messages) != 2 || got[0].Messages[0].Content != "You write haiku." {
		t.Errorf("the endpoint got %+v, want one request with the system prompt and max_tokens 64", got)
	}
	mu.Unlock()

	// Declined on the terminal: the endpoint is not asked.
	p = startOnPTY(t, nil, "call", "--config", cfg, "asks", "sample")
	p.answer("Send this to test-model? [y/N] ", "n")
	out, _ = p.wait()
	wantContains(t, "declined", out, "declined asks's request for a completion: the person declined it")
	mu.Lock()
	if len(got) != 1 {
		t.Errorf("a declined request reached the endpoint (%d requests)", len(got))
	}
	mu.Unlock()
}

// TestSamplingWithoutATerminal: piped, sampling is declined naming
// --sampling approve; with it, the model answers unattended; with no llm:
// configured, the reason names the key.
func TestSamplingWithoutATerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t, func(llmtest.Request) llmtest.Response { return llmtest.Response{Text: "unattended haiku"} })
	cfg := asksConfig(t, srv)
	r := runCLI(t, "call", "--config", cfg, "asks", "sample")
	wantCode(t, r, ExitFailure)
	wantContains(t, "piped", r.stderr, "no terminal to approve it on; pass --sampling approve")

	r = runCLI(t, "call", "--config", cfg, "asks", "sample", "--sampling", "approve")
	wantCode(t, r, ExitOK)
	wantContains(t, "approve", r.stdout, "unattended haiku")
	wantContains(t, "approve", r.stderr, "sent to test-model (--sampling approve)")

	bare := asksConfig(t, nil)
	r = runCLI(t, "call", "--config", bare, "asks", "sample", "--sampling", "approve")
	wantCode(t, r, ExitFailure)
	wantContains(t, "no llm", r.stderr, "no language model is configured")
	if !strings.Contains(r.stderr, "llm.model") {
		t.Errorf("the reason does not name llm.model:\n%s", r.stderr)
	}
}

// TestElicitThroughTheDaemon: when a daemon runs the call, the server's
// question comes back over the control socket to the terminal of the
// command that made the call, and its answer goes back to the server;
// piped, the daemon-run call is declined with the same note.
func TestElicitThroughTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	p := startOnPTY(t, nil, "call", "--config", cfg, "asks", "ask")
	p.expect("asks asks: Sign up for the trip")
	for _, ans := range []string{"ada", "", "", "", "", "", ""} {
		p.answer("> ", ans)
	}
	p.answer("[A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("call")
	wantContains(t, "the result", out, `"action":"accept"`, `"login":"ada"`, `"seats":2`, `"team":"blue"`)
	if d.requests.Load() == before {
		t.Fatal("the daemon did not run the call")
	}

	r := runCLI(t, "call", "--config", cfg, "asks", "ask")
	wantCode(t, r, ExitOK)
	wantContains(t, "piped through the daemon", r.stdout, `{"action":"decline"}`)
	wantContains(t, "piped through the daemon", r.stderr, "declined: no terminal to ask on")
}

// TestAgentElicitation: the agent declines a server's question unless
// agent.elicitation is accept-defaults, which accepts a form whose
// required fields all have defaults and declines one that has a required
// field without.
func TestAgentElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, block, tool, want string
	}{
		{"default declines", "", "asks__confirm", `{"action":"decline"}`},
		{"accept-defaults accepts", "agent:\n  elicitation: accept-defaults\n", "asks__confirm", `{"action":"accept","content":{"ok":true}}`},
		{"accept-defaults without a default declines", "agent:\n  elicitation: accept-defaults\n", "asks__ask", `{"action":"decline"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var toolSaid string
			srv := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
				for _, m := range req.Chat {
					if m.Role == llm.RoleTool {
						mu.Lock()
						toolSaid = m.Content
						mu.Unlock()
						return llmtest.Response{Text: "done"}
					}
				}
				return llmtest.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: tc.tool, Arguments: `{}`}}}
			})
			cfg := asksConfig(t, srv, tc.block)
			r := runCLI(t, "agent", "--config", cfg, "go")
			wantCode(t, r, ExitOK)
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(toolSaid, tc.want) {
				t.Errorf("the tool said %q, want it to contain %s", toolSaid, tc.want)
			}
		})
	}
}

// TestDocRunAnswers: a document's block whose server asks is answered by
// doc run's --elicit policy (piped here), and its result is written.
func TestDocRunAnswers(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	doc := writeMarkdown(t, "# Confirm\n\n```asks\ntool: confirm\n```\n")
	r := runCLI(t, "doc", "run", "--config", cfg, "--elicit", "accept-defaults", doc)
	wantCode(t, r, ExitOK)
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "the document", string(b), `{"action":"accept","content":{"ok":true}}`)
	wantContains(t, "stderr", r.stderr, "accepted with the defaults (--elicit accept-defaults)")
}
