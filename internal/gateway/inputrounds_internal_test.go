package gateway

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
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

// TestInputRoundsProgressAfterTheAnswers: the progress the upstream
// reports as soon as it has the client's answers — before the request
// that brought them would otherwise have been set to receive it — reaches
// that request, under its progress token, before its answer. (Once, over
// a loaded machine, the gateway had given the answers before it set the
// request to receive the call's progress, and dropped the server's.)
func TestInputRoundsProgressAfterTheAnswers(t *testing.T) {
	t.Parallel()
	var rs inputRounds
	defer rs.closeAll()
	owner := roundOwner{user: "alice"}
	r, callCtx, err := rs.start(context.Background(), owner, `tools/call "tool"`, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.attached = true
	upstreamDone := make(chan struct{})
	go func() {
		// The upstream: it asks, reports progress the moment it has the
		// answer, then answers the call.
		defer close(upstreamDone)
		res, err := r.ask(callCtx, &mcp.ElicitParams{Message: "Go on?"})
		if err != nil {
			r.finished(nil, err)
			return
		}
		r.progress(toolcall.Progress{Processed: 1, Message: "after " + res.(*mcp.ElicitResult).Action})
		r.finished("done", nil)
	}()
	first := r.next(context.Background())
	if first.err != nil || len(first.requests) != 1 {
		t.Fatalf("the first request: got %+v; want the question asked", first)
	}

	var mu sync.Mutex
	var got []string
	notify := func(p toolcall.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p.Message)
	}
	again, err := rs.resume(first.state, owner, `tools/call "tool"`)
	if err != nil {
		t.Fatal(err)
	}
	responses := mcp.InputResponseMap{}
	for key := range first.requests {
		responses[key] = &mcp.ElicitResult{Action: "accept"}
	}
	if err := again.answer(responses, &roundWaiter{ctx: context.Background()}, notify); err != nil {
		t.Fatal(err)
	}
	o := again.next(context.Background())
	<-upstreamDone
	if o.err != nil || o.res != "done" {
		t.Fatalf("the request sent again: got %+v; want the call's result", o)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"after accept"}, got); diff != "" {
		t.Errorf("the progress the request sent again got before its answer (-want +got):\n%s", diff)
	}
}
