package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// RecorderOptions configures a Recorder. Zero fields take the defaults
// shown.
type RecorderOptions struct {
	// MaxBatch is the most records written in one transaction (256). A
	// full batch is written at once.
	MaxBatch int
	// FlushInterval is the longest a record waits in memory before it is
	// written (100ms).
	FlushInterval time.Duration
	// Buffer is the most records held in memory, waiting or being written
	// (10000). Records beyond it are dropped and counted.
	Buffer int
	// Keep is the number of calls background pruning keeps (10000); a
	// negative Keep turns pruning off.
	Keep int
	// PruneEvery prunes after this many records have been written since
	// the last prune (1000) ...
	PruneEvery int
	// PruneInterval ... or once this long has passed since the last prune
	// and something was written (1 minute).
	PruneInterval time.Duration
	// ShutdownTimeout bounds the time Run spends writing what is buffered
	// once its context is done (5s).
	ShutdownTimeout time.Duration
	// Logger receives drops and write failures; nil discards them.
	Logger *slog.Logger
}

func (o RecorderOptions) withDefaults() RecorderOptions {
	if o.MaxBatch <= 0 {
		o.MaxBatch = 256
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 100 * time.Millisecond
	}
	if o.Buffer <= 0 {
		o.Buffer = 10000
	}
	if o.Keep == 0 {
		o.Keep = 10000
	}
	if o.PruneEvery <= 0 {
		o.PruneEvery = 1000
	}
	if o.PruneInterval <= 0 {
		o.PruneInterval = time.Minute
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Write retries: a failed batch is tried again after these pauses before
// its records are given up as dropped. Records are upserted by ID, so a
// retry of a batch that did commit stores nothing twice.
var retryPauses = []time.Duration{50 * time.Millisecond, 200 * time.Millisecond}

// Recorder writes call records to a Store off the caller's path. Record
// only appends to an in-memory buffer; the goroutine running Run writes the
// buffer in batches, one transaction each, and prunes old history.
//
// A Recorder never blocks its callers on I/O and never loses a record
// silently: a record that cannot be kept (buffer full, invalid, write
// failed, recorder stopped) is counted by Dropped and logged.
type Recorder struct {
	store Store
	opts  RecorderOptions
	log   *slog.Logger
	kick  chan struct{} // wakes Run; capacity 1

	dropped atomic.Int64 // every record not stored
	full    atomic.Int64 // of those, refused for a full buffer or after Run returned
	invalid atomic.Int64 // of those, refused as invalid

	mu sync.Mutex
	// The buffer is a queue of blocks of MaxBatch capacity, each one
	// transaction: all but the last are full. Records are never copied
	// or moved once appended, and written blocks are reused.
	blocks   [][]CallRecord
	free     [][]CallRecord // empty blocks to reuse
	queued   int            // records in blocks
	accepted uint64         // records ever accepted
	settled  uint64         // of those, written or given up
	flushReq bool           // a Flush is waiting; write everything
	waiters  []*flushWaiter
	started  bool
	stopped  chan struct{} // closed when Run returns
	isDone   bool          // Run is shutting down: accept nothing more
}

// A flushWaiter is a Flush waiting for records (from, to] to settle.
type flushWaiter struct {
	from, to uint64
	err      error
	done     chan struct{}
}

// NewRecorder returns a Recorder that writes to s. Start it with Run; s
// must stay open until Run has returned.
func NewRecorder(s Store, opts RecorderOptions) *Recorder {
	opts = opts.withDefaults()
	return &Recorder{
		store:   s,
		opts:    opts,
		log:     opts.Logger,
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
}

// Record queues rec to be written. It never waits for I/O: when the buffer
// is full, or Run has returned, the record is dropped and counted. rec.Args
// must not be modified afterwards. Record is safe for concurrent use.
func (r *Recorder) Record(rec CallRecord) {
	if err := check(&rec); err != nil {
		r.invalid.Add(1)
		r.dropped.Add(1)
		r.wake() // to log it
		return
	}
	r.mu.Lock()
	if r.isDone || r.accepted-r.settled >= uint64(r.opts.Buffer) {
		r.mu.Unlock()
		r.full.Add(1)
		r.dropped.Add(1)
		return
	}
	last := len(r.blocks) - 1
	if last < 0 || len(r.blocks[last]) == r.opts.MaxBatch {
		r.blocks = append(r.blocks, r.newBlock())
		last++
	}
	r.blocks[last] = append(r.blocks[last], rec)
	r.accepted++
	r.queued++
	wake := r.queued == 1 || len(r.blocks[last]) == r.opts.MaxBatch
	r.mu.Unlock()
	if wake {
		r.wake()
	}
}

// newBlock returns an empty block; r.mu is held.
func (r *Recorder) newBlock() []CallRecord {
	if n := len(r.free); n > 0 {
		b := r.free[n-1]
		r.free[n-1] = nil
		r.free = r.free[:n-1]
		return b
	}
	return make([]CallRecord, 0, r.opts.MaxBatch)
}

// Dropped reports how many records were not stored: the buffer was full,
// the record was invalid, its write failed, or the Recorder had stopped.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

func (r *Recorder) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Flush waits until every record recorded before the call is written (or
// dropped), and reports an error if some of them could not be written.
// Run must be running, or Flush waits until ctx is done.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	if r.settled >= r.accepted {
		r.mu.Unlock()
		return nil
	}
	w := &flushWaiter{from: r.settled, to: r.accepted, done: make(chan struct{})}
	r.waiters = append(r.waiters, w)
	r.flushReq = true
	r.mu.Unlock()
	r.wake()
	select {
	case <-w.done:
		return w.err
	case <-r.stopped:
		// Run settles everything before it returns, so w is done too.
		<-w.done
		return w.err
	case <-ctx.Done():
		r.mu.Lock()
		r.waiters = slices.DeleteFunc(r.waiters, func(x *flushWaiter) bool { return x == w })
		r.mu.Unlock()
		return ctx.Err()
	}
}

// Run writes recorded calls until ctx is done, then writes what is still
// buffered, taking at most ShutdownTimeout, and returns. It returns nil
// unless records were lost at shutdown. Run must be called once.
func (r *Recorder) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("store: Recorder.Run called more than once")
	}
	r.started = true
	r.mu.Unlock()

	// Writes run on wctx: it outlives ctx by ShutdownTimeout, so that a
	// batch in flight when ctx ends, and what is still buffered, get
	// written; the helper goroutine is Run's own and ends before it.
	wctx, cancelWrites := context.WithCancel(context.WithoutCancel(ctx))
	deadlineDone := make(chan struct{})
	go func() {
		defer close(deadlineDone)
		select {
		case <-ctx.Done():
			t := time.NewTimer(r.opts.ShutdownTimeout)
			defer t.Stop()
			select {
			case <-t.C:
				cancelWrites()
			case <-wctx.Done():
			}
		case <-wctx.Done():
		}
	}()
	defer func() {
		cancelWrites()
		<-deadlineDone
	}()

	l := loop{r: r, lastPrune: time.Now()}
	timer := time.NewTimer(time.Hour)
	timer.Stop()           // armed when records are waiting
	var deadline time.Time // when the oldest waiting record must be written
	for {
		l.logDrops(false)
		r.mu.Lock()
		n, flush := r.queued, r.flushReq
		r.mu.Unlock()
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return l.shutdown(wctx)
		case flush || (n > 0 && !deadline.IsZero() && !now.Before(deadline)):
			l.write(wctx, true)
			deadline = time.Time{}
			continue
		case n >= r.opts.MaxBatch:
			l.write(wctx, false)
			continue
		case n > 0 && deadline.IsZero():
			deadline = now.Add(r.opts.FlushInterval)
			timer.Reset(r.opts.FlushInterval)
		case n == 0:
			deadline = time.Time{}
		}
		select {
		case <-ctx.Done():
		case <-r.kick:
		case <-timer.C:
		}
	}
}

// loop is the state of Run's goroutine.
type loop struct {
	r             *Recorder
	sincePrune    int
	lastPrune     time.Time
	loggedFull    int64
	loggedInvalid int64
	lastFullLog   time.Time
}

// write writes the buffer: everything when all is set, else only full
// batches, leaving a partial one to fill up.
func (l *loop) write(ctx context.Context, all bool) error {
	r := l.r
	r.mu.Lock()
	if all {
		r.flushReq = false
	}
	take := len(r.blocks)
	if !all && take > 0 && len(r.blocks[take-1]) < r.opts.MaxBatch {
		take--
	}
	batches := append([][]CallRecord(nil), r.blocks[:take]...)
	n := copy(r.blocks, r.blocks[take:])
	clear(r.blocks[n:])
	r.blocks = r.blocks[:n]
	for _, b := range batches {
		r.queued -= len(b)
	}
	r.mu.Unlock()

	var lastErr error
	for _, b := range batches {
		err := l.writeChunk(ctx, b)
		if err != nil {
			lastErr = err
		}
		r.settle(len(b), err)
		l.sincePrune += len(b)
		clear(b) // do not pin the records' memory
		r.mu.Lock()
		if len(r.free)*r.opts.MaxBatch < r.opts.Buffer {
			r.free = append(r.free, b[:0])
		}
		r.mu.Unlock()
	}
	l.maybePrune(ctx)
	return lastErr
}

func (l *loop) writeChunk(ctx context.Context, chunk []CallRecord) error {
	r := l.r
	err := r.store.RecordCalls(ctx, chunk)
	for _, pause := range retryPauses {
		if err == nil || fault.KindOf(err) == fault.Validation || ctx.Err() != nil {
			break
		}
		r.log.Warn("writing call history failed; retrying", logKeyCount, len(chunk), logKeyError, err)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			break
		}
		err = r.store.RecordCalls(ctx, chunk)
	}
	if err != nil {
		r.dropped.Add(int64(len(chunk)))
		r.log.Error("writing call history failed; records dropped", logKeyCount, len(chunk),
			logKeyTotal, r.dropped.Load(), logKeyError, err)
		return err
	}
	return nil
}

// settle marks the next n accepted records as written (err nil) or given
// up, and releases the Flushes waiting for them.
func (r *Recorder) settle(n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := r.settled
	r.settled += uint64(n)
	kept := r.waiters[:0]
	for _, w := range r.waiters {
		if err != nil && from < w.to && r.settled > w.from {
			w.err = fmt.Errorf("writing call history: %w", err)
		}
		if r.settled >= w.to {
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	clear(r.waiters[len(kept):])
	r.waiters = kept
}

func (l *loop) maybePrune(ctx context.Context) {
	r := l.r
	if r.opts.Keep < 0 || l.sincePrune == 0 {
		return
	}
	if l.sincePrune < r.opts.PruneEvery && time.Since(l.lastPrune) < r.opts.PruneInterval {
		return
	}
	n, err := r.store.Prune(ctx, r.opts.Keep)
	l.sincePrune, l.lastPrune = 0, time.Now()
	if err != nil {
		r.log.Warn("pruning call history failed", logKeyError, err)
		return
	}
	if n > 0 {
		r.log.Debug("pruned call history", logKeyCount, n)
	}
}

// logDrops logs records refused since the last report; buffer-full
// drops at most once a second unless final. (Write failures are logged
// where they happen.)
func (l *loop) logDrops(final bool) {
	r := l.r
	if n := r.invalid.Load(); n != l.loggedInvalid {
		r.log.Warn("call records dropped", logKeyReason, "invalid", logKeyCount, n-l.loggedInvalid, logKeyTotal, n)
		l.loggedInvalid = n
	}
	n := r.full.Load()
	if n == l.loggedFull || (!final && time.Since(l.lastFullLog) < time.Second) {
		return
	}
	r.log.Warn("call records dropped", logKeyReason, "buffer full", logKeyCount, n-l.loggedFull, logKeyTotal, n)
	l.loggedFull, l.lastFullLog = n, time.Now()
}

// shutdown stops accepting records and writes everything buffered on ctx
// (which ends ShutdownTimeout after Run's context).
func (l *loop) shutdown(ctx context.Context) error {
	r := l.r
	// Accept nothing more: later Records are dropped and counted.
	r.mu.Lock()
	r.isDone = true
	r.mu.Unlock()
	err := l.write(ctx, true)
	close(r.stopped)
	l.logDrops(true)
	if err != nil {
		return fmt.Errorf("writing call history at shutdown: %w", err)
	}
	return nil
}
