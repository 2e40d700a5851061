package testpg

import "syscall"

// serverProcAttr makes the PostgreSQL server shut down (SIGQUIT) when the
// test process dies.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGQUIT}
}
