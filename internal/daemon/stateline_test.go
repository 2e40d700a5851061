package daemon

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestStateLineOfAServerThatCannotStart: serve prints the whole cause of
// a server that cannot start, with its place in the file, and what to do
// (it stays so until the user acts); a failed attempt's line is cut.
func TestStateLineOfAServerThatCannotStart(t *testing.T) {
	cause := "/home/me/.cursor/mcp.json:5:18: mcpServers.api.envFile: env file /home/me/src/app/.env does not exist; " +
		"/home/me/.cursor/mcp.json:6:14: mcpServers.api.cwd: directory /home/me/src/app/work does not exist"
	line, ok := stateLine(upstream.Snapshot{Server: "api", State: upstream.StateCannotStart, Enabled: true, LastError: cause,
		Suggestions: []string{"create it, or fix the path", "then run: switchboard reload"}})
	want := "cannot_start: " + cause + "; create it, or fix the path; then run: switchboard reload"
	if !ok || line != want {
		t.Errorf("got %q, %v; want %q", line, ok, want)
	}
	line, _ = stateLine(upstream.Snapshot{Server: "api", State: upstream.StateError, Enabled: true, Retrying: true, LastError: strings.Repeat("x", 200)})
	if strings.Contains(line, strings.Repeat("x", 120)) || !strings.Contains(line, "…") {
		t.Errorf("a failed attempt's line: got %q, want its error cut", line)
	}
}
