//go:build !unix

package store

import (
	"errors"
	"os"
)

// journalSupported reports whether this platform can lock journal
// segments. Without locks a Recorder could not tell a live process's
// segment from a dead one's, so it has no journal: Commit waits for the
// store's commit instead.
const journalSupported = false

func tryLock(*os.File) (bool, error) { return false, errors.ErrUnsupported }
