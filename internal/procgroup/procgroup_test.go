//go:build unix

package procgroup_test

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/procgroup"
)

// startFamily starts a shell that forks a grandchild and prints its pid,
// in a group of its own; it returns the shell and the grandchild's pid.
func startFamily(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `sleep 60 & echo $!; wait`)
	cmd.SysProcAttr = procgroup.Attr(true)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, pid
}

// gone waits until pid no longer exists (or is a zombie of init's).
func gone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists after the group was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestKillStopsTheWholeGroup(t *testing.T) {
	cmd, grandchild := startFamily(t)
	if err := procgroup.Kill(cmd.Process); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if cmd.ProcessState.Success() {
		t.Fatal("the shell exited successfully; want it killed")
	}
	gone(t, grandchild)
}

func TestTerminateSignalsTheWholeGroup(t *testing.T) {
	// Signalling only the shell would leave its sleeping child behind.
	cmd, grandchild := startFamily(t)
	if err := procgroup.Terminate(cmd.Process); err != nil {
		t.Fatal(err)
	}
	gone(t, grandchild)
	_ = procgroup.Kill(cmd.Process)
	_ = cmd.Wait()
}
