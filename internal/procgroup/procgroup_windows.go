package procgroup

import (
	"os"
	"syscall"
)

// Attr starts a child in a new process group. Windows has no parent-death
// signal: a child outlives a switchboard that is killed outright, whatever
// dieWithParent says; every other exit stops it.
func Attr(dieWithParent bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Terminate stops p. Windows has no SIGTERM for a process without a
// console, so this is the kill.
func Terminate(p *os.Process) error { return p.Kill() }

// Kill kills p. Only the process itself: Windows does not signal a process
// group as a whole.
func Kill(p *os.Process) error { return p.Kill() }
