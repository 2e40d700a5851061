package daemon

//lint:file-ignore SA1019 roots and logging are deprecated only from protocol 2026-07-28; clients use them today.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// statefulServer is a stdio server whose state is its session's (one
// process per session): see testserver's "stateful" mode.
func statefulServer(t *testing.T, mode config.SessionMode, maxSessions int) config.Server {
	s := testserver.Server(t, "st", "stateful")
	s.Session, s.MaxSessions = mode, maxSessions
	return s
}

// rootsClient is a go-sdk client of the gateway that declares roots (and
// their changes) and records the log messages it gets.
type rootsClient struct {
	c    *mcp.Client
	cs   *mcp.ClientSession
	logs chan string
}

// connectWithRoots opens a client session on /mcp whose roots are uris,
// with the given headers.
func (r *running) connectWithRoots(t *testing.T, h http.Header, uris ...string) *rootsClient {
	t.Helper()
	rc := &rootsClient{logs: make(chan string, 16)}
	rc.c = mcp.NewClient(&mcp.Implementation{Name: "roots-client", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			select {
			case rc.logs <- fmt.Sprint(req.Params.Data):
			default:
			}
		},
	})
	for _, u := range uris {
		rc.c.AddRoots(&mcp.Root{URI: u})
	}
	cs := r.connectClient(t, rc.c, "/mcp", h)
	rc.cs = cs
	return rc
}

// countOf calls st__count and returns the count and the server's pid.
func countOf(t *testing.T, cs *mcp.ClientSession) (n, pid int) {
	t.Helper()
	res := call(t, cs, "st__count", map[string]any{})
	if res.IsError {
		t.Fatalf("st__count failed: %s", textOf(res))
	}
	if _, err := fmt.Sscanf(textOf(res), "count=%d pid=%d", &n, &pid); err != nil {
		t.Fatalf("st__count answered %q: %v", textOf(res), err)
	}
	return n, pid
}

// waitFor polls ok until it holds, or fails the test with what.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: it did not happen within 20s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether process pid has exited and been reaped.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// ownedSessions returns how many owned sessions a server (default st)
// has open.
func (r *running) ownedSessions(server ...string) int {
	name := "st"
	if len(server) > 0 {
		name = server[0]
	}
	for _, sn := range r.d.Pool().Snapshots() {
		if sn.Server == name {
			return sn.Sessions
		}
	}
	return -1
}

// TestPerClientSessions: two gateway clients of a per_client stdio server
// each get an upstream session (a child process) of their own: separate
// state, the roots each declared when the server asks at initialize, a
// roots change forwarded to its own session only, its own log messages
// outside any call; max_sessions refuses one more with a
// limit_exceeded_error; closing a client's session kills its child.
func TestPerClientSessions(t *testing.T) {
	t.Parallel()
	cfg := testConfig(statefulServer(t, config.SessionPerClient, 2))
	r := start(t, cfg)
	a := r.connectWithRoots(t, nil, "file:///work/a")
	b := r.connectWithRoots(t, nil, "file:///work/b")
	waitTools(t, a.cs, "st's tools", has("st__count", "st__roots"))

	n1, pidA := countOf(t, a.cs)
	n2, pidA2 := countOf(t, a.cs)
	nb, pidB := countOf(t, b.cs)
	if n1 != 1 || n2 != 2 || pidA2 != pidA {
		t.Errorf("client a counted %d then %d (pids %d, %d), want 1 then 2 in one process", n1, n2, pidA, pidA2)
	}
	if nb != 1 || pidB == pidA {
		t.Errorf("client b counted %d in process %d (a's is %d), want 1 in a process of its own", nb, pidB, pidA)
	}
	if got := r.ownedSessions(); got != 2 {
		t.Errorf("servers snapshot: %d owned sessions, want 2", got)
	}

	// Roots asked at the upstream's initialize reach the client whose
	// session it is.
	if got := textOf(call(t, a.cs, "st__roots", map[string]any{})); got != "file:///work/a" {
		t.Errorf("a's upstream session got roots %q, want a's file:///work/a", got)
	}
	if got := textOf(call(t, b.cs, "st__roots", map[string]any{})); got != "file:///work/b" {
		t.Errorf("b's upstream session got roots %q, want b's file:///work/b", got)
	}

	// A change of b's roots reaches b's upstream session, which asks again.
	b.c.AddRoots(&mcp.Root{URI: "file:///work/b2"})
	waitFor(t, "b's new roots to reach its upstream session", func() bool {
		return textOf(call(t, b.cs, "st__roots", map[string]any{})) == "file:///work/b,file:///work/b2"
	})
	if got := textOf(call(t, a.cs, "st__roots", map[string]any{})); got != "file:///work/a" {
		t.Errorf("after b's change a's upstream session has roots %q, want still file:///work/a", got)
	}

	// A log message the server sends outside any call goes to its owner.
	if err := a.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if err := b.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	call(t, b.cs, "st__background", map[string]any{})
	select {
	case got := <-b.logs:
		if want := fmt.Sprintf("background pid=%d", pidB); got != want {
			t.Errorf("b got log %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("b never got its upstream session's log message")
	}
	call(t, a.cs, "st__background", map[string]any{})
	select {
	case got := <-a.logs:
		if want := fmt.Sprintf("background pid=%d", pidA); got != want {
			t.Errorf("a got log %q, want its own %q (b's message must not reach a)", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a never got its upstream session's log message")
	}

	// A third client is over max_sessions: 2.
	c := r.connectWithRoots(t, nil)
	res := call(t, c.cs, "st__count", map[string]any{})
	if got := errorType(t, res); got != "limit_exceeded_error" || !strings.Contains(textOf(res), "max_sessions") {
		t.Errorf("a third session's call: %s, want a limit_exceeded_error naming max_sessions", textOf(res))
	}

	// Closing a's session (DELETE) closes its upstream session: the child
	// exits and is reaped, and c may open one.
	if err := a.cs.Close(); err != nil {
		t.Fatalf("closing a: %v", err)
	}
	waitFor(t, fmt.Sprintf("a's child (pid %d) to exit", pidA), func() bool { return processGone(pidA) })
	waitFor(t, "the owned sessions to drop to 1", func() bool { return r.ownedSessions() == 1 })
	if n, pid := countOf(t, c.cs); n != 1 || pid == pidA || pid == pidB {
		t.Errorf("c counted %d in process %d, want 1 in a new process", n, pid)
	}

	// Stopping the daemon leaves no child behind.
	r.stop(t)
	for _, pid := range []int{pidB} {
		if !processGone(pid) {
			t.Errorf("after shutdown process %d is still there", pid)
		}
	}
}

// TestPerUserSessions: on a per_user server the sessions of one user
// share one upstream session, and another user's is apart.
func TestPerUserSessions(t *testing.T) {
	t.Parallel()
	cfg := testConfig(statefulServer(t, config.SessionPerUser, 4))
	cfg.Gateway.Tokens = []config.Token{
		{Name: "ada", User: "ada", Secret: "ada-secret"},
		{Name: "bob", User: "bob", Secret: "bob-secret"},
	}
	r := start(t, cfg)
	bearer := func(s string) http.Header { return http.Header{"Authorization": {"Bearer " + s}} }
	ada1 := r.connectWithRoots(t, bearer("ada-secret"))
	ada2 := r.connectWithRoots(t, bearer("ada-secret"))
	bob := r.connectWithRoots(t, bearer("bob-secret"))
	waitTools(t, ada1.cs, "st's tools", has("st__count"))

	n1, pid1 := countOf(t, ada1.cs)
	n2, pid2 := countOf(t, ada2.cs)
	nb, pidB := countOf(t, bob.cs)
	if n1 != 1 || n2 != 2 || pid1 != pid2 {
		t.Errorf("ada's two sessions counted %d and %d (pids %d, %d), want 1 and 2 in one process", n1, n2, pid1, pid2)
	}
	if nb != 1 || pidB == pid1 {
		t.Errorf("bob counted %d in process %d (ada's is %d), want 1 in a process of his own", nb, pidB, pid1)
	}
	if got := r.ownedSessions(); got != 2 {
		t.Errorf("servers snapshot: %d owned sessions, want 2 (one per user)", got)
	}

	// Ada's upstream session lasts while one of her sessions does.
	if err := ada1.cs.Close(); err != nil {
		t.Fatal(err)
	}
	if n, pid := countOf(t, ada2.cs); n != 3 || pid != pid1 {
		t.Errorf("after ada's first session closed, her second counted %d in process %d, want 3 in %d", n, pid, pid1)
	}
	if err := ada2.cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("ada's child (pid %d) to exit", pid1), func() bool { return processGone(pid1) })
	if n, pid := countOf(t, bob.cs); n != 2 || pid != pidB {
		t.Errorf("bob counted %d in process %d, want 2 in his own %d", n, pid, pidB)
	}
}

// TestSharedSessionByDefault: without session:, every client shares the
// one upstream session (what per_client changes).
func TestSharedSessionByDefault(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(statefulServer(t, "", 0)))
	a := r.connectWithRoots(t, nil)
	b := r.connectWithRoots(t, nil)
	waitTools(t, a.cs, "st's tools", has("st__count"))
	_, pidA := countOf(t, a.cs)
	n, pidB := countOf(t, b.cs)
	if n != 2 || pidA != pidB {
		t.Errorf("b counted %d in process %d (a's %d), want 2 in the same shared process", n, pidB, pidA)
	}
	if got := r.ownedSessions(); got != 0 {
		t.Errorf("servers snapshot: %d owned sessions, want 0", got)
	}
}

// TestPerClientSessionsEverything: server-everything (TypeScript SDK)
// over stdio with session: per_client asks each client for its roots
// when its session starts, and get-roots-list shows each client its own.
func TestPerClientSessionsEverything(t *testing.T) {
	t.Parallel()
	srv := everythingPerClient(t)
	r := start(t, testConfig(srv))
	a := r.connectWithRoots(t, nil, "file:///work/alpha")
	b := r.connectWithRoots(t, nil, "file:///work/beta")
	waitTools(t, a.cs, "server-everything's get-roots-list", has("ev__get-roots-list"))
	for _, c := range []struct {
		who          string
		cs           *mcp.ClientSession
		want, absent string
	}{{"a", a.cs, "file:///work/alpha", "file:///work/beta"}, {"b", b.cs, "file:///work/beta", "file:///work/alpha"}} {
		res := call(t, c.cs, "ev__get-roots-list", map[string]any{})
		got := textOf(res)
		if res.IsError || !strings.Contains(got, c.want) || strings.Contains(got, c.absent) {
			t.Errorf("%s's get-roots-list: %q, want its own %s and not %s", c.who, got, c.want, c.absent)
		}
	}
	if got := r.ownedSessions("ev"); got != 2 {
		t.Errorf("servers snapshot: %d owned sessions of ev, want 2", got)
	}
}

// everythingPerClient is server-everything (TypeScript SDK) over stdio
// with session: per_client, named ev.
func everythingPerClient(t *testing.T) config.Server {
	srv := config.Server{Name: "ev", Transport: config.TransportStdio, Enabled: true,
		LoadTools: true, LoadPrompts: true, LoadResources: true,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second,
		Session: config.SessionPerClient}
	srv.Command, srv.Args = testpeer.EverythingCommand(t)
	return srv
}

// sampleX answers every sampling request with "x".
func sampleX(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "x"}, Model: "m", Role: "assistant"}, nil
}

// declineElicitation declines every elicitation.
func declineElicitation(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}
