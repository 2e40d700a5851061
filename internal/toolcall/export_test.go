package toolcall

import (
	"log/slog"
	"time"
)

// The black-box tests (package toolcall_test) need two knobs that are not options on
// purpose: the retry wait is a product constant, and the logger is swapped after a shared
// fixture has built the engine.

// SetRetryWait sets how long a retry waits for its server to be connected; 0 retries at once.
func (e *Engine) SetRetryWait(d time.Duration) { e.retryWait = d }

// SetLogger replaces the engine's logger.
func (e *Engine) SetLogger(l *slog.Logger) { e.logger = l }
