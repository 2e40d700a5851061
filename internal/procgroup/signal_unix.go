//go:build unix

package procgroup

import (
	"os"
	"syscall"
)

// Terminate asks the process group that p leads to exit (SIGTERM).
func Terminate(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

// Kill kills the process group that p leads (SIGKILL): the leader and
// anything it left behind.
func Kill(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }
