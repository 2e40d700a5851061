package cli

import (
	"io"
	"strings"
	"testing"
)

// TestElicitEndOfInputCancels: Ctrl-D at a server's question on a
// terminal dismisses it without a choice, which the server gets as the
// specification's cancel action (it got a JSON-RPC error of code 0 and
// showed "MCP error 0: no answer: the input ended"), with a note saying
// why.
func TestElicitEndOfInputCancels(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	p := startOnPTY(t, nil, "call", "--config", cfg, "asks", "ask")
	p.expect("Login (login)")
	p.expect("> ")
	if _, err := io.WriteString(p.tty, "\x04"); err != nil { // Ctrl-D on an empty line
		t.Fatal(err)
	}
	out := p.succeeds("call")
	wantContains(t, "Ctrl-D at a question", out, "note: the input ended; asks's question", "cancelled", `{"action":"cancel"}`)
	if strings.Contains(out, "error 0") {
		t.Errorf("Ctrl-D at a question reached the server as an error:\n%s", out)
	}
}
