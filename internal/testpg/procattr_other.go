//go:build unix && !linux

package testpg

import "syscall"

// serverProcAttr has no parent-death signal outside Linux: a test process
// killed outright leaves its PostgreSQL server running until it is
// stopped by hand.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
