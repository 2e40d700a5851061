//go:build unix && !linux

package procgroup

import "syscall"

// Attr starts a child in its own process group. There is no parent-death
// signal outside Linux: a child outlives a switchboard that is killed
// outright (SIGKILL), whatever dieWithParent says; every other exit stops it.
func Attr(dieWithParent bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
