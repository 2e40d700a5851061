package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// httpServersYAML returns entries of a configuration's servers: list, one
// for each name, each an "ok" test server served in this process over
// HTTP (testserver.OKHTTP) until t ends. It is for tests whose point is
// not the server's process: a stdio test server is a race-built child
// started again at every command that works in-process, about 0.3 s of
// CPU each.
func httpServersYAML(t *testing.T, names ...string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "  - name: %s\n    transport: http\n    url: %s\n", name, testserver.OKHTTP(t))
	}
	return b.String()
}

// everythingURL is server-everything over streamable HTTP, one process
// the package's tests share (testpeer.Shared, stopped in TestMain), each
// on sessions of its own. It is for tests whose point is what the server
// offers, not its process: a stdio server-everything is a node process
// that every command starts again, about a second of CPU each.
func everythingURL(t *testing.T) string {
	t.Helper()
	return testpeer.Shared(t, "server-everything (streamable HTTP)", func(tb testing.TB) string {
		return testpeer.StartEverything(tb, "streamableHttp")
	})
}
