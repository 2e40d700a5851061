package store_test

import "syscall"

// childProcAttr makes a crash-test child die with the test process.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
