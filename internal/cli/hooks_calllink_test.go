package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestHooksLogLeadsToTheCall: an mcp action's run in hooks log (the table
// and --json) and in hooks fire's report names the call it made, and
// history show takes that id to the call, whose origin names the hook and
// the event — for a call that succeeded and for one whose tool failed.
// The log named no call: the link ran only from the call to the event.
func TestHooksLogLeadsToTheCall(t *testing.T) {
	t.Parallel()
	setenv(t, envNoDaemon, "1")
	path := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `hooks:
  - name: shout
    on: ci.done
    actions:
      - {type: mcp, server: alpha, tool: echo, params: [{param: message, value: "{msg}"}]}
      - {type: mcp, server: alpha, tool: fail}
`)
	f.Close()
	wantCode(t, runCLI(t, "hooks", "trust", "--config", path, "--yes"), ExitOK)

	r := runCLI(t, "hooks", "fire", "--config", path, "--json", "ci.done", "msg=hello")
	wantCode(t, r, ExitFailure)
	var rep struct {
		EventID string `json:"event_id"`
		Runs    []struct {
			Action string `json:"action"`
			Status string `json:"status"`
			CallID string `json:"call_id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Runs) != 2 {
		t.Fatalf("hooks fire --json: got %s (%v), want two runs", r.stdout, err)
	}
	for _, run := range rep.Runs {
		if run.CallID == "" {
			t.Errorf("hooks fire --json: run %s (%s) names no call", run.Action, run.Status)
		}
	}

	r = runCLI(t, "hooks", "log", "--config", path, "--json")
	wantCode(t, r, ExitOK)
	var runs []struct {
		Action string `json:"action"`
		Status string `json:"status"`
		CallID string `json:"call_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("hooks log --json: got %s (%v), want two runs", r.stdout, err)
	}
	wantStatus := map[string]string{"mcp alpha/echo": "success", "mcp alpha/fail": "error"}
	for _, run := range runs {
		if run.CallID == "" {
			t.Errorf("hooks log --json: run %s (%s) names no call", run.Action, run.Status)
			continue
		}
		r = runCLI(t, "history", "show", "--config", path, "--json", run.CallID)
		wantCode(t, r, ExitOK)
		var call map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &call); err != nil {
			t.Fatalf("history show --json: got %s (%v)", r.stdout, err)
		}
		wantOrigin := "hook shout on ci.done (event " + rep.EventID + ")"
		if call["id"] != run.CallID || call["origin"] != wantOrigin || call["status"] != wantStatus[run.Action] {
			t.Errorf("history show %s: got id %v, origin %q, status %v; want origin %q, status %s",
				run.CallID, call["id"], call["origin"], call["status"], wantOrigin, wantStatus[run.Action])
		}
	}

	// The table shows the short id, which history show takes too.
	r = runCLI(t, "hooks", "log", "--config", path)
	wantCode(t, r, ExitOK)
	wantContains(t, "hooks log", r.stdout, "CALL", shortID(runs[0].CallID), shortID(runs[1].CallID))
	r = runCLI(t, "history", "show", "--config", path, shortID(runs[0].CallID))
	wantCode(t, r, ExitOK)
	wantContains(t, "history show SHORT", r.stdout, "hook shout on ci.done")
	if strings.Count(r.stdout, "origin") != 1 {
		t.Errorf("history show: got %q, want one origin line", r.stdout)
	}
}
