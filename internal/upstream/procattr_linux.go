package upstream

import "syscall"

// childProcAttr starts a stdio server in its own process group, killed
// when switchboard dies, however it dies.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
