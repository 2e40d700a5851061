//go:build unix && !linux

package upstream

import "syscall"

// childProcAttr starts a stdio server in its own process group. There is
// no parent-death signal outside Linux: a server outlives a switchboard
// that is killed outright (SIGKILL); every other exit stops it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
