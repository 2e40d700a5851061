//go:build unix

package cli

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ttyWaitable says that a terminal read can be waited on (poll(2)).
const ttyWaitable = true

// waitReadable returns when fd has something to read (a whole line, on a
// terminal in its usual line mode), or with ctx's error when ctx ends
// first. Nothing is read: a question given up on leaves no read behind
// that would take the next keystrokes.
func waitReadable(ctx context.Context, fd int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// A pipe wakes the poll when ctx ends.
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	defer pw.Close()
	stop := context.AfterFunc(ctx, func() { _, _ = pw.Write([]byte{0}) })
	defer stop()
	wake := int32(pr.Fd())
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: wake, Events: unix.POLLIN}}
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if fds[1].Revents != 0 {
			return ctx.Err()
		}
		if fds[0].Revents != 0 {
			return nil // readable, or hung up: the read says which
		}
	}
}
