//go:build !linux

package upstream

import (
	"os/exec"
	"time"
)

// stderrPipe is Linux's reader of a child's stderr (stderr_linux.go);
// elsewhere os/exec copies it into the tail.
type stderrPipe struct{}

func pipeStderr(*exec.Cmd) *stderrPipe { return nil }

func (*stderrPipe) run()                 {}
func (*stderrPipe) abort()               {}
func (*stderrPipe) finish(time.Duration) {}
