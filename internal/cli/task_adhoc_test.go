package cli

import (
	"encoding/json"
	"testing"
)

// taskFollowsAnAdHocCall starts the TypeScript SDK's
// simpleTaskInteractive example's confirm_delete as a task with call --url
// and follows it with task get, result and a usage error, all given the
// same --url: before task took the ad hoc flags, each said "unknown flag
// --url". The hint call prints names the --url, not the ad hoc server's
// internal name.
func taskFollowsAnAdHocCall(t *testing.T, url string) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))

	r := runCLI(t, "call", "--url", url, "confirm_delete", "filename=a.txt", "--task")
	wantCode(t, r, ExitOK)
	wantContains(t, "call --url --task's hint", r.stderr, "follow it with: switchboard task get --url "+url+" ")

	r = runCLI(t, "call", "--url", url, "confirm_delete", "filename=b.txt", "--task", "--json")
	wantCode(t, r, ExitOK)
	var started struct {
		Task taskInfo `json:"task"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &started); err != nil || started.Task.TaskID == "" {
		t.Fatalf("call --url --task --json: %q (%v), want the task", r.stdout, err)
	}
	id := started.Task.TaskID

	r = runCLI(t, "task", "get", "--url", url, id)
	wantCode(t, r, ExitOK)
	wantContains(t, "task get --url", r.stdout, "task "+id+": ")

	r = runCLI(t, "task", "result", "--url", url, id, "--wait")
	wantCode(t, r, ExitOK)
	wantContains(t, "task result --url", r.stdout, "Deletion cancelled")

	r = runCLI(t, "task", "get", "--url", url)
	wantCode(t, r, ExitUsage)
	wantContains(t, "task get --url without an id", r.stderr, "switchboard task get --url "+url+" ID")
}
