package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	runPeerClient()
	testserver.Init()
	os.Exit(m.Run())
}

// fixture is a Local backend over real components (a testserver stdio
// child, a SQLite store) served on a unix socket, and a client for it.
type fixture struct {
	local   control.Backend
	client  *control.Client
	eng     *toolcall.Engine
	store   store.Store
	flag    string
	sock    string
	reloads atomic.Int64
}

// shortDir returns a temporary directory whose path is short enough for a
// unix socket (108 bytes).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := shortDir(t)
	srv := testserver.Server(t, "alpha", "ok")
	cfg := &config.Config{Source: filepath.Join(dir, "switchboard.yaml"), Servers: []config.Server{srv}, Defaults: config.Defaults{
		RequestTimeout: 10 * time.Second,
		Health: config.Health{PingInterval: time.Hour, PingTimeout: 5 * time.Second,
			Backoff: []time.Duration{20 * time.Millisecond}, MaxFailures: 3},
	}}
	cfg.Limits = config.Limits{MaxConcurrent: 25, MaxQueue: 1000, SessionLimit: -1, MaxOutputBytes: 1 << 20}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, filepath.Join(dir, "switchboard.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cat *catalog.Catalog
	pool, err := upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		Store:     st,
		OnConnect: func(c *upstream.Client) { cat.Connected(c.Server().Name) },
		Events: func(server string) upstream.Events {
			return upstream.Events{ToolsChanged: func() { cat.Invalidate(server, catalog.KindTools) }}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat = catalog.New(catalog.Options{Source: pool, Servers: cfg.Servers, TTL: time.Hour})
	rec := store.NewRecorder(st, store.RecorderOptions{FlushInterval: 10 * time.Millisecond})
	eng, err := toolcall.New(toolcall.Options{Config: cfg, Upstreams: pool, Catalog: cat, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{eng: eng, store: st, flag: filepath.Join(dir, "stopped"), sock: control.SocketPath(dir)}
	f.local = control.NewLocal(control.Components{
		Config: func() *config.Config { return cfg }, Pool: pool, Catalog: cat, Engine: eng, Store: st,
		StopFlag: f.flag, Version: "test", Address: "127.0.0.1:0", StartedAt: time.Now().UTC(),
		Reload: func(context.Context) (control.ReloadReport, error) {
			f.reloads.Add(1)
			return control.ReloadReport{Source: cfg.Source, Unchanged: []string{"alpha"}, Warnings: []string{"nothing changed"}}, nil
		},
	})
	ln, err := control.Listen(f.sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: control.NewHandler(f.local, nil)}
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); _ = pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = cat.Run(ctx) }()
	go func() { defer wg.Done(); _ = rec.Run(ctx) }()
	go func() { defer wg.Done(); _ = hs.Serve(ln) }()
	f.client = control.Dial(f.sock)
	t.Cleanup(func() {
		f.client.Close()
		_ = hs.Close()
		cancel()
		wg.Wait()
		st.Close()
	})
	if _, err := pool.WaitConnected(ctx, "alpha", 20*time.Second); err != nil {
		t.Fatalf("connecting alpha: %v", err)
	}
	if err := cat.Refresh(ctx, "alpha"); err != nil {
		t.Fatalf("discovering alpha: %v", err)
	}
	// The test server adds its "late" tool 300 ms after it starts and
	// announces it; until the catalog has it, two looks at the same list
	// (through the client and locally) can differ.
	waitCatalogTool(t, cat, "alpha", "late")
	return f
}

// waitCatalogTool waits until the catalog lists the named tool of server.
func waitCatalogTool(t *testing.T, cat *catalog.Catalog, server, name string) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		changed := cat.Changed()
		for _, tl := range cat.ServerTools(server) {
			if tl.Def.Name == name {
				return
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the catalog never listed %s's tool %q (it lists %d of its tools)", server, name, len(cat.ServerTools(server)))
		}
	}
}

// maskServers clears what changes from one look to the next.
func maskServers(rows []control.ServerInfo) []control.ServerInfo {
	for i := range rows {
		rows[i].Latency, rows[i].LatencyMS, rows[i].LastPingAt = 0, "", time.Time{}
	}
	return rows
}

func TestMethodsMatchLocal(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	t.Run("status", func(t *testing.T) {
		got, err := f.client.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.local.Status(ctx)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("status (-local +client):\n%s", diff)
		}
		if got.PID != os.Getpid() || got.Version != "test" || !filepath.IsAbs(got.ConfigSource) {
			t.Errorf("status: got %+v, want this pid, version test, an absolute source", got)
		}
	})
	t.Run("servers", func(t *testing.T) {
		got, err := f.client.Servers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.local.Servers(ctx)
		if len(got) != 1 || got[0].LatencyMS == "" || got[0].Tools < 5 || got[0].Prompts != 1 || got[0].Resources != 1 {
			t.Errorf("servers: got %+v, want alpha pinged, with its lists counted", got)
		}
		if diff := cmp.Diff(maskServers(want), maskServers(got)); diff != "" {
			t.Errorf("servers (-local +client):\n%s", diff)
		}
	})
	t.Run("tools", func(t *testing.T) {
		for _, server := range []string{"", "alpha"} {
			got, err := f.client.Tools(ctx, server)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := f.local.Tools(ctx, server)
			// The schema decodes to the same JSON, not the same Go types.
			if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, got)); diff != "" {
				t.Errorf("tools %q (-local +client):\n%s", server, diff)
			}
			if len(got.Tools) < 5 {
				t.Errorf("tools %q: got %d, want at least 5", server, len(got.Tools))
			}
		}
		got, err := f.client.Tool(ctx, "alpha", "echo")
		if err != nil {
			t.Fatal(err)
		}
		if got.Exposed != "alpha__echo" || got.Annotations == nil || !got.Annotations.ReadOnlyHint {
			t.Errorf("tool echo: got %+v, want exposed alpha__echo, read-only", got)
		}
	})
	t.Run("call and history", func(t *testing.T) {
		var progress []toolcall.Progress
		res, err := f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "stream", Arguments: json.RawMessage(`{"steps": 3, "step_ms": 20}`),
			Source: "cli", Identity: "tester", OnProgress: func(p toolcall.Progress) { progress = append(progress, p) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "success" || res.Result == nil || len(res.Result.Content) != 1 || res.ID == "" {
			t.Fatalf("call stream: got %+v, want a successful result", res)
		}
		if len(progress) == 0 || progress[len(progress)-1].Message == "" {
			t.Errorf("call stream: got progress %+v, want the steps streamed", progress)
		}
		lres, err := f.local.Call(ctx, control.CallRequest{Server: "alpha", Tool: "stream", Arguments: json.RawMessage(`{"steps": 3, "step_ms": 20}`), Source: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(jsonOf(t, lres.Result), jsonOf(t, res.Result)); diff != "" {
			t.Errorf("call result (-local +client):\n%s", diff)
		}

		rec := waitCall(t, f.client, res.ID)
		if rec.Identity != "tester" || rec.Source != "cli" || rec.Tool != "stream" {
			t.Errorf("recorded call: got %+v, want stream by tester from cli", rec)
		}
		short, err := f.client.HistoryCall(ctx, res.ID[:8])
		if err != nil || short.ID != res.ID {
			t.Errorf("history call by short id: got %q (%v), want %q", short.ID, err, res.ID)
		}
		got, err := f.client.History(ctx, store.CallFilter{Tool: "stream", Identity: "tester"})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.local.History(ctx, store.CallFilter{Tool: "stream", Identity: "tester"})
		if len(got) != 1 {
			t.Errorf("history: got %d calls, want 1", len(got))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("history (-local +client):\n%s", diff)
		}
	})
	t.Run("server actions", func(t *testing.T) {
		res, err := f.client.ServerAction(ctx, "refresh", "alpha")
		if err != nil || res.Tools < 5 || res.Prompts != 1 || res.Resources != 1 {
			t.Errorf("refresh: got %+v (%v), want the counts", res, err)
		}
		for _, step := range []struct {
			action      string
			wantChanged bool
			wantEnabled bool
		}{{"disable", true, false}, {"disable", false, false}, {"enable", true, true}, {"enable", false, true}} {
			res, err := f.client.ServerAction(ctx, step.action, "alpha")
			if err != nil {
				t.Fatalf("%s: %v", step.action, err)
			}
			if res.Changed != step.wantChanged {
				t.Errorf("%s: got changed %v, want %v", step.action, res.Changed, step.wantChanged)
			}
			rows, _ := f.client.Servers(ctx)
			if rows[0].Enabled != step.wantEnabled {
				t.Errorf("after %s: got enabled %v, want %v", step.action, rows[0].Enabled, step.wantEnabled)
			}
		}
	})
	t.Run("stop and resume", func(t *testing.T) {
		if _, err := f.client.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(f.flag); err != nil {
			t.Errorf("stop: the stop switch file: %v, want it written", err)
		}
		st, _ := f.client.Status(ctx)
		if !st.Stopped || !f.eng.Stopped() {
			t.Errorf("stop: got status stopped %v, engine stopped %v, want both", st.Stopped, f.eng.Stopped())
		}
		_, err := f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "echo", Arguments: json.RawMessage(`{"message": "x"}`)})
		if err == nil {
			t.Errorf("call while stopped: got no error, want one")
		}
		for _, want := range []bool{true, false} {
			was, err := f.client.Resume(ctx)
			if err != nil || was != want {
				t.Errorf("resume: got %v (%v), want %v", was, err, want)
			}
		}
		if _, err := os.Stat(f.flag); !errors.Is(err, os.ErrNotExist) || f.eng.Stopped() {
			t.Errorf("resume: got flag %v, engine stopped %v, want both gone", err, f.eng.Stopped())
		}
	})
	t.Run("reload", func(t *testing.T) {
		got, err := f.client.Reload(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := control.ReloadReport{Source: got.Source, Unchanged: []string{"alpha"}, Warnings: []string{"nothing changed"}}
		if diff := cmp.Diff(want, got); diff != "" || f.reloads.Load() != 1 {
			t.Errorf("reload (-want +got), %d reloads:\n%s", f.reloads.Load(), diff)
		}
		_, err = control.NewLocal(control.Components{}).Reload(ctx)
		if fault.KindOf(err) != fault.Config || !strings.Contains(err.Error(), "no daemon is running") {
			t.Errorf("reload without a daemon: got %v, want a config error saying no daemon runs", err)
		}
	})
}

// waitCall polls the history until the call is recorded.
func waitCall(t *testing.T, b control.Backend, id string) store.CallRecord {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := b.HistoryCall(context.Background(), id)
		if err == nil {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("call %s was not recorded: %v", id, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestErrorsRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		run      func(b control.Backend) error
		wantKind fault.Kind
	}{
		{"unknown tool, with a suggestion", func(b control.Backend) error { _, err := b.Tool(ctx, "alpha", "ecoh"); return err }, fault.NotFound},
		{"unknown server", func(b control.Backend) error { _, err := b.Tools(ctx, "alpah"); return err }, fault.NotFound},
		{"invalid arguments, with fields", func(b control.Backend) error {
			_, err := b.Call(ctx, control.CallRequest{Server: "alpha", Tool: "add", Arguments: json.RawMessage(`{"a": "two"}`)})
			return err
		}, fault.Validation},
		{"timeout", func(b control.Backend) error {
			_, err := b.Call(ctx, control.CallRequest{Server: "alpha", Tool: "slow", Arguments: json.RawMessage(`{"seconds": 30}`), Timeout: time.Second})
			return err
		}, fault.Timeout},
		{"unknown action", func(b control.Backend) error { _, err := b.ServerAction(ctx, "explode", "alpha"); return err }, fault.Validation},
		{"unknown call id", func(b control.Backend) error {
			_, err := b.HistoryCall(ctx, "00000000-0000-0000-0000-000000000000")
			return err
		}, fault.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lerr, cerr := tt.run(f.local), tt.run(f.client)
			if lerr == nil || cerr == nil {
				t.Fatalf("got local %v, client %v, want both to fail", lerr, cerr)
			}
			var fe *fault.Error
			if !errors.As(cerr, &fe) {
				t.Fatalf("client error: got %T, want *fault.Error", cerr)
			}
			want := fault.As(lerr)
			if fe.Kind != tt.wantKind || want.Kind != tt.wantKind {
				t.Errorf("kind: got local %s, client %s, want %s", want.Kind, fe.Kind, tt.wantKind)
			}
			if cerr.Error() != lerr.Error() {
				t.Errorf("message: got %q, want %q", cerr.Error(), lerr.Error())
			}
			ignore := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())
			if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, fe)); diff != "" {
				t.Errorf("wire form (-local +client):\n%s", diff)
			}
			if diff := cmp.Diff(want.Fields, fe.Fields, ignore); diff != "" {
				t.Errorf("fields (-local +client):\n%s", diff)
			}
			if diff := cmp.Diff(want.Suggestions, fe.Suggestions); diff != "" {
				t.Errorf("suggestions (-local +client):\n%s", diff)
			}
		})
	}
	// The cases above that promise fields and suggestions have them.
	_, err := f.client.Tool(ctx, "alpha", "ecoh")
	if fe := fault.As(err); len(fe.Suggestions) == 0 {
		t.Errorf("unknown tool: got no suggestions, want %q", "echo")
	}
	_, err = f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "add", Arguments: json.RawMessage(`{"a": "two"}`)})
	if fe := fault.As(err); len(fe.Fields) == 0 {
		t.Errorf("invalid arguments: got no fields in %v, want them", err)
	}
}

func TestCancelledCallIsCancelledInTheDaemon(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "slow", Arguments: json.RawMessage(`{"seconds": 30}`), Source: "cli"})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for f.eng.Stats().InFlight == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started in the daemon")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if fault.KindOf(err) != fault.Cancelled {
			t.Errorf("client: got %v (kind %s), want cancelled", err, fault.KindOf(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not return after cancelling")
	}
	for f.eng.Stats().InFlight != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call is still in flight in the daemon after the client went away")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var calls []store.CallRecord
	for {
		calls, _ = f.store.Calls(context.Background(), store.CallFilter{Tool: "slow"})
		if len(calls) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(calls) != 1 || calls[0].Status != "cancelled" {
		t.Errorf("recorded: got %+v, want one cancelled call", calls)
	}
}

func TestListen(t *testing.T) {
	t.Run("mode and a live daemon", func(t *testing.T) {
		f := newFixture(t)
		fi, err := os.Stat(f.sock)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("socket mode: got %o, want 600", got)
		}
		_, err = control.Listen(f.sock)
		if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
			t.Errorf("second listen: got %v, want a refusal naming pid %d", err, os.Getpid())
		}
		if _, err := f.client.Status(context.Background()); err != nil {
			t.Errorf("the first daemon after a refused listen: %v, want it still answering", err)
		}
	})
	t.Run("stale socket", func(t *testing.T) {
		path := control.SocketPath(filepath.Join(shortDir(t), "state"))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("the stale socket: %v, want it left behind", err)
		}
		ln, err = control.Listen(path)
		if err != nil {
			t.Fatalf("listen over a stale socket: %v", err)
		}
		ln.Close()
	})
	t.Run("new directory", func(t *testing.T) {
		dir := filepath.Join(shortDir(t), "new")
		ln, err := control.Listen(control.SocketPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("directory mode: got %o, want 700", got)
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		path := control.SocketPath(shortDir(t))
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := control.Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("listen over a file: got %v, want a refusal", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "x" {
			t.Errorf("the file: got %q, want it untouched", b)
		}
	})
	t.Run("nobody listening", func(t *testing.T) {
		_, err := control.Dial(control.SocketPath(shortDir(t))).Status(context.Background())
		if fault.KindOf(err) != fault.Connection {
			t.Errorf("status with no daemon: got %v, want a connection error", err)
		}
	})
}

func TestNoGoroutineLeftBehind(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("serve", func(t *testing.T) {
		f := newFixture(t)
		ctx := context.Background()
		if _, err := f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "echo", Arguments: json.RawMessage(`{"message": "x"}`)}); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, _ = f.client.Call(cctx, control.CallRequest{Server: "alpha", Tool: "slow", Arguments: json.RawMessage(`{"seconds": 30}`)})
		if _, err := f.client.Servers(ctx); err != nil {
			t.Fatal(err)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: got %d after shutdown, want at most %d as before\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHistoryCallByShortID(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	recs := []store.CallRecord{
		{ID: "abcd1111-0000-4000-8000-000000000001", Source: "cli", Server: "alpha", Tool: "echo", Status: "success", StartedAt: now},
		{ID: "abcd2222-0000-4000-8000-000000000002", Source: "cli", Server: "alpha", Tool: "echo", Status: "success", StartedAt: now.Add(time.Millisecond)},
	}
	if err := f.store.RecordCalls(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]control.Backend{"local": f.local, "client": f.client} {
		t.Run(name, func(t *testing.T) {
			if got, err := b.HistoryCall(ctx, "abcd2"); err != nil || got.ID != recs[1].ID {
				t.Errorf("a unique start: got %q (%v), want %s", got.ID, err, recs[1].ID)
			}
			_, err := b.HistoryCall(ctx, "abcd")
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Validation || !strings.Contains(fe.Message, "ambiguous") ||
				!strings.Contains(fe.Message, recs[0].ID) || !strings.Contains(fe.Message, recs[1].ID) {
				t.Errorf("a start two calls share: got %v, want a validation error naming both", err)
			}
			if _, err := b.HistoryCall(ctx, "ffff"); fault.KindOf(err) != fault.NotFound {
				t.Errorf("a start no call has: got %v, want not found", err)
			}
		})
	}
}

// A call made through the daemon (doc run, hooks fire) keeps its origin:
// the history says which document block made it.
func TestCallOriginCrossesTheSocket(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const origin = "document /srv/runbook.md:12 ^check"
	res, err := f.client.Call(ctx, control.CallRequest{Server: "alpha", Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`),
		Source: "document", Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err := f.client.HistoryCall(ctx, res.ID)
		if err == nil {
			if rec.Origin != origin {
				t.Errorf("recorded origin: got %q, want %q", rec.Origin, origin)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call %s was never recorded: %v", res.ID, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
