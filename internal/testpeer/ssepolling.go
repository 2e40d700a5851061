package testpeer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SSEPollingRetry is the retry interval the TypeScript SDK's SSE polling
// example announces in the priming event of every stream (its
// retryInterval option): a client must wait at least this long before it
// reconnects.
const SSEPollingRetry = 2 * time.Second

// portPreload is loaded into node before the SSE polling example, whose
// port (3001) is fixed in its source: it moves a listen on 3001 to
// SB_TESTPEER_PORT on 127.0.0.1, so that parallel tests do not collide.
const portPreload = `import net from 'node:net';
const port = Number(process.env.SB_TESTPEER_PORT);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[0] === 3001) {
    args[0] = port;
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
`

// StartSSEPolling runs the TypeScript SDK's
// dist/esm/examples/server/ssePollingExample.js for the rest of the test and
// returns its endpoint, http://127.0.0.1:PORT/mcp.
//
// What the pinned SDK (1.32.2) example does: a stateful streamable-HTTP
// server with an in-memory event store. To clients on protocol 2025-11-25
// or later, every event stream starts with a priming event carrying an
// event id and "retry: 2000" ([SSEPollingRetry]). Its one tool, long-task,
// sends two log messages a second apart, then closes the call's event
// stream without the response, sends two more log messages a second later
// and returns "Long task completed successfully!". A client sees the
// result only if it reconnects with a GET carrying Last-Event-ID; the
// events sent meanwhile, and the response, are replayed on that stream.
func StartSSEPolling(t testing.TB) string {
	t.Helper()
	node := Node(t)
	script := filepath.Join(Dir(t), "@modelcontextprotocol", "sdk", "dist", "esm", "examples", "server", "ssePollingExample.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("testpeer: the SSE polling example is missing (run make peers): %v", err)
	}
	preload := filepath.Join(t.TempDir(), "port.mjs")
	if err := os.WriteFile(preload, []byte(portPreload), 0o600); err != nil {
		t.Fatalf("testpeer: writing the port preload: %v", err)
	}
	return startOnFreePort(t, "the SSE polling example", node, []string{"--import", "file://" + preload, script}, func(port int) []string { return []string{"SB_TESTPEER_PORT=" + strconv.Itoa(port)} })
}

// startOnFreePort runs node with args, its port chosen free and passed in
// the environment env gives, until it listens (another process can take
// the port first: a few attempts), and returns its /mcp URL. what names
// it in failures.
func startOnFreePort(t testing.TB, what, node string, args []string, env func(port int) []string) string {
	t.Helper()
	var failures []string
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testpeer: finding a free port for %s: %v", what, err)
		}
		p, err := spawn(t, node, args, env(port))
		if err != nil {
			t.Fatalf("testpeer: starting %s: %v", what, err)
		}
		err = p.waitListening(port, time.Now().Add(startTimeout))
		if err == nil {
			return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		}
		p.stop()
		failures = append(failures, fmt.Sprintf("attempt %d on port %d: %v; output:\n%s", attempt, port, err, p.out))
		if !errors.Is(err, errExited) {
			break
		}
	}
	t.Fatalf("testpeer: %s did not start:\n%s", what, strings.Join(failures, "\n"))
	return ""
}
