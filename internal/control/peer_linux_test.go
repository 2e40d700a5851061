package control_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/audit"
	"github.com/switchboard-mcp/switchboard/internal/control"
)

// TestControlActorIsThePeer: events caused through the control socket
// name the process that connected — its uid, that user's name and its
// pid, as the kernel gives them (SO_PEERCRED) — not the daemon: a stop
// from this process, then a resume from a child process.
func TestControlActorIsThePeer(t *testing.T) {
	f := newFixture(t)
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	aud, err := audit.New(audit.Options{File: trail})
	if err != nil {
		t.Fatal(err)
	}
	sock := control.SocketPath(shortDir(t))
	ln, err := control.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: control.NewHandler(control.Audited(f.local, aud), nil), ConnContext: control.ConnContext}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = hs.Serve(ln) })
	wg.Go(func() { _ = aud.Run(ctx) })
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = hs.Close()
			cancel()
			wg.Wait()
		}
	}
	t.Cleanup(stop)

	c := control.Dial(sock)
	defer c.Close()
	if _, err := c.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), envPeerClient+"="+sock)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("resume from a child process: %v\n%s", err, out)
	}
	stop() // writes what is queued

	var got []audit.Event
	if err := audit.Read(trail, audit.Filter{}, func(e audit.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid := strconv.Itoa(os.Getuid())
	want := []struct {
		event string
		pid   int
	}{{audit.Stopped, os.Getpid()}, {audit.Resumed, child.Process.Pid}}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		a := got[i].Actor
		if got[i].Event != w.event || a.Via != audit.ViaControl || a.UID != uid || a.User != me.Username || a.PID != w.pid {
			t.Errorf("event %d: got %s by %+v, want %s by uid %s (%s) pid %d via control", i, got[i].Event, a, w.event, uid, me.Username, w.pid)
		}
	}
}
