package upstream

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestSupervisorCannotStart: a server whose configuration says it cannot
// start (its cwd does not exist) is never started: it is shown in the
// state cannot_start with the cause and its place in the file, and what
// to do; Client and WaitConnected answer at once with a config error
// that says so; Enable leaves it so, and it counts no failure, however
// long it waits. Run in Once mode (a CLI command), it says nothing of a
// reload.
func TestSupervisorCannotStart(t *testing.T) {
	t.Parallel()
	srv := testserver.Server(t, "bad", "ok")
	srv.CannotStart = []config.Problem{{
		Pos:     config.Pos{File: "/p/claude.json", Line: 4, Col: 12},
		Field:   "mcpServers.bad.cwd",
		Message: "directory /p/work does not exist",
		Fix:     "create it, or fix the path",
		Err:     &config.MissingPathError{Server: "bad", Field: "mcpServers.bad.cwd", What: "directory", Path: "/p/work", Err: fs.ErrNotExist},
	}}
	cfg := &config.Config{Defaults: config.Defaults{Health: fastHealth()}, Servers: []config.Server{srv}}
	pool, err := NewPool(PoolOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	s, _ := pool.Supervisor("bad")
	snap := waitSnapshot(t, s, 10*time.Second, "cannot_start", func(sn Snapshot) bool { return sn.State == StateCannotStart })
	const cause = "/p/claude.json:4:12: mcpServers.bad.cwd: directory /p/work does not exist"
	if snap.LastError != cause || snap.Status != StatusUnavailable || len(snap.Suggestions) != 2 ||
		snap.Suggestions[0] != "create it, or fix the path" || !strings.Contains(snap.Suggestions[1], "switchboard reload") {
		t.Errorf("snapshot: got %+v, want the cause %q, unavailable, the fix and the reload", snap, cause)
	}
	start := time.Now()
	_, err = pool.WaitConnected(ctx, "bad", 10*time.Second)
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.Config || fe.Message != "server bad cannot start: "+cause || time.Since(start) > 5*time.Second {
		t.Errorf("WaitConnected: got %v after %s, want at once the config error naming the cause", err, time.Since(start))
	}
	if err := s.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	snap = waitSnapshot(t, s, 10*time.Second, "cannot_start after Enable", func(sn Snapshot) bool { return sn.State == StateCannotStart })
	if snap.ConsecutiveFailures != 0 || snap.AutoDisabled || snap.Retrying {
		t.Errorf("after Enable: got %+v, want no failure counted, no retry", snap)
	}

	// Once mode: settled at once, and no word of a reload.
	once := NewSupervisor(SupervisorOptions{Server: srv, Health: fastHealth(), Once: true})
	if err := once.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sn := once.Snapshot(); sn.State != StateCannotStart || len(sn.Suggestions) != 1 {
		t.Errorf("Once: got %+v, want cannot_start with the fix alone", sn)
	}
	if _, err := once.Client(); fault.KindOf(err) != fault.Config {
		t.Errorf("Once Client: got %v, want a config error", err)
	}
}
