package daemon

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestControlEventsNameThePeer: what a running daemon records for actions
// asked over its control socket — a disable, a stop, a resume, a reload —
// names the process that asked (this test's: its uid, user name and pid,
// from the kernel), via control.
func TestControlEventsNameThePeer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	trail := filepath.Join(dir, "audit.jsonl")
	path := filepath.Join(dir, "switchboard.yaml")
	writeConfig(t, path, map[string]string{"alpha": "ok"}, "audit:\n  file: audit.jsonl\n")
	load := func() (*config.Config, error) { return config.Load(path, config.Options{}) }
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg, func(o *Options) { o.Load = load })
	ctx := context.Background()
	c := control.Dial(control.SocketPath(r.stateDir))
	defer c.Close()
	eventually(t, "the control socket answering", func() bool { _, err := c.Status(ctx); return err == nil })
	if _, err := c.ServerAction(ctx, "disable", "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{audit.ServerDisabled, audit.Stopped, audit.Resumed, audit.ConfigReload}
	events := auditEvents(t, trail, "the control actions in the trail", hasEvents(want...))
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid := strconv.Itoa(os.Getuid())
	for _, name := range want {
		for _, e := range find(events, name) {
			if a := e.Actor; a.Via != audit.ViaControl || a.UID != uid || a.User != me.Username || a.PID != os.Getpid() {
				t.Errorf("%s: actor %+v, want uid %s (%s), pid %d, via control", name, a, uid, me.Username, os.Getpid())
			}
		}
	}
}
