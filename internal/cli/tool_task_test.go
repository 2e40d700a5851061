package cli

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestToolSaysHowToCallATaskOnlyTool: the "Call it:" line of a tool that
// runs only as a task (the TypeScript SDK's simpleTaskInteractive
// confirm_delete) has --task, so that it works as printed.
func TestToolSaysHowToCallATaskOnlyTool(t *testing.T) {
	t.Parallel()
	url := testpeer.StartTaskExample(t)
	setenv(t, "SWITCHBOARD_STATE_DIR", t.TempDir())
	r := runCLI(t, "tool", "--url", url, "confirm_delete")
	wantCode(t, r, ExitOK)
	wantContains(t, "tool", r.stdout, "runs only as a task", "Call it: switchboard call --url "+url+" --task confirm_delete")
}
