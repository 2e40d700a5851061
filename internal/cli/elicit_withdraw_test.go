package cli

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testpeer"
)

// TestElicitTimedOutThroughTheDaemonWaitsForNothing: a call the daemon
// runs times out while its question waits on the caller's terminal; the
// daemon's handler of the question ends with it, rather than wait forever
// to tell a stream that has already ended that the question is withdrawn
// (which kept the daemon from stopping). Not parallel: it looks for such
// a handler among all goroutines.
func TestElicitTimedOutThroughTheDaemonWaitsForNothing(t *testing.T) {
	url := testpeer.StartElicitationFormExample(t)
	cfg := writeConfigWith(t, map[string]string{}, "  - name: forms\n    transport: http\n    url: "+url+"\n")
	startDaemon(t, cfg)
	p := startOnPTY(t, nil, "call", "--config", cfg, "--timeout", "1s", "forms", "register_user")
	p.expect("Please provide your registration information:")
	if _, err := p.wait(); err == nil {
		t.Fatal("the call did not fail; want its timeout")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "control.(*remoteAnswerer).ask") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the call ended, the daemon's handler of its question still waits:\n%s", stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
