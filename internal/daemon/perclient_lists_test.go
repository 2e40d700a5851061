package daemon

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// listClient is a go-sdk client of the gateway that records the
// tools/list_changed notifications it gets.
type listClient struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

// connectListening opens a client session on path (/mcp, /mcp/view) with
// opts (nil for none); the client's ToolListChangedHandler is the test's.
func (r *running) connectListening(t *testing.T, path string, opts *mcp.ClientOptions) *listClient {
	t.Helper()
	lc := &listClient{changed: make(chan struct{}, 16)}
	o := mcp.ClientOptions{}
	if opts != nil {
		o = *opts
	}
	o.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case lc.changed <- struct{}{}:
		default:
		}
	}
	cs := r.connectClient(t, mcp.NewClient(&mcp.Implementation{Name: "list-client", Version: "1"}, &o), path, nil)
	lc.cs = cs
	return lc
}

// waitChanged waits for a tools/list_changed, failing the test with what.
func (lc *listClient) waitChanged(t *testing.T, what string) {
	t.Helper()
	select {
	case <-lc.changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no tools/list_changed within 20s", what)
	}
}

// drain forgets the tools/list_changed notifications received so far.
func (lc *listClient) drain() {
	for !lc.drained() {
	}
}

// drained reports whether no tools/list_changed is waiting.
func (lc *listClient) drained() bool {
	select {
	case <-lc.changed:
		return false
	default:
		return true
	}
}

// TestPerClientListChangedGoesToItsOwner: a per_client session's own
// notifications/tools/list_changed reaches the client whose session it is,
// as it would directly, and no other client.
func TestPerClientListChangedGoesToItsOwner(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(statefulServer(t, config.SessionPerClient, 4)))
	a := r.connectListening(t, "/mcp", nil)
	b := r.connectListening(t, "/mcp", nil)
	waitTools(t, a.cs, "st's tools", has("st__count", "st__grow"))
	countOf(t, a.cs)
	countOf(t, b.cs)
	// Whatever the catalog's discovery sent before is not what is tested.
	a.drain()
	b.drain()
	if res := call(t, a.cs, "st__grow", map[string]any{}); res.IsError {
		t.Fatalf("st__grow: %s", textOf(res))
	}
	a.waitChanged(t, "a, whose upstream session added a tool")
	// b's session is told nothing; a call on it passes anything that was
	// sent to it at the same time as a's.
	countOf(t, b.cs)
	if !b.drained() {
		t.Error("b got tools/list_changed from a's upstream session")
	}
}

// TestPerClientDeadSessionIsReopened: an owned session whose server dies
// (killed) or hangs (stopped: found by the health ping) is closed, its
// owner is told tools/list_changed, and its next call opens a new one.
func TestPerClientDeadSessionIsReopened(t *testing.T) {
	t.Parallel()
	cfg := testConfig(statefulServer(t, config.SessionPerClient, 4))
	cfg.Defaults.Health.PingInterval = 100 * time.Millisecond
	cfg.Defaults.Health.PingTimeout = 500 * time.Millisecond
	r := start(t, cfg)
	a := r.connectListening(t, "/mcp", nil)
	waitTools(t, a.cs, "st's tools", has("st__count"))
	_, pid1 := countOf(t, a.cs)
	a.drain()

	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.waitChanged(t, "a, whose upstream session's server was killed")
	n, pid2 := countOf(t, a.cs)
	if n != 1 || pid2 == pid1 {
		t.Errorf("after the kill a counted %d in process %d (the dead one was %d), want 1 in a new process", n, pid2, pid1)
	}
	a.drain()

	if err := syscall.Kill(pid2, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid2, syscall.SIGKILL) })
	a.waitChanged(t, "a, whose upstream session's server stopped answering pings")
	// Let it go: closing its stdin ends it.
	_ = syscall.Kill(pid2, syscall.SIGCONT)
	n, pid3 := countOf(t, a.cs)
	if n != 1 || pid3 == pid2 {
		t.Errorf("after the hang a counted %d in process %d (the hung one was %d), want 1 in a new process", n, pid3, pid2)
	}
	waitFor(t, fmt.Sprintf("the hung child (pid %d) to be reaped", pid2), func() bool { return processGone(pid2) })
}

// TestPerClientListsAreTheSessionsOwn: a client whose per_client session
// added a tool (and said so) lists it and can call it, checked against
// its own session's definition; another client neither lists nor calls
// it, as with its own connection to the server.
func TestPerClientListsAreTheSessionsOwn(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(statefulServer(t, config.SessionPerClient, 4)))
	a := r.connectListening(t, "/mcp", nil)
	b := r.connectListening(t, "/mcp", nil)
	waitTools(t, a.cs, "st's tools", has("st__count", "st__grow"))
	_, pidA := countOf(t, a.cs)
	if res := call(t, a.cs, "st__grow", map[string]any{}); res.IsError {
		t.Fatalf("st__grow: %s", textOf(res))
	}
	a.waitChanged(t, "a, whose upstream session added a tool")
	waitTools(t, a.cs, "a's own st__grown", has("st__grown"))
	if got, want := textOf(call(t, a.cs, "st__grown", map[string]any{})), fmt.Sprintf("grown pid=%d", pidA); got != want {
		t.Errorf("a's st__grown answered %q, want %q", got, want)
	}
	if res := call(t, a.cs, "st__grown", map[string]any{"extra": 1}); errorType(t, res) != "validation_error" {
		t.Errorf("a's st__grown with an argument its schema forbids: %s, want a validation_error", textOf(res))
	}
	if names := toolNames(t, b.cs); !lacks("st__grown")(names) {
		t.Errorf("b lists %v, with a's st__grown", names)
	}
	if _, err := b.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "st__grown", Arguments: map[string]any{}}); err == nil {
		t.Error("b called a's st__grown, want an unknown tool error")
	}
}

// TestPerClientSubscriptionsAreTheSessionsOwn: with per_client a client's
// resources/subscribe goes to its own upstream session, and what that
// session's server updates reaches that client — not another client
// subscribed to the same URI on its own session, whose server changed
// nothing.
func TestPerClientSubscriptionsAreTheSessionsOwn(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(statefulServer(t, config.SessionPerClient, 4)))
	updated := func(ch chan string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			ch <- req.Params.URI
		}}
	}
	aUpdates, bUpdates := make(chan string, 8), make(chan string, 8)
	a := r.connectListening(t, "/mcp", updated(aUpdates))
	b := r.connectListening(t, "/mcp", updated(bUpdates))
	waitTools(t, a.cs, "st's tools", has("st__touch"))
	for _, c := range []*listClient{a, b} {
		if err := c.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "state://count"}); err != nil {
			t.Fatalf("subscribing: %v", err)
		}
	}
	call(t, a.cs, "st__touch", map[string]any{})
	select {
	case uri := <-aUpdates:
		if uri != "state://count" {
			t.Errorf("a got resources/updated for %q, want state://count", uri)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a got no resources/updated from its own upstream session")
	}
	// b's own session changed nothing; a round trip on b passes anything
	// sent to it at the same time.
	countOf(t, b.cs)
	select {
	case uri := <-bUpdates:
		t.Errorf("b got resources/updated for %q, which only a's upstream session sent", uri)
	default:
	}
}
