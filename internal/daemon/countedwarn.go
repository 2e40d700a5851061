package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// refusedLogEvery spaces the log lines about refused clients.
const refusedLogEvery = 10 * time.Second

// countedWarn logs a kind of refusal without flooding the log: the first
// at once, the ones after it counted and logged as one line every
// refusedLogEvery while they go on (run), and once more at the end.
type countedWarn struct {
	logger *slog.Logger
	more   string // the message of the counted lines

	mu       sync.Mutex
	lastLog  time.Time
	since    time.Time // the first refusal not logged yet
	unlogged int64     // refusals since the last log line
}

// warn logs msg with args, or counts it when a line was logged less than
// refusedLogEvery ago.
func (c *countedWarn) warn(msg string, args ...any) {
	c.mu.Lock()
	now := time.Now()
	if now.Sub(c.lastLog) < refusedLogEvery {
		if c.unlogged == 0 {
			c.since = now
		}
		c.unlogged++
		c.mu.Unlock()
		return
	}
	c.lastLog = now
	c.mu.Unlock()
	c.logger.Warn(msg, args...)
}

// run logs the count of refusals not logged yet every refusedLogEvery
// until ctx ends, and then once more.
func (c *countedWarn) run(ctx context.Context) {
	t := time.NewTicker(refusedLogEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.flush()
		case <-ctx.Done():
			c.flush()
			return
		}
	}
}

func (c *countedWarn) flush() {
	c.mu.Lock()
	count, since := c.unlogged, c.since
	c.unlogged = 0
	if count > 0 {
		c.lastLog = time.Now()
	}
	c.mu.Unlock()
	if count > 0 {
		c.logger.Warn(c.more, "refused", count, "during", time.Since(since).Round(time.Millisecond).String())
	}
}
