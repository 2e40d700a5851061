package control

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// StopFlagPath is the stop switch file in a state directory: `switchboard
// stop` writes it (Backend.Stop) and `resume` removes it.
func StopFlagPath(stateDir string) string { return filepath.Join(stateDir, "stopped") }

// stopFlagPoll is how often WatchStopFlag looks at the flag.
const stopFlagPoll = 250 * time.Millisecond

// WatchStopFlag applies the stop switch file to eng — at once, and
// whenever the file appears or goes — until ctx is done, so that
// `switchboard stop` in any process stops this one's calls within a poll.
func WatchStopFlag(ctx context.Context, flag string, eng *toolcall.Engine) {
	apply := func() {
		_, err := os.Stat(flag)
		switch stopped := err == nil; {
		case stopped && !eng.Stopped():
			eng.Stop()
		case !stopped && eng.Stopped():
			eng.Resume()
		}
	}
	apply()
	t := time.NewTicker(stopFlagPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			apply()
		}
	}
}
