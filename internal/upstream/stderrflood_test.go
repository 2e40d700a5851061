package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestStderrFlood: a real server floods its stderr (4 MiB of numbered
// lines, one write each), writes one line of 200,000 bytes, then its
// crash cause, and exits before answering. The failure still names the
// cause, and the last lines kept are the newest, whole, in order, the
// long one cut after its first maxLineBytes with a mark of how much.
func TestStderrFlood(t *testing.T) {
	t.Parallel()
	const total, width, long = 4 << 20, 100, 200_000
	srv := testserver.Server(t, "flood", "stderr-flood", fmt.Sprintf("%s=bytes=%d,line=%d,long=%d", testserver.EnvFlood, total, width, long))
	fe := dialFault(t, srv)
	if !strings.Contains(fe.Message, "exited with code 2") || !strings.Contains(fe.Message, testserver.FloodCause) {
		t.Errorf("message: got %q, want the exit and the cause from stderr", fe.Message)
	}
	stderr, _ := fe.Details["stderr"].(string)
	lines := strings.Split(stderr, "\n")
	if len(lines) != 20 {
		t.Fatalf("details.stderr has %d lines, want the last 20:\n%s", len(lines), stderr)
	}
	if got := lines[19]; got != testserver.FloodCause {
		t.Errorf("last line: got %q, want %q", got, testserver.FloodCause)
	}
	wantLong := strings.Repeat("y", maxLineBytes) + fmt.Sprintf(lineCutMark, long-1-maxLineBytes)
	if got := lines[18]; got != wantLong {
		t.Errorf("the long line: got %d bytes ending %q, want its first %d bytes and the mark %q",
			len(got), got[max(0, len(got)-80):], maxLineBytes, fmt.Sprintf(lineCutMark, long-1-maxLineBytes))
	}
	last := (total+width-1)/width - 1 // the number of the last flood line
	for i, got := range lines[:18] {
		if want := testserver.FloodLine(last-17+i, width-1); got != want {
			t.Fatalf("line %d of the last 20: got %q, want %q", i+1, got, want)
		}
	}
}

// dialFault dials srv, which must fail, and returns its error.
func dialFault(t *testing.T, srv config.Server) *fault.Error {
	t.Helper()
	c, err := Dial(context.Background(), srv, DialOptions{})
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded, want a connection error")
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatalf("got %T %v, want a *fault.Error", err, err)
	}
	return fe
}

// TestStderrHeldOpen: a server that leaves a process outside its group
// holding its stderr is still closed (os/exec's WaitDelay, which the
// stderr reader keeps), and what it wrote before is kept.
func TestStderrHeldOpen(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Fatal("this test needs setsid (util-linux) on PATH: install it (apt-get install util-linux)")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	srv := testserver.Server(t, "holder", "ok")
	exe := srv.Command
	srv.Command = "/bin/sh"
	srv.Args = []string{"-c", `echo started holder >&2; setsid sleep 120 </dev/null >/dev/null & echo $! > "$1"; exec "$0"`, exe, pidFile}
	srv.Env["PATH"] = os.Getenv("PATH")
	c := dial(t, srv)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return while a process outside the server's group held its stderr")
	}
	if got := c.Stderr(); !strings.Contains(got, "started holder") {
		t.Errorf("stderr: got %q, want what the server wrote", got)
	}
}
