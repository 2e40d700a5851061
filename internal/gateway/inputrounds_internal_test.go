package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// askRound starts a round of owner's whose upstream asks one question,
// and returns it, the result its client's request got (next) and where
// the question's answer goes.
func askRound(t *testing.T, rs *inputRounds, owner roundOwner) (*inputRound, chan error, func() (*toolcall.Result, error)) {
	t.Helper()
	r, callCtx, err := rs.start(context.Background(), owner, nil, "tool", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.attached = true
	asked := make(chan error, 1)
	go func() {
		_, err := r.ask(callCtx, &mcp.ElicitParams{Message: "?"})
		asked <- err
	}()
	return r, asked, func() (*toolcall.Result, error) { return r.next(context.Background()) }
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
		res, err := next()
		if err != nil || res.Status != toolcall.StatusInputRequired || len(res.InputRequests) != 1 {
			t.Fatalf("round %d: got %+v, %v; want an input-required result", i, res, err)
		}
	}
	r, asked, next := askRound(t, &rs, alice)
	nextDone := make(chan struct{})
	go func() {
		defer close(nextDone)
		_, _ = next() // until the call ends
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
	if res, err := next(); err != nil || res.Status != toolcall.StatusInputRequired {
		t.Errorf("another client's round: got %+v, %v; want an input-required result", res, err)
	}
}
