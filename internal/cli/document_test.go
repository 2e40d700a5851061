package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/notebook"
)

const docText = `# Weather

` + "```alpha" + `
tool: echo
message: sunny
` + "```" + `

## Failing

` + "```mcp" + `
server: beta
tool: fail
` + "```" + `
`

func writeMarkdown(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDocRunListCheck(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha", "beta"))
	doc := writeMarkdown(t, docText)

	r := runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "check before a run", r.stderr, doc+":3: alpha/echo: no result", doc+":10: beta/fail: no result")

	r = runCLI(t, "doc", "run", "--dry-run", "--config", cfg, doc)
	wantCode(t, r, ExitOK)
	wantContains(t, "dry run", r.stdout, doc+`:3: alpha/echo {"message":"sunny"} (explicit)`, doc+":10: beta/fail {} (explicit)")

	r = runCLI(t, "doc", "run", "--config", cfg, doc)
	wantCode(t, r, ExitFailure) // the fail tool fails; the run goes on
	wantContains(t, "run", r.stdout, "2 blocks run, 1 failed; written")
	wantContains(t, "run", r.stderr, doc+":13: beta/fail: the gizmo is broken") // its line once the first result is written above it
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "document", string(text), "`sunny`", `"error_type": "tool_error"`)

	r = runCLI(t, "doc", "run", "--only", "4", "--config", cfg, doc)
	wantCode(t, r, ExitOK)
	wantContains(t, "--only", r.stdout, "1 block run, 0 failed; unchanged")

	// The recorded error counts (doc_check_test.go).
	r = runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	if strings.Contains(r.stderr, ":3:") {
		t.Errorf("check after a run flags the block that succeeded:\n%s", r.stderr)
	}

	r = runCLI(t, "doc", "list", "--config", cfg, doc)
	wantCode(t, r, ExitOK)
	wantContains(t, "list", r.stdout, "LINE", "SERVER", "WHY", "alpha", "echo", "success", "explicit", "beta", "fail", "error")

	r = runCLI(t, "doc", "list", "--json", "--config", cfg, doc)
	wantCode(t, r, ExitOK)
	// A list: a bare array, as every listing prints.
	var blocks []struct {
		Line   int    `json:"line"`
		Server string `json:"server"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &blocks); err != nil || len(blocks) != 2 || blocks[0].Status != "success" || blocks[1].Status != "error" {
		t.Errorf("list --json: got %s (%v), want two blocks, success and error", r.stdout, err)
	}

	if err := os.WriteFile(doc, []byte(strings.Replace(string(text), "message: sunny", "message: rainy", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "check after an edit", r.stderr, doc+":3: alpha/echo: the result is stale")
}

func TestDocUsage(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	doc := writeMarkdown(t, docText)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"doc"}, "missing subcommand: want list or run"},
		{[]string{"doc", "frobnicate", doc}, `unknown doc subcommand "frobnicate"; want list or run`},
		{[]string{"doc", "run", "--config", cfg}, "doc run takes one FILE.md"},
		{[]string{"doc", "run", "--concurrency", "65", "--config", cfg, doc}, "--concurrency 65 is out of range"},
		{[]string{"doc", "run", "--concurrency", "0", "--config", cfg, doc}, "--concurrency 0 is out of range"},
		{[]string{"doc", "run", "--concurrency=0", "--dry-run", "--config", cfg, doc}, "--concurrency 0 is out of range"},
		{[]string{"doc", "run", "--check", "--dry-run", "--config", cfg, doc}, "not both"},
	}
	for _, tt := range tests {
		r := runCLI(t, tt.args...)
		wantCode(t, r, ExitUsage)
		wantContains(t, strings.Join(tt.args, " "), r.stderr, tt.want)
	}
	r := runCLI(t, "doc", "run", "--config", cfg, filepath.Join(t.TempDir(), "missing.md"))
	wantCode(t, r, ExitFailure)
	wantContains(t, "missing document", r.stderr, "missing.md")
}

func TestDocUnknownServerAndDuplicateIDs(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	doc := writeMarkdown(t, "```alpah\ntool: echo\nmessage: hi\n```\n\n```python\ntool: str = 'x'\n```\n\n"+
		"```alpha ^dup\ntool: echo\nmessage: one\n```\n\n```alpha ^dup\ntool: echo\nmessage: two\n```\n")
	const typo = `:1: unknown server "alpah"; did you mean "alpha"?`
	const dup = ":15: duplicate block id ^dup: the block at line 10 has it too"

	// Listed all the same, with what is wrong and how many; exit 1, as
	// hooks list does for an invalid hook.
	r := runCLI(t, "doc", "list", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "list", r.stdout, "alpah", "invalid")
	wantContains(t, "list", r.stderr, doc+typo, doc+dup, doc+": 2 of 3 blocks are invalid and cannot run")
	if strings.Count(r.stdout, "\n") != 4 {
		t.Errorf("list: got\n%s\nwant a header and three blocks (python is not a call)", r.stdout)
	}
	// One invalid block of three: "1 of 3 blocks is", not "block is".
	one := writeMarkdown(t, "```alpah\ntool: echo\nmessage: hi\n```\n\n```alpha\ntool: echo\nmessage: a\n```\n\n```alpha\ntool: echo\nmessage: b\n```\n")
	r = runCLI(t, "doc", "list", "--config", cfg, one)
	wantCode(t, r, ExitFailure)
	wantContains(t, "list, one invalid", r.stderr, one+": 1 of 3 blocks is invalid and cannot run; fix it (")
	r = runCLI(t, "doc", "list", "--json", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	if n := strings.Count(r.stdout, `"status": "invalid"`) + strings.Count(r.stdout, `"status":"invalid"`); n != 2 {
		t.Errorf("list --json: got %d invalid blocks, want 2:\n%s", n, r.stdout)
	}

	r = runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "check", r.stderr, doc+typo, doc+dup)

	r = runCLI(t, "doc", "run", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "run", r.stdout, "3 blocks run, 2 failed; written")
	wantContains(t, "run", r.stderr, doc+`:1: alpah/echo: unknown server "alpah"; did you mean "alpha"?`)
}

func TestDocSummary(t *testing.T) {
	t.Parallel()
	blocks := func(n int) []notebook.BlockReport { return make([]notebook.BlockReport, n) }
	tests := []struct {
		rep  notebook.Report
		want string
	}{
		{notebook.Report{Path: "d.md", Blocks: blocks(2), Failed: 1, Written: true}, "d.md: 2 blocks run, 1 failed; written"},
		{notebook.Report{Path: "d.md", Blocks: blocks(1)}, "d.md: 1 block run, 0 failed; unchanged"},
		{notebook.Report{Path: "d.md", Blocks: blocks(2), Cancelled: 1, Written: true}, "d.md: 1 block run, 0 failed, 1 cancelled; written"},
	}
	for _, tt := range tests {
		if got := docSummary(&tt.rep); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestDocRunUsesTheDaemon: with a daemon serving the configuration, doc
// run makes its calls there (its connections and history), and the
// document gets the same results as in-process.
func TestDocRunUsesTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha", "beta"))
	d := startDaemon(t, cfg)
	doc := writeMarkdown(t, docText)
	before := d.requests.Load()
	r := runCLI(t, "doc", "run", "--config", cfg, doc)
	wantCode(t, r, ExitFailure) // the fail tool fails; the run goes on
	wantContains(t, "run", r.stdout, "2 blocks run, 1 failed; written")
	wantContains(t, "run", r.stderr, "running the calls in the daemon (pid ", doc+":13: beta/fail: the gizmo is broken") // as written, after the first result
	if n := d.requests.Load() - before; n < 2 {
		t.Errorf("the daemon got %d requests, want the 2 calls", n)
	}
	text, _ := os.ReadFile(doc)
	wantContains(t, "document", string(text), "`sunny`", `"error_type": "tool_error"`)
	// The daemon recorded them, as document calls (its recorder writes
	// in the background).
	eventuallyCLI(t, 10*time.Second, "the daemon's history to hold the 2 document calls", func() bool {
		r := runCLI(t, "history", "--config", cfg, "--source", "document", "--json")
		var calls []map[string]any
		return r.code == ExitOK && json.Unmarshal([]byte(r.stdout), &calls) == nil && len(calls) == 2
	})
}
