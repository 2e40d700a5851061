package testpeer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// StartStreamableExample runs the TypeScript SDK's
// dist/esm/examples/server/simpleStreamableHttp.js without --oauth
// (streamable HTTP on MCP_PORT, path /mcp) for the rest of the test and
// returns its endpoint, http://127.0.0.1:PORT/mcp, once it listens.
//
// What the pinned SDK (1.32.2) example does for tasks: it declares
// capabilities.tasks.requests.tools.call, and its tool delay (argument
// duration, in milliseconds; execution.taskSupport "required") creates a
// task that completes after duration with the text "Completed Nms delay".
// Its task store is the SDK's per-request one, so the task's end is also
// announced with notifications/tasks/status (the task object, status
// "completed"), sent on the session's standalone event stream (GET), not
// related to any request. Its other tools include greet.
func StartStreamableExample(t testing.TB) string {
	t.Helper()
	node := Node(t)
	script := filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "simpleStreamableHttp.js")
	return startOnFreePort(t, "the streamable HTTP example", node, []string{script}, func(port int) []string { return []string{"MCP_PORT=" + strconv.Itoa(port)} })
}
