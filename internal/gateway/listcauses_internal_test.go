package gateway

// White-box: which causes a session was told of cannot be read through
// the SDK, which sends or drops the notification they decide.

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestListCausesOtherKindsAreNotForgotten: a session that started before
// any change of a kind was recorded knows every change of that kind that
// follows, whatever changes of other kinds came between (the causes of
// all kinds share one sequence); only causes dropped past maxListCauses
// are unknown, and then the session is told.
func TestListCausesOtherKindsAreNotForgotten(t *testing.T) {
	t.Parallel()
	const tools, prompts = "notifications/tools/list_changed", "notifications/prompts/list_changed"
	var l listCauses
	ss := &mcp.ServerSession{}
	l.start(ss)
	l.record(prompts, map[string]bool{"a": true}, false)
	l.record(tools, map[string]bool{"a": true}, false)
	l.made()
	changes, _, ok := l.since(ss, tools)
	if !ok || len(changes) != 1 || !changes[0].servers["a"] {
		t.Fatalf("since(tools) = %v, ok %v; want the one tools change, known", changes, ok)
	}
	if changes, _, ok := l.since(ss, prompts); !ok || len(changes) != 1 {
		t.Fatalf("since(prompts) = %v, ok %v; want the one prompts change, known", changes, ok)
	}

	// More changes of a kind than are kept: those past the bound are
	// unknown to a session not told of them.
	other := &mcp.ServerSession{}
	l.start(other)
	for range maxListCauses + 1 {
		l.record(tools, map[string]bool{"a": true}, false)
	}
	l.made()
	if _, _, ok := l.since(other, tools); ok {
		t.Fatalf("since(tools) after %d changes: known, want unknown (some were forgotten)", maxListCauses+1)
	}
	// Once told, the session knows what follows again.
	l.record(prompts, map[string]bool{"a": true}, false)
	l.record(tools, map[string]bool{"a": true}, false)
	l.made()
	if changes, _, ok := l.since(other, tools); !ok || len(changes) != 1 {
		t.Fatalf("since(tools) after it was told = %v, ok %v; want the one change, known", changes, ok)
	}
}
