package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/store/storetest"
	"github.com/switchboard-mcp/switchboard/internal/telemetry"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Init()
	if os.Getenv(envCrashChild) != "" {
		os.Exit(runCrashChild())
	}
	code := m.Run()
	testpg.StopShared()   // the crash and scale-out tests' PostgreSQL
	testpeer.StopShared() // the node peers tests share
	os.Exit(code)
}

// testConfig returns a configuration of the given servers with quick
// reconnects and no pings, listening on a free loopback port.
func testConfig(servers ...config.Server) *config.Config {
	cfg := config.Default()
	cfg.Servers = servers
	cfg.Defaults.RequestTimeout = 10 * time.Second
	cfg.Defaults.Health = config.Health{PingInterval: time.Hour, PingTimeout: time.Second,
		Backoff: []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond}, MaxFailures: 3}
	cfg.Gateway.Listen = "127.0.0.1:0"
	return cfg
}

// okServer is a well-behaved test server.
func okServer(t *testing.T, name string, env ...string) config.Server {
	s := testserver.Server(t, name, "ok", env...)
	s.MaxRetries = 2
	return s
}

// okHTTPServer is the "ok" test server served in the test's own process
// over streamable HTTP (testserver.OKHTTP), for tests whose point is the
// gateway, not the server's process: a race-built child costs 0.15–0.3 s
// of CPU to start. Its crash tools would end the test's process; tests of
// crashes, restarts, stderr or exits use okServer.
func okHTTPServer(t *testing.T, name string) config.Server {
	s := httpUpstream(name, testserver.OKHTTP(t))
	s.MaxRetries = 2
	return s
}

// sharedEverything is server-everything over streamable HTTP, one for the
// test binary (testpeer.Shared): it serves each session with a server of
// its own, so tests that compare what their own sessions see share it
// (a start costs about half a second of CPU). A test about the process
// (its restart, its output) starts its own.
func sharedEverything(t *testing.T) string {
	t.Helper()
	return testpeer.Shared(t, "server-everything streamableHttp", func(tb testing.TB) string {
		return testpeer.StartEverything(tb, "streamableHttp")
	})
}

// sharedStreamableExample is the TypeScript SDK's simpleStreamableHttp
// example, one for the test binary (testpeer.Shared): its task store
// binds each task to the session that created it, and the tests that use
// it each look at their own sessions' tasks only.
func sharedStreamableExample(t *testing.T) string {
	t.Helper()
	return testpeer.Shared(t, "the streamable HTTP example", testpeer.StartStreamableExample)
}

// running is a daemon serving for the length of a test.
type running struct {
	d        *Daemon
	url      string
	stateDir string
	store    store.Store
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

// newDaemon builds a daemon for cfg with a fresh state directory and
// SQLite store, both gone when the test ends; opts adjusts the options
// first.
func newDaemon(t testing.TB, cfg *config.Config, opts ...func(*Options)) (*Daemon, string, store.Store) {
	t.Helper()
	// A short path: unix socket paths are limited to ~100 bytes.
	dir, err := os.MkdirTemp("", "sbd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	st := openStore(t, filepath.Join(dir, "switchboard.db"))
	// Its own Tracing: the spans of daemons of tests running side by side
	// stay apart.
	o := Options{Config: cfg, Store: st, StateDir: dir, Version: "test", Tracing: telemetry.NewTracing()}
	for _, f := range opts {
		f(&o)
	}
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d, dir, st
}

// openStore opens the SQLite history database at path until the test
// ends, first writing the migrated empty database there
// (storetest.Seed: applying the migrations to a new file costs about
// 20 ms of CPU under -race, at every daemon start) if no file is there
// yet (daemons of a test that share a database, as replicas do,
// open the same file).
func openStore(t testing.TB, path string) *store.SQLite {
	t.Helper()
	storetest.Seed(t, path)
	st, err := store.OpenSQLite(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// debugLogOnFailure is an option of start that keeps the daemon's log at
// debug level and prints it if the test fails: what a rare failure (one
// seen only in CI) needs to be understood next time.
func debugLogOnFailure(t *testing.T) func(*Options) {
	return func(o *Options) {
		var logs syncBuffer
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the daemon's log:\n%s", logs.String())
			}
		})
	}
}

// start runs a daemon for cfg until the test ends; opts adjusts the
// options first.
func start(t *testing.T, cfg *config.Config, opts ...func(*Options)) *running {
	t.Helper()
	d, dir, st := newDaemon(t, cfg, opts...)
	if err := d.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, url: "http://" + d.Addr(), stateDir: dir, store: st, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// startStdio runs a daemon for cfg as serve --stdio does (no control
// socket) until the test ends, serving one client over an in-memory pipe,
// and returns the client's end; opts adjusts the options first.
func startStdio(t *testing.T, cfg *config.Config, opts ...func(*Options)) mcp.Transport {
	t.Helper()
	d, _, _ := newDaemon(t, cfg, append([]func(*Options){func(o *Options) { o.NoControl = true }}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	clientT, serverT := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- d.RunStdio(ctx, serverT) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunStdio: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("RunStdio did not return within 30s of the cancel")
		}
	})
	return clientT
}

// stop shuts the daemon down and waits for Run to return.
func (r *running) stop(t *testing.T) {
	r.stopOnce.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the daemon did not shut down within 30s")
		}
	})
}

// headerTransport adds headers to every request.
type headerTransport struct {
	h    http.Header
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// connect opens a client session on path (e.g. "/mcp") with the given
// headers; opts configures the client.
func (r *running) connect(t *testing.T, path string, h http.Header, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return r.connectClient(t, mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts), path, h)
}

func (r *running) tryConnect(path string, h http.Header, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	return r.tryConnectClient(mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts), path, h)
}

// connectClient connects c to path (e.g. "/mcp") with the given headers,
// for the length of the test.
func (r *running) connectClient(t *testing.T, c *mcp.Client, path string, h http.Header) *mcp.ClientSession {
	t.Helper()
	cs, err := r.tryConnectClient(c, path, h)
	if err != nil {
		t.Fatalf("connecting to %s: %v", path, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tryConnectClient connects c to path over streamable HTTP with the given
// headers (none when h is nil), within 20 s.
func (r *running) tryConnectClient(c *mcp.Client, path string, h http.Header) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: r.url + path, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: headerTransport{h, http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.Connect(ctx, tr, nil)
}

// toolNames lists a session's tool names, sorted.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// waitTools polls tools/list until ok accepts the names.
func waitTools(t *testing.T, cs *mcp.ClientSession, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		names := toolNames(t, cs)
		if ok(names) {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: tools are %v", what, names)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func has(names ...string) func([]string) bool {
	return func(got []string) bool {
		for _, n := range names {
			if !slices.Contains(got, n) {
				return false
			}
		}
		return true
	}
}

func lacks(names ...string) func([]string) bool {
	return func(got []string) bool {
		for _, n := range names {
			if slices.Contains(got, n) {
				return false
			}
		}
		return true
	}
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// errorType reads the error_type of an isError result's structured error.
func errorType(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got %q", textOf(r))
	}
	var e struct {
		Type string `json:"error_type"`
	}
	if err := json.Unmarshal([]byte(textOf(r)), &e); err != nil {
		t.Fatalf("error result is not a structured error: %q", textOf(r))
	}
	return e.Type
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// waitRecords polls the history until ok accepts it.
func (r *running) waitRecords(t *testing.T, f store.CallFilter, ok func([]store.CallRecord) bool) []store.CallRecord {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		recs, err := r.store.Calls(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if ok(recs) {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("history never matched; it has %d records: %+v", len(recs), recs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// notifications counts notifications a client receives.
type notifications struct {
	mu     sync.Mutex
	counts map[string]int
	ch     chan string
}

func newNotifications() *notifications {
	return &notifications{counts: map[string]int{}, ch: make(chan string, 100)}
}

func (n *notifications) add(method string) {
	n.mu.Lock()
	n.counts[method]++
	n.mu.Unlock()
	select {
	case n.ch <- method:
	default:
	}
}

func (n *notifications) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.counts[method]
}

// eventually polls cond until it holds, failing the test after 20s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
