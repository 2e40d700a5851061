package testserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver/modes"
)

// OKHTTP serves the "ok" mode's server over streamable HTTP on 127.0.0.1,
// in the test's own process, until the test ends, and returns its URL.
// It is for tests whose point is not the server's process: a race-built
// child costs about 0.3 s of CPU to start, a connection here next to
// none. Every client shares the one server (its late tool appears 300 ms
// after OKHTTP is called, for all). Its tools crash, crash-once and
// crash-once-unsafe would end the test's process: use a stdio server
// ([Server]) for those, and for whatever is about the process.
func OKHTTP(t testing.TB) string {
	t.Helper()
	s := modes.OK()
	late := time.AfterFunc(modes.LateToolDelay, func() { modes.AddLate(s) })
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() {
		late.Stop()
		hs.Close()
	})
	return hs.URL
}

// Asks returns the "asks" mode's server (its tools ask their client during
// a call), for one in-process connection: protocol, when not "", is the
// one protocol version it speaks, as EnvProtocol makes the mode's process
// speak it.
func Asks(protocol string) *mcp.Server { return modes.NewAsks(protocol) }
