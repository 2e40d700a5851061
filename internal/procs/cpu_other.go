//go:build !unix

package procs

import "time"

// cpuTime is not available here; the governor does not run.
func cpuTime() (time.Duration, bool) { return 0, false }
