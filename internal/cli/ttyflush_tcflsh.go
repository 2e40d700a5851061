//go:build linux || solaris || illumos || aix

package cli

import "golang.org/x/sys/unix"

// flushInput discards what was typed on the terminal fd and not read yet
// (a half-typed answer to a question given up on), so that neither the
// next question nor the shell gets it.
func flushInput(fd int) error {
	return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
}
