//go:build unix

package daemon

import "syscall"

// openFileLimit is the process's limit on open files (RLIMIT_NOFILE, which
// the Go runtime raises to its hard limit at start), 0 if unknown.
func openFileLimit() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
