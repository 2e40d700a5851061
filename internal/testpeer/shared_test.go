package testpeer

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestShared checks that a shared peer starts once for every test that asks
// for it, outlives the test that started it, fails every asker when its
// start fails, and is gone, process and temporary directory, after
// StopShared. Not parallel: it calls StopShared, which would stop the
// peers of tests running beside it (the sequential tests run before the
// parallel ones start).
func TestShared(t *testing.T) {
	starts := 0
	var dir string
	start := func(tb testing.TB) string {
		starts++
		dir = tb.TempDir()
		p, err := spawnCmd(tb, exec.Command("sleep", "60"), nil)
		if err != nil {
			tb.Fatalf("starting sleep: %v", err)
		}
		return strconv.Itoa(p.cmd.Process.Pid)
	}
	var first string
	t.Run("first", func(t *testing.T) { first = Shared(t, "sleeper", start) })
	second := Shared(t, "sleeper", start)
	if second != first || starts != 1 {
		t.Fatalf("two tests asking: got %q and %q from %d starts, want one start for both", first, second, starts)
	}
	pid, _ := strconv.Atoi(first)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the shared peer is gone once the test that started it ended: kill(%d, 0) = %v", pid, err)
	}

	failing := func(tb testing.TB) string {
		tb.Logf("trying")
		tb.Fatalf("no port today")
		return "never"
	}
	for i := range 2 {
		msg := fatalMessage(t, func(tb testing.TB) { Shared(tb, "failing", failing) })
		if !strings.Contains(msg, "shared failing did not start: no port today") || !strings.Contains(msg, "trying") {
			t.Errorf("asker %d of a peer that failed to start: got Fatalf %q, want its reason and logs", i, msg)
		}
	}

	StopShared()
	deadline := time.Now().Add(10 * time.Second)
	for err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH); err = syscall.Kill(pid, 0) {
		if time.Now().After(deadline) {
			t.Fatalf("after StopShared, kill(%d, 0) = %v, want ESRCH", pid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after StopShared, the peer's temporary directory: %v, want it removed", err)
	}
	if again := Shared(t, "sleeper", start); again == first || starts != 2 {
		t.Errorf("asking after StopShared: got %q after %d starts, want a new peer", again, starts)
	}
	StopShared()
}

// sharedEverything returns the endpoint of the server-everything over HTTP
// mode ("sse" or "streamableHttp") that this package's tests share: each
// opens its own session on it, and what they check is what a client sees
// of the server, not its process (TestStartEverything, about the process,
// starts its own).
func sharedEverything(t *testing.T, mode string) string {
	t.Helper()
	return Shared(t, "server-everything "+mode, func(tb testing.TB) string { return StartEverything(tb, mode) })
}
