package testpeer

import (
	"path/filepath"
	"testing"
)

// SampleToolCommand returns the command that runs the TypeScript SDK's
// dist/esm/examples/server/toolWithSampleServer.js over stdio: node and
// its arguments, to be run directly, without a shell.
//
// What the pinned SDK (1.32.2) example does: one tool, summarize (argument
// text), that asks its client for a sampling completion and returns its
// text. Once connected it prints "MCP server is running..." to stdout
// (console.log), a line that is not an MCP message, before any answer;
// clients built on the TypeScript SDK skip such a line.
func SampleToolCommand(t testing.TB) (bin string, args []string) {
	t.Helper()
	return Node(t), []string{filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "toolWithSampleServer.js")}
}
