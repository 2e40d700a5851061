package testpeer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// StartTaskExample runs the TypeScript SDK's
// dist/esm/examples/server/simpleTaskInteractive.js (streamable HTTP on
// PORT, path /mcp) for the rest of the test and returns its endpoint,
// http://127.0.0.1:PORT/mcp, once it listens.
//
// What the pinned SDK (1.32.2) example does: it declares
// capabilities.tasks.requests.tools.call (no tasks/list, no tasks/cancel)
// and two tools whose execution.taskSupport is "required": confirm_delete
// (argument filename) asks its client for confirmation with a form
// elicitation (a required boolean "confirm") and completes with the text
// "Deleted 'FILE'" on accept with confirm true, else "Deletion
// cancelled"; write_haiku (argument topic) asks its client for a
// sampling completion and completes with "Haiku:\n" and its text. A call
// without params.task fails. The question is asked only once the client
// calls tasks/result, and it goes on the session's standalone event
// stream (GET), not on the tasks/result stream; the task is
// input_required until it is answered. Its task store is shared by every
// session: tasks/get answers for any task id, whoever created it.
func StartTaskExample(t testing.TB) string {
	t.Helper()
	node := Node(t)
	script := filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleTaskInteractive.js")
	return startOnFreePort(t, "the task example", node, []string{script}, func(port int) []string { return []string{"PORT=" + strconv.Itoa(port)} })
}
