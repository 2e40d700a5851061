//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package cli

import "golang.org/x/sys/unix"

// fread is FREAD of <sys/fcntl.h>: TIOCFLUSH with it discards the input
// queue only.
const fread = 1

// flushInput discards what was typed on the terminal fd and not read yet
// (a half-typed answer to a question given up on), so that neither the
// next question nor the shell gets it.
func flushInput(fd int) error {
	return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread)
}
