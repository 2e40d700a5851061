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
