package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestWithTheTaskExample runs the tests of tasks against one TypeScript
// simpleTaskInteractive example, in parallel. Each starts its own tasks
// (the example's ids are random) with its own state directory and
// follows only those, and the example keeps no other state a test could
// see, so one node process serves them all (one each cost ~1 s CPU more
// per test).
func TestWithTheTaskExample(t *testing.T) {
	t.Parallel()
	url := testpeer.StartTaskExample(t)
	t.Run("call as task and follow it", func(t *testing.T) { callAsTaskAndFollowIt(t, url) })
	t.Run("task follows an ad hoc call", func(t *testing.T) { taskFollowsAnAdHocCall(t, url) })
	t.Run("task result answers on a terminal", func(t *testing.T) { taskResultAnswersOnATerminal(t, url) })
	t.Run("tool says how to call a task-only tool", func(t *testing.T) { toolSaysHowToCallATaskOnlyTool(t, url) })
	t.Run("TypeScript task client through serve --stdio", func(t *testing.T) { typeScriptTaskClientThroughServeStdio(t, url) })
}

// callAsTaskAndFollowIt starts the TypeScript SDK's
// simpleTaskInteractive example's confirm_delete as a task through a
// daemon and follows it with switchboard task: the example asks its
// question while task result waits, and with no terminal to ask on it is
// declined with a note, as switchboard call does; the task completes
// ("Deletion cancelled"), which get, result --wait and list report as the
// server does; the history has the call's creation and its outcome.
func callAsTaskAndFollowIt(t *testing.T, url string) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, "  - name: tasks\n    transport: http\n    url: "+url+"\n")
	startDaemon(t, cfg)

	r := runCLI(t, "tool", "--config", cfg, "tasks", "confirm_delete")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool", r.stdout, "runs only as a task")

	r = runCLI(t, "call", "--config", cfg, "tasks", "confirm_delete", "filename=a.txt")
	wantCode(t, r, ExitFailure)
	wantContains(t, "call without --task", r.stderr, "runs only as a task", "--task")

	r = runCLI(t, "call", "--config", cfg, "tasks", "confirm_delete", "filename=a.txt", "--task", "--ttl", "1m", "--json")
	wantCode(t, r, ExitOK)
	var started struct {
		Task taskInfo `json:"task"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &started); err != nil || started.Task.TaskID == "" {
		t.Fatalf("call --task --json: %q (%v), want the task", r.stdout, err)
	}
	id := started.Task.TaskID
	if started.Task.TTL == nil || *started.Task.TTL != 60000 {
		t.Errorf("the task's ttl: %v, want the 60000 ms --ttl asked for", started.Task.TTL)
	}

	r = runCLI(t, "task", "get", "--config", cfg, "tasks", id)
	wantCode(t, r, ExitOK)
	wantContains(t, "task get", r.stdout, "task "+id+": ")

	r = runCLI(t, "task", "result", "--config", cfg, "tasks", id, "--wait")
	wantCode(t, r, ExitOK)
	wantContains(t, "task result without a terminal", r.stderr, "note: tasks asked", "declined: no terminal to ask on", "--elicit accept-defaults")
	wantContains(t, "task result without a terminal", r.stdout, "Deletion cancelled")

	r = runCLI(t, "task", "list", "--config", cfg, "tasks")
	wantCode(t, r, ExitOK)
	wantContains(t, "task list", r.stdout, "ID", "STATUS", id, "completed")

	r = runCLI(t, "task", "get", "--config", cfg, "tasks", "no-such-task")
	wantCode(t, r, ExitFailure)
	wantContains(t, "task get of an unknown task", r.stderr, "no-such-task")

	r = runCLI(t, "task", "get", "--config", cfg, "tasks")
	wantCode(t, r, ExitUsage)
	wantContains(t, "task get without an id", r.stderr, "switchboard task get SERVER ID")

	r = runCLI(t, "call", "--config", cfg, "--json", "tasks", "confirm_delete", "--task", "--args", "[1]")
	wantCode(t, r, ExitFailure)

	// The history is written in batches: the outcome may take a moment.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r = runCLI(t, "history", "--config", cfg, "--json", "--tool", "confirm_delete")
		wantCode(t, r, ExitOK)
		var recs []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &recs); err != nil {
			t.Fatalf("history --json: %q (%v)", r.stdout, err)
		}
		var statuses []string
		for _, rec := range recs {
			statuses = append(statuses, rec.Status)
		}
		got := strings.Join(statuses, ",")
		if strings.Contains(got, "task") && strings.Contains(got, "success") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history statuses %s, want the task's creation (task) and its outcome (success); history:\n%s", got, r.stdout)
		}
		time.Sleep(50 * time.Millisecond) // polling the history: nothing to wait on
	}
}
