package testpeer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// StartElicitationFormExample runs the TypeScript SDK's
// dist/esm/examples/server/elicitationFormExample.js (streamable HTTP on
// PORT, path /mcp) for the rest of the test and returns its endpoint,
// http://127.0.0.1:PORT/mcp, once it listens.
//
// What the pinned SDK (1.32.2) example does: its tool register_user asks
// its client, with a form elicitation, for username (required, 3 to 20
// characters), email (required, format email), password (required, at
// least 8 characters), newsletter (boolean, default false), role (one of
// developer, designer, manager, other by title; default developer) and
// interests (up to 3 of an enum); accepted, it returns "Registration
// successful!" with the username, email and newsletter choice; declined,
// "Registration cancelled by user."
func StartElicitationFormExample(t testing.TB) string {
	t.Helper()
	node := Node(t)
	script := filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "elicitationFormExample.js")
	return startOnFreePort(t, "the elicitation form example", node, []string{script}, func(port int) []string { return []string{"PORT=" + strconv.Itoa(port)} })
}
