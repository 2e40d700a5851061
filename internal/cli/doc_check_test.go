package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestDocCheckCountsARecordedFailure: a document whose recorded result is
// a failed call is not up to date: doc run --check exits 1 and names the
// block and its recorded status, while a document whose every result is a
// success passes.
func TestDocCheckCountsARecordedFailure(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	doc := writeMarkdown(t, "# Runbook\n\n```alpha\ntool: echo\nmessage: sunny\n```\n\n```alpha\ntool: fail\n```\n")

	r := runCLI(t, "doc", "run", "--config", cfg, doc)
	wantCode(t, r, ExitFailure) // the fail tool fails; its error is written
	r = runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	wantContains(t, "check of a recorded failure", r.stderr, doc+":11: alpha/fail: the recorded result is a failed call (status error)", "run switchboard doc run "+doc)
	if strings.Contains(r.stdout, "up to date") {
		t.Errorf("check of a recorded failure says the document is up to date:\n%s", r.stdout)
	}
	r = runCLI(t, "doc", "run", "--check", "--json", "--config", cfg, doc)
	wantCode(t, r, ExitFailure)
	var rep struct {
		Failed int `json:"failed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Failed != 1 {
		t.Errorf("check --json: got %s (%v), want failed 1", r.stdout, err)
	}

	// Without the failing block the document passes.
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(text), "```alpha\ntool: fail")
	if cut < 0 {
		t.Fatalf("the document lost its fail block:\n%s", text)
	}
	if err := os.WriteFile(doc, text[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "doc", "run", "--check", "--config", cfg, doc)
	wantCode(t, r, ExitOK)
	wantContains(t, "check of a document of successes", r.stdout, doc+": 1 block, every result up to date")
}

// TestDocYAMLErrorAtItsLine: a block whose YAML is wrong is reported at
// the document's line the YAML parser names, so that an editor or a CI
// log jumps to it, by doc list, doc run --check and doc run alike; --json
// gives that line as error_line.
func TestDocYAMLErrorAtItsLine(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	// Line 8 repeats the key of line 7.
	doc := writeMarkdown(t, "# Runbook\n\nIntro.\n\n```alpha\ntool: echo\nmessage: one\nmessage: two\n```\n")
	want := doc + `:8: invalid YAML: line 3 of the block: mapping key "message" already defined`
	for _, args := range [][]string{{"doc", "list"}, {"doc", "run", "--check"}, {"doc", "run"}} {
		r := runCLI(t, append(args, "--config", cfg, doc)...)
		wantCode(t, r, ExitFailure)
		wantContains(t, strings.Join(args, " "), r.stderr, want)
	}
	r := runCLI(t, "doc", "list", "--json", "--config", cfg, doc)
	var blocks []struct {
		Line      int `json:"line"`
		ErrorLine int `json:"error_line"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &blocks); err != nil || len(blocks) != 1 || blocks[0].Line != 5 || blocks[0].ErrorLine != 8 {
		t.Errorf("doc list --json: got %s (%v), want one block at line 5 with error_line 8", r.stdout, err)
	}
}
