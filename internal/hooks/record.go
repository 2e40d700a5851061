package hooks

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Recording limits.
const (
	recordBuffer    = 10000 // runs held in memory before new ones are dropped (and counted)
	recordInterval  = 200 * time.Millisecond
	recordKeep      = 10000 // hook runs pruning keeps
	recordPruneEach = 1000  // prune after this many runs written
	recordShutdown  = 5 * time.Second
)

// recorder writes hook runs to the store off the dispatch path.
type recorder struct {
	st     store.Store
	logger *slog.Logger

	flushMu sync.Mutex // one flush at a time
	mu      sync.Mutex
	buf     []store.HookRun
	dropped int64
	written int
	kick    chan struct{}
}

func newRecorder(st store.Store, logger *slog.Logger) *recorder {
	return &recorder{st: st, logger: logger, kick: make(chan struct{}, 1)}
}

// add buffers a run. With no store it keeps nothing.
func (r *recorder) add(run store.HookRun) {
	if r.st == nil {
		return
	}
	r.mu.Lock()
	if len(r.buf) >= recordBuffer {
		r.dropped++
		r.mu.Unlock()
		return
	}
	r.buf = append(r.buf, run)
	full := len(r.buf) >= 256
	r.mu.Unlock()
	if full {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// run writes the buffer every recordInterval until ctx ends, then once
// more.
func (r *recorder) run(ctx context.Context) {
	t := time.NewTicker(recordInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordShutdown)
			_ = r.flush(fctx)
			cancel()
			return
		case <-t.C:
		case <-r.kick:
		}
		_ = r.flush(ctx)
	}
}

// flush writes what is buffered.
func (r *recorder) flush(ctx context.Context) error {
	if r.st == nil {
		return nil
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.buf
	r.buf = nil
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.logger.Warn("hook runs were not recorded: the record buffer was full", "count", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := r.st.RecordHookRuns(ctx, batch); err != nil {
		r.logger.Error("recording hook runs failed", "count", len(batch), logKeyError, err.Error())
		return err
	}
	r.written += len(batch)
	if r.written >= recordPruneEach {
		r.written = 0
		if _, err := r.st.PruneHookRuns(ctx, recordKeep); err != nil {
			r.logger.Warn("pruning hook runs failed", logKeyError, err.Error())
		}
	}
	return nil
}
