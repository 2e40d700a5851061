package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/internal/vcs"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

func TestMain(m *testing.M) {
	testserver.Init()
	os.Exit(m.Run())
}

// fakeGit is the git context tests see unless they use a real repository.
var fakeGit = vcs.Info{User: "tester", Branch: "003-user-auth", Feature: "003-user-auth", Repo: "octo/demo"}

func fakeDescribe(context.Context, string) (vcs.Info, error) { return fakeGit, nil }

// serverYAML renders a server entry for a test configuration.
func serverYAML(s config.Server) string {
	var b strings.Builder
	if s.URL != "" {
		fmt.Fprintf(&b, "  - name: %s\n    transport: %s\n    url: %q\n", s.Name, s.Transport, s.URL)
		return b.String()
	}
	fmt.Fprintf(&b, "  - name: %s\n    command: %q\n", s.Name, s.Command)
	if len(s.Args) > 0 {
		b.WriteString("    args: [")
		for i, a := range s.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", a)
		}
		b.WriteString("]\n")
	}
	if len(s.Env) > 0 {
		b.WriteString("    env:\n")
		for k, v := range s.Env {
			fmt.Fprintf(&b, "      %s: %q\n", k, v)
		}
	}
	return b.String()
}

// parseConfig parses a configuration made of the given servers and the
// rest of the YAML (hooks:, hook_settings:). The file name is "" so that
// no trust is needed.
func parseConfig(t testing.TB, servers []config.Server, rest string) *config.Config {
	t.Helper()
	var b strings.Builder
	b.WriteString("defaults:\n  connect_timeout: 20s\n  request_timeout: 20s\n")
	var cmds []string
	for _, s := range servers {
		if s.Command != "" {
			cmds = append(cmds, fmt.Sprintf("%q", s.Command))
		}
	}
	if len(cmds) > 0 {
		fmt.Fprintf(&b, "security:\n  allowed_commands: [%s]\n", strings.Join(cmds, ", "))
	}
	b.WriteString("servers:\n")
	if len(servers) == 0 {
		b.WriteString("  []\n")
	}
	for _, s := range servers {
		b.WriteString(serverYAML(s))
	}
	b.WriteString(rest)
	cfg, err := config.Parse("", []byte(b.String()), config.Options{})
	if err != nil {
		t.Fatalf("parsing the test configuration: %v\n%s", err, b.String())
	}
	return cfg
}

// fixture is an engine over real servers, a real store and the execution
// engine.
type fixture struct {
	cfg   *config.Config
	eng   *hooks.Engine
	calls *toolcall.Engine
	cat   *catalog.Catalog
	pool  *upstream.Pool
	st    store.Store

	// recs are the call records the execution engine made.
	recMu sync.Mutex
	recs  []store.CallRecord
}

// Commit keeps the execution engine's call records (toolcall.Recorder).
func (f *fixture) Commit(_ context.Context, r store.CallRecord) error {
	f.recMu.Lock()
	defer f.recMu.Unlock()
	f.recs = append(f.recs, r)
	return nil
}

// records returns the call records so far.
func (f *fixture) records() []store.CallRecord {
	f.recMu.Lock()
	defer f.recMu.Unlock()
	return append([]store.CallRecord(nil), f.recs...)
}

// newFixture starts the servers cfg names (waiting for those in wait),
// opens a SQLite store and builds and runs the engine; change adjusts the
// options first.
func newFixture(t testing.TB, cfg *config.Config, wait []string, change func(*hooks.Options)) *fixture {
	t.Helper()
	f := &fixture{cfg: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "hooks.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f.st = st

	f.pool, err = upstream.NewPool(upstream.PoolOptions{
		Config:    cfg,
		OnConnect: func(c *upstream.Client) { f.cat.Connected(c.Server().Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.cat = catalog.New(catalog.Options{Source: f.pool, Servers: cfg.Servers})
	wg.Add(2)
	go func() { defer wg.Done(); _ = f.pool.Run(ctx) }()
	go func() { defer wg.Done(); _ = f.cat.Run(ctx) }()
	for _, name := range wait {
		if _, err := f.pool.WaitConnected(context.Background(), name, 60*time.Second); err != nil {
			t.Fatalf("connecting %s: %v", name, err)
		}
		if err := f.cat.Refresh(context.Background(), name); err != nil {
			t.Fatalf("discovering %s: %v", name, err)
		}
	}
	f.calls, err = toolcall.New(toolcall.Options{Config: cfg, Upstreams: f.pool, Catalog: f.cat, Recorder: f})
	if err != nil {
		t.Fatal(err)
	}
	opts := hooks.Options{Config: cfg, Calls: f.calls, Catalog: f.cat, Store: st, Describe: fakeDescribe, Dir: t.TempDir()}
	if change != nil {
		change(&opts)
	}
	f.eng, err = hooks.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.calls.SetInterceptor(f.eng)
	wg.Add(1)
	go func() { defer wg.Done(); _ = f.eng.Run(ctx) }()
	waitFor(t, 5*time.Second, "the engine to run", func() bool { return f.eng.Running() })
	return f
}

// engineOnly builds and runs an engine with no servers.
func engineOnly(t testing.TB, rest string, change func(*hooks.Options)) *fixture {
	t.Helper()
	return newFixture(t, parseConfig(t, nil, rest), nil, change)
}

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runs returns the recorded runs matching f once want of them are
// stored.
func (f *fixture) runs(t testing.TB, filter store.HookRunFilter, want int) []store.HookRun {
	t.Helper()
	filter.Limit = 100000
	var got []store.HookRun
	waitFor(t, 30*time.Second, fmt.Sprintf("%d hook runs recorded", want), func() bool {
		if err := f.eng.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var err error
		got, err = f.st.HookRuns(context.Background(), filter)
		if err != nil {
			t.Fatal(err)
		}
		return len(got) >= want
	})
	return got
}

// script writes an executable shell script into dir and returns its path.
func script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// okServer is the testserver in mode ok.
func okServer(t testing.TB, name string) config.Server {
	return testserver.Server(t, name, "ok")
}
