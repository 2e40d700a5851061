package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// taskResultAnswersOnATerminal: the TypeScript SDK's
// simpleTaskInteractive example asks its question while `switchboard task
// result` waits for the task (through the daemon); on a terminal it is
// asked there, as during a call, and the accepted answer reaches the
// server, whose task completes with it. Meanwhile task get --watch --json
// prints each status the task goes through, one JSON object a line, and
// ends with the task.
func taskResultAnswersOnATerminal(t *testing.T, url string) {
	t.Parallel()
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

	w := startOnPTY(t, nil, "task", "get", "--config", cfg, "tasks", started.Task.TaskID, "--watch", "--json")
	w.expect(`"status":"input_required"`)
	p := startOnPTY(t, nil, "task", "result", "--config", cfg, "tasks", started.Task.TaskID, "--wait")
	p.expect("Are you sure you want to delete 'b.txt'?")
	p.expect("confirm — required, boolean")
	p.answer("[y/n] > ", "y")
	p.answer("Send this answer to tasks? [A]ccept / [d]ecline / [c]ancel: ", "a")
	out := p.succeeds("task result")
	wantContains(t, "the task's result", out, "Deleted 'b.txt'")
	w.expect(`"status":"completed"`)
	watched := w.succeeds("task get --watch")
	if n, i, c := strings.Count(watched, `"taskId":`), strings.Index(watched, `"input_required"`), strings.Index(watched, `"completed"`); n < 2 || i < 0 || c < i {
		t.Errorf("task get --watch --json printed %d lines, want one a status change, input_required before completed:\n%s", n, watched)
	}
}
