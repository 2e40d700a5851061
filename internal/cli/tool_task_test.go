package cli

import (
	"testing"
)

// toolSaysHowToCallATaskOnlyTool: the "Call it:" line of a tool that
// runs only as a task (the TypeScript SDK's simpleTaskInteractive
// confirm_delete) has --task, so that it works as printed.
func toolSaysHowToCallATaskOnlyTool(t *testing.T, url string) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	r := runCLI(t, "tool", "--url", url, "confirm_delete")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool", r.stdout, "runs only as a task", "Call it: switchboard call --url "+url+" --task confirm_delete")
}
