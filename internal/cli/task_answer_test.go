package cli

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestTaskResultAnswersOnATerminal: the TypeScript SDK's
// simpleTaskInteractive example asks its question while `switchboard task
// result` waits for the task (through the daemon); on a terminal it is
// asked there, as during a call, and the accepted answer reaches the
// server, whose task completes with it.
func TestTaskResultAnswersOnATerminal(t *testing.T) {
	url := testpeer.StartTaskExample(t)
	cfg := writeConfigWith(t, map[string]string{}, "  - name: tasks\n    transport: http\n    url: "+url+"\n")
	startDaemon(t, cfg)
	r := runCLI(t, "call", "--config", cfg, "tasks", "confirm_delete", "filename=b.txt", "--task", "--json")
	wantCode(t, r, ExitOK)
	var started struct {
		Task taskInfo `json:"task"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &started); err != nil || started.Task.TaskID == "" {
		t.Fatalf("call --task --json: %q (%v), want the task", r.stdout, err)
	}

	p := startOnPTY(t, nil, "task", "result", "--config", cfg, "tasks", started.Task.TaskID, "--wait")
	p.expect("Are you sure you want to delete 'b.txt'?")
	p.expect("confirm — required, boolean")
	p.expect("[y/n] > ")
	p.send("y")
	p.expect("Send this answer to tasks? [A]ccept / [d]ecline / [c]ancel: ")
	p.send("a")
	out, err := p.wait()
	if err != nil {
		t.Fatalf("task result: %v\n%s", err, out)
	}
	wantContains(t, "the task's result", out, "Deleted 'b.txt'")
}
