package gateway

// White-box: the order of a client's notifications/initialized, the
// SDK's handling of it and the client's standalone stream cannot be
// driven through the SDK, which answers the POST before it hands the
// notification to its handler.

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInitStreamIsAsPosted: whether a client had its standalone stream
// open at notifications/initialized is what it was as the client posted
// it, not as the SDK's handler runs: the SDK answers the POST (202) first,
// and a client that opens its stream on that answer (the TypeScript
// SDK's) may have it open by the time the handler runs.
func TestInitStreamIsAsPosted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		openAtPost     bool
		streamlessWant bool
	}{
		{"opened after the POST was answered", false, true},
		{"open as it posted", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := &Gateway{}
			cs, ss := &clientSession{id: "s1"}, new(mcp.ServerSession)
			if tc.openAtPost {
				g.streams.standalone.Store(cs.id, &standaloneStream{})
			}
			g.initializedPosted(cs.id)
			g.streams.standalone.Store(cs.id, &standaloneStream{}) // the client opens it on the 202
			g.noteInitStream(cs, ss)
			if _, got := g.streamlessAtInit.Load(ss); got != tc.streamlessWant {
				t.Errorf("streamless at initialized: got %v, want %v", got, tc.streamlessWant)
			}
			if _, left := g.initPosted.Load(cs.id); left {
				t.Error("the record of the POST is kept after the handler read it")
			}
		})
	}
}
