package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestCallShowsTheServersLogMessages: the TypeScript SDK's
// simpleStreamableHttp example's multi-greet logs (notifications/message)
// as it greets, and the ssePollingExample's long-task reports its progress
// only so; switchboard call showed none of it, where a client shows its
// server's log messages. Each now reads "log: SERVER [LEVEL] DATA" on
// stderr, in-process and when the daemon runs the call; a gateway client still gets the server's messages during its own
// calls (internal/daemon's log tests).
func TestCallShowsTheServersLogMessages(t *testing.T) {
	t.Parallel()
	url := testpeer.StartStreamableExample(t)
	// The example sends them outside the request (on the session's
	// standalone stream): the last, sent just before the result, may come
	// after it, directly as here. The first two come a second or more
	// before it.
	want := []string{"log: %s [debug] Starting multi-greet for Ann\n", "log: %s [info] Sending first greeting to Ann\n"}
	check := func(what, server string, r result) {
		t.Helper()
		wantCode(t, r, ExitOK)
		wantContains(t, what+" stdout", r.stdout, "Good morning, Ann!")
		for _, w := range want {
			wantContains(t, what+" stderr", r.stderr, strings.Replace(w, "%s", server, 1))
		}
		if strings.Contains(r.stdout, "log: ") {
			t.Errorf("%s: log messages on stdout, want them on stderr only:\n%s", what, r.stdout)
		}
	}
	check("in-process", "adhoc", runCLI(t, "call", "--url", url, "multi-greet", "name=Ann"))

	cfg := writeConfigWith(t, map[string]string{}, "  - name: greeter\n    transport: http\n    url: "+url+"\n")
	d := startDaemon(t, cfg)
	before := d.requests.Load()
	check("through the daemon", "greeter", runCLI(t, "call", "--config", cfg, "greeter", "multi-greet", "name=Ann"))
	if d.requests.Load() == before {
		t.Errorf("the daemon served no request: the call did not go through it")
	}
}

// TestCallAsksAGoSDKServerForItsLogs: a go-sdk server logs only once its
// client has asked for a level — with logging/setLevel, or on protocol
// 2026-07-28 with each request — so the conformance server's
// test_tool_with_logging logged nothing to switchboard call. call now asks
// for every message: with the call's request (in-process and through the
// daemon), and with logging/setLevel on the servers it connects itself.
func TestCallAsksAGoSDKServerForItsLogs(t *testing.T) {
	t.Parallel()
	bin := testpeer.ConformanceCommand(t)
	check := func(what, server string, r result) {
		t.Helper()
		wantCode(t, r, ExitOK)
		wantContains(t, what+" stdout", r.stdout, "Tool with logging executed successfully")
		wantContains(t, what+" stderr", r.stderr, "log: "+server+" [info] Tool execution started\n", "log: "+server+" [info] Tool processing data\n",
			"log: "+server+" [info] Tool execution completed\n")
	}
	// Over stdio it speaks 2026-07-28, which takes the level with each
	// request: so it does through the daemon too.
	check("in-process", "adhoc", runCLI(t, "call", "--stdio", bin, "test_tool_with_logging"))
	// Over streamable HTTP with sessions it speaks 2025-11-25, whose level
	// logging/setLevel sets.
	check("in-process, 2025-11-25", "adhoc", runCLI(t, "call", "--url", testpeer.StartConformance(t, false), "test_tool_with_logging"))

	cfg := writeConfigWith(t, map[string]string{}, fmt.Sprintf("  - name: conf\n    command: %q\n", bin), bin)
	startDaemon(t, cfg)
	check("through the daemon", "conf", runCLI(t, "call", "--config", cfg, "conf", "test_tool_with_logging"))
}
