package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// firstAttemptGrace is added to the longest connect timeout when serve
// --stdio waits for the servers: a child process needs a moment to start
// before its connect timeout begins, and the tool lists of the servers
// that connected must still be fetched.
const firstAttemptGrace = 2 * time.Second

// firstAttemptBound is how long serve --stdio waits, at most, before
// answering its client: the longest connect timeout of an enabled server,
// plus firstAttemptGrace; and how many servers are enabled.
func (d *Daemon) firstAttemptBound() (time.Duration, int) {
	var longest time.Duration
	enabled := 0
	for _, s := range d.config().Servers {
		if !s.Enabled {
			continue
		}
		enabled++
		longest = max(longest, s.ConnectTimeout)
	}
	return longest + firstAttemptGrace, enabled
}

// waitFirstAttempts blocks until every enabled server has connected or
// failed its first attempt, and the lists of those connected are fetched,
// or until firstAttemptBound elapses or ctx is done. serve --stdio calls it
// before it reads the client's initialize: the instructions are sent once,
// then, and many clients list tools only once. What is not there when it
// returns reaches the client later through list_changed.
func (d *Daemon) waitFirstAttempts(ctx context.Context) {
	bound, enabled := d.firstAttemptBound()
	if enabled == 0 {
		return
	}
	start := time.Now()
	d.out.printf("waiting up to %s for %d server(s) to connect before answering the client\n", bound.Round(time.Second), enabled)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := d.pool.WaitSettled(ctx); err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			return // shutting down
		}
		d.logger.Warn("answering the stdio client before every server finished its first attempt", "waited", time.Since(start).Round(time.Millisecond))
	} else {
		d.cat.EnsureFresh(ctx)
	}
	connected := 0
	for _, s := range d.pool.Snapshots() {
		if s.Enabled && s.State == upstream.StateConnected {
			connected++
		}
	}
	d.out.printf("%d server(s) connected after %s; any others join through list_changed\n", connected, time.Since(start).Round(time.Millisecond))
}
