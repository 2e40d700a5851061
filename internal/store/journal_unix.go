//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// journalSupported reports whether this platform can lock journal
// segments.
const journalSupported = true

// tryLock takes an exclusive lock on f without waiting, reporting false
// when another open file holds it. The lock lasts until f is closed, or
// its process ends however it ends.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
