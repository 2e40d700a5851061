package procgroup

import "syscall"

// Attr starts a child in its own process group; with dieWithParent it is
// also killed when switchboard dies, however it dies.
func Attr(dieWithParent bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if dieWithParent {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}
