package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askRound starts a round of owner's whose upstream asks one question,
// and returns it, where the question's answer goes, and the wait of its
// client's request (next).
func askRound(t *testing.T, rs *inputRounds, owner roundOwner) (*inputRound, chan error, func() roundOutcome) {
	t.Helper()
	r, callCtx, err := rs.start(context.Background(), owner, `tools/call "tool"`, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.attached = true
	asked := make(chan error, 1)
	go func() {
		_, err := r.ask(callCtx, &mcp.ElicitParams{Message: "?"})
		asked <- err
	}()
	return r, asked, func() roundOutcome { return r.next(context.Background()) }
}

// TestInputRoundsBoundPerOwner: a client session has at most
// maxRoundsPerOwner calls waiting for its answers; the upstream's
// question of one more is refused, saying why, while another client's
// are asked.
func TestInputRoundsBoundPerOwner(t *testing.T) {
	t.Parallel()
	var rs inputRounds
	defer rs.closeAll()
	alice, bob := roundOwner{user: "alice"}, roundOwner{user: "bob"}
	for i := range maxRoundsPerOwner {
		_, _, next := askRound(t, &rs, alice)
		if o := next(); o.err != nil || len(o.requests) != 1 || !strings.HasPrefix(o.state, inputStatePrefix) {
			t.Fatalf("round %d: got %+v; want the question asked", i, o)
		}
	}
	r, asked, next := askRound(t, &rs, alice)
	nextDone := make(chan struct{})
	go func() {
		defer close(nextDone)
		next() // until the call ends
	}()
	select {
	case err := <-asked:
		if err == nil || !strings.Contains(err.Error(), "has 16 calls waiting for its answers already") {
			t.Errorf("one round too many: the question got %v, want it refused naming the bound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("one round too many: the question was neither asked nor refused")
	}
	r.end(context.Canceled)
	r.finished(nil, context.Canceled) // as the call does once ended
	<-nextDone

	_, _, next = askRound(t, &rs, bob)
	if o := next(); o.err != nil || len(o.requests) != 1 {
		t.Errorf("another client's round: got %+v; want the question asked", o)
	}
}
