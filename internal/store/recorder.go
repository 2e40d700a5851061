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
	// CommitWait bounds how long Commit waits for its record to become
	// durable (5s). A record not durable by then stays queued and is
	// written later; only the caller stops waiting for it.
	CommitWait time.Duration
	// Journal is the directory of the write-ahead journal that makes a
	// Committed record durable before it is in the store; empty means
	// DefaultJournal of the store (beside a SQLite file; none for
	// PostgreSQL). Without a journal, Commit waits for the store's
	// commit.
	Journal string
	// NoJournal turns the journal off.
	NoJournal bool
	// WriteTimeout bounds each attempt of the writer's at the database —
	// a batch, the starts of calls written alone, a prune — (10s): a
	// database that does not answer by then (hung, or the network
	// dropping its packets) counts as unavailable, as one that refuses
	// connections does.
	WriteTimeout time.Duration
	// Lease is how long a PostgreSQL history trusts this process to be
	// alive without hearing from it (DefaultLease): once it has expired,
	// any process on the history records the calls this one was running
	// as interrupted. The process renews it every third of it.
	Lease time.Duration
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
	if o.CommitWait <= 0 {
		o.CommitWait = 5 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
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

// Recorder writes call records to a Store from its own goroutine (Run),
// in batches of one transaction each, and prunes old history.
//
// Record only appends to an in-memory buffer, which Run writes at least
// every FlushInterval. Commit also makes the record durable before it
// returns, so that a caller can answer only once the call is in the
// history: with a journal (a SQLite store) it appends the record to the
// journal, which the next Recorder on the database replays if this
// process dies before the record reaches the store; without one
// (PostgreSQL) it waits for the store's commit — Run writes at once
// whatever is buffered when a Commit waits, and records that arrive while
// a transaction runs go together in the next one (group commit), so that
// many callers share one transaction.
//
// A Recorder never loses a record silently: a record that cannot be kept
// (buffer full, invalid, write failed, recorder stopped) is counted by
// Dropped and logged.
type Recorder struct {
	store Store
	opts  RecorderOptions
	log   *slog.Logger
	kick  chan struct{} // wakes Run; capacity 1

	dropped atomic.Int64          // every record not stored
	failed  atomic.Int64          // of those, records whose write to the store failed
	full    atomic.Int64          // of those, refused for a full buffer or after Run returned
	invalid atomic.Int64          // of those, refused as invalid
	late    atomic.Int64          // Commits that gave up waiting after CommitWait
	jfailed atomic.Int64          // journal appends that failed (the Commit waited for the store)
	jnlErr  atomic.Pointer[error] // the last of those failures, for the log
	// unavailable is set while the store is unavailable (Unavailable).
	unavailable atomic.Pointer[outage]

	// journaling is set while jnl is; Commit encodes its record for the
	// journal before taking mu.
	journaling atomic.Bool
	// infl accounts for the calls running, with a journal (Begin).
	infl atomic.Pointer[inflight]
	// fl accounts for them on a PostgreSQL history; nil on others.
	fl *flight

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
	// waiters are the Flushes and Commits waiting for records to settle,
	// in the order they were added; while there are any, Run writes
	// everything buffered at once.
	waiters []*flushWaiter
	jnl     *journal // nil without one
	started bool
	stopped chan struct{} // closed when Run returns
	isDone  bool          // Run is shutting down: accept nothing more
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
	r := &Recorder{
		store:   s,
		opts:    opts,
		log:     opts.Logger,
		kick:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
	if fs, ok := s.(flightStore); ok {
		r.fl = newFlight(fs, opts.Lease)
	}
	return r
}

// Record queues rec to be written. It never waits for I/O: when the buffer
// is full, or Run has returned, the record is dropped and counted. rec.Args
// must not be modified afterwards. Record is safe for concurrent use.
func (r *Recorder) Record(rec CallRecord) {
	if err := r.checkRecord(&rec); err != nil {
		return
	}
	r.mu.Lock()
	wake, err := r.appendLocked(rec)
	r.mu.Unlock()
	if err == nil && wake {
		r.wake()
	}
}

// Commit queues rec like Record and waits until it is durable — committed
// to the store, which survives the process being killed — so that the
// caller answers only for calls in the history. Many Commits waiting at
// once share one transaction.
//
// Commit waits at most CommitWait, and no longer than ctx: a caller whose
// client is gone need not wait. A record not committed by then stays
// queued and is written later. The error says why rec is not durable
// (yet): it is invalid, the buffer is full, the Recorder has stopped, the
// write failed, or the wait ended. rec.Args must not be modified
// afterwards. Commit is safe for concurrent use.
func (r *Recorder) Commit(ctx context.Context, rec CallRecord) error {
	if err := r.checkRecord(&rec); err != nil {
		return err
	}
	var line []byte
	if r.journaling.Load() {
		line, _ = encodeJournalLine(&rec) // a valid record always encodes
	}
	r.mu.Lock()
	wake, err := r.appendLocked(rec)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	if r.jnl != nil && line != nil {
		jerr := r.jnl.append(r.accepted, line)
		if jerr == nil {
			r.mu.Unlock()
			if wake {
				r.wake()
			}
			return nil
		}
		// Wait for the store instead; logged by Run.
		r.jfailed.Add(1)
		r.jnlErr.Store(&jerr)
	}
	w := &flushWaiter{from: r.accepted - 1, to: r.accepted, done: make(chan struct{})}
	r.waiters = append(r.waiters, w)
	r.mu.Unlock()
	r.wake()

	t := time.NewTimer(r.opts.CommitWait)
	defer t.Stop()
	select {
	case <-w.done:
		return w.err
	case <-r.stopped:
		<-w.done // Run settles everything before it returns
		return w.err
	case <-ctx.Done():
		r.forget(w)
		return fmt.Errorf("call %s: stopped waiting for its record to be written: %w", rec.ID, ctx.Err())
	case <-t.C:
		r.forget(w)
		r.late.Add(1)
		r.wake() // to log it
		return fmt.Errorf("call %s: its record was not written within %s; it stays queued", rec.ID, r.opts.CommitWait)
	}
}

// Begin notes that the call rec describes (its id, source, identity,
// server, tool, origin and start) has started; end, called once its record
// is Committed, notes that it ended. If the process dies in between, the
// call is recorded as an error saying that its process stopped while it
// ran, unless its record got through: with a journal (SQLite) by the next
// Recorder on the database; on PostgreSQL by any process on the history,
// once this one's lease has expired (RecorderOptions.Lease). Before Run
// opened the journal or registered the process with PostgreSQL, and on
// other stores, Begin does nothing. Begin is safe for concurrent use.
func (r *Recorder) Begin(rec CallRecord) (end func()) {
	if rec.ID == "" || rec.StartedAt.IsZero() {
		return func() {}
	}
	if in := r.infl.Load(); in != nil {
		return in.begin(&rec)
	}
	if r.fl != nil && r.fl.on.Load() {
		return r.beginFlight(&rec)
	}
	return func() {}
}

// checkRecord refuses an invalid record, counting it.
func (r *Recorder) checkRecord(rec *CallRecord) error {
	if err := check(rec); err != nil {
		r.invalid.Add(1)
		r.dropped.Add(1)
		r.wake() // to log it
		return fmt.Errorf("recording call %s: %w", rec.ID, err)
	}
	return nil
}

// errRecorderFull is the error of a record refused for a full buffer or a
// stopped Recorder.
var errRecorderFull = errors.New("the call history's buffer is full or its writer has stopped; the record was dropped")

// appendLocked adds rec to the buffer, or counts it dropped when the
// buffer is full or Run is done; wake says Run should look. r.mu is held.
func (r *Recorder) appendLocked(rec CallRecord) (wake bool, err error) {
	if r.isDone || r.accepted-r.settled >= uint64(r.opts.Buffer) {
		r.full.Add(1)
		r.dropped.Add(1)
		return false, fmt.Errorf("recording call %s: %w", rec.ID, errRecorderFull)
	}
	last := len(r.blocks) - 1
	if last < 0 || len(r.blocks[last]) == r.opts.MaxBatch {
		r.blocks = append(r.blocks, r.newBlock())
		last++
	}
	r.blocks[last] = append(r.blocks[last], rec)
	r.accepted++
	r.queued++
	if r.fl != nil && len(r.fl.begun) > 0 {
		r.endFlightLocked(rec.ID, r.accepted) // its start need not be written, or its row goes with it
	}
	return r.queued == 1 || len(r.blocks[last]) == r.opts.MaxBatch, nil
}

// forget removes a waiter that stopped waiting.
func (r *Recorder) forget(w *flushWaiter) {
	r.mu.Lock()
	r.waiters = slices.DeleteFunc(r.waiters, func(x *flushWaiter) bool { return x == w })
	r.mu.Unlock()
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

// WriteFailures reports how many records the store failed to write, after
// retries: the database was down, its disk full, its file over a size
// limit. They are counted in Dropped too, although with a journal the
// records of answered calls stay in it for the next start.
func (r *Recorder) WriteFailures() int64 { return r.failed.Load() }

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
		r.forget(w)
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

	r.openJournal(wctx)
	var leaseDone chan struct{}
	if r.fl != nil {
		leaseDone = make(chan struct{})
		go func() {
			defer close(leaseDone)
			r.runLease(ctx)
		}()
	}

	l := loop{r: r, lastPrune: time.Now(), leaseDone: leaseDone}
	timer := time.NewTimer(time.Hour)
	timer.Stop()           // armed when records are waiting
	var deadline time.Time // when the oldest waiting record must be written
	for {
		l.logDrops(false)
		r.mu.Lock()
		// Someone waiting (a Flush, a Commit) gets everything written
		// now; records that arrive meanwhile go in the next transaction.
		n, flush := r.queued, r.flushReq || (len(r.waiters) > 0 && r.queued > 0)
		starts := r.fl != nil && len(r.fl.starts) > 0
		r.mu.Unlock()
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return l.shutdown(wctx)
		case flush || ((n > 0 || starts) && !deadline.IsZero() && !now.Before(deadline)):
			l.write(wctx, true)
			deadline = time.Time{}
			continue
		case n >= r.opts.MaxBatch:
			l.write(wctx, false)
			continue
		case (n > 0 || starts) && deadline.IsZero():
			// Starts of calls wait less (flightDelay): they go with the
			// next records written if any come by then.
			wait := r.opts.FlushInterval
			if starts {
				wait = min(wait, flightDelay)
			}
			deadline = now.Add(wait)
			timer.Reset(wait)
		case starts && deadline.After(now.Add(flightDelay)):
			deadline = now.Add(flightDelay)
			timer.Reset(flightDelay)
		case n == 0 && !starts:
			deadline = time.Time{}
		}
		select {
		case <-ctx.Done():
		case <-r.kick:
		case <-timer.C:
		}
	}
}

// openJournal opens the journal, if the Recorder has one, and writes to
// the store what dead processes left in it. Without a journal (or when it
// cannot be opened) Commit waits for the store's commit.
func (r *Recorder) openJournal(ctx context.Context) {
	dir := r.opts.Journal
	if dir == "" {
		dir = DefaultJournal(r.store)
	}
	if r.opts.NoJournal || dir == "" {
		return
	}
	j, err := openJournal(dir, r.log)
	if err != nil {
		r.log.Warn("the call history has no journal: answers wait for the database's commit instead", logKeyError, err)
		return
	}
	n, err := j.recover(ctx, r.opts.MaxBatch, r.writeRetrying)
	if n > 0 {
		r.log.Info("wrote the calls a stopped process had journaled but not yet stored", logKeyCount, n, logKeyPath, dir)
	}
	if err != nil {
		r.log.Error("writing journaled calls to the history failed", logKeyError, err)
	}
	// After the journal: a call whose record it held is not one that was
	// lost.
	n, err = recoverInflight(ctx, dir, r.store, r.writeRetrying)
	if n > 0 {
		r.log.Warn("recorded the calls a stopped process was running when it stopped (status error)", logKeyCount, n, logKeyPath, dir)
	}
	if err != nil {
		r.log.Error("recording the calls a stopped process was running failed", logKeyError, err)
	}
	if in, err := openInflight(dir, inflightLines(r.opts.Keep)); err != nil {
		r.log.Warn("calls in flight are not accounted for should this process die", logKeyError, err)
	} else {
		r.infl.Store(in)
	}
	r.mu.Lock()
	if !r.isDone {
		r.jnl = j
		r.journaling.Store(true)
	}
	r.mu.Unlock()
}

// loop is the state of Run's goroutine.
type loop struct {
	r              *Recorder
	sincePrune     int
	lastPrune      time.Time
	loggedFull     int64
	loggedInvalid  int64
	loggedLate     int64
	loggedJournal  int64
	lastFullLog    time.Time
	lastLateLog    time.Time
	lastJournalLog time.Time
	lastFlightLog  time.Time
	// leaseDone is closed when the lease's goroutine (PostgreSQL) has
	// returned; nil without one.
	leaseDone chan struct{}
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
	total := 0
	for _, b := range batches {
		r.queued -= len(b)
		total += len(b)
	}
	var fw flightWork
	if r.fl != nil {
		// The starts go with the first batch, the rows of ended calls
		// with the last, which holds their records.
		fw = r.takeFlightLocked(r.settled + uint64(total))
	}
	r.mu.Unlock()

	if len(batches) == 0 {
		l.writeFlight(ctx, fw)
	}
	var lastErr error
	for i, b := range batches {
		var part flightWork
		if i == 0 {
			part.starts = fw.starts
		}
		if i == len(batches)-1 {
			part.ended = fw.ended
		}
		err := l.writeChunk(ctx, b, part)
		r.flightWritten(part, err)
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

// writeChunk writes one batch, retrying, and counts its records dropped
// when that fails. With a journal the records Commit journaled stay in
// it (settle keeps their segments), and the next start writes them: the
// log says so rather than that they are lost.
func (l *loop) writeChunk(ctx context.Context, chunk []CallRecord, fw flightWork) error {
	r := l.r
	if err := r.writeCallsRetrying(ctx, fw, chunk, true); err != nil {
		r.dropped.Add(int64(len(chunk)))
		total := r.failed.Add(int64(len(chunk)))
		r.mu.Lock()
		journal := r.jnl != nil
		r.mu.Unlock()
		if journal {
			r.log.Error("writing call history failed; the records stay in its journal and are written at the next start",
				logKeyCount, len(chunk), logKeyTotal, total, logKeyError, err)
		} else {
			r.log.Error("writing call history failed; records dropped", logKeyCount, len(chunk),
				logKeyTotal, total, logKeyError, err)
		}
		return err
	}
	return nil
}

// writeFlight writes the starts and ends of calls of fw in a transaction
// of their own (no records were due), once: a start that fails leaves its
// call unaccounted for should the process die, a row to delete is tried
// again with the next write.
func (l *loop) writeFlight(ctx context.Context, fw flightWork) {
	r := l.r
	if len(fw.starts) == 0 && len(fw.ended) == 0 {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout) // a hung database holds nothing up
	err := r.fl.store.writeCalls(wctx, r.fl.self.id, fw.records(), nil, fw.ended)
	cancel()
	r.flightWritten(fw, err)
	if err != nil && time.Since(l.lastFlightLog) >= time.Second {
		r.log.Warn("noting the calls in flight in the history failed: should this process die, they are not accounted for",
			logKeyCount, len(fw.starts), logKeyError, err)
		l.lastFlightLog = time.Now()
	}
}

// writeRetrying writes one batch, retrying a failure that may pass after
// retryPauses.
func (r *Recorder) writeRetrying(ctx context.Context, chunk []CallRecord) error {
	return r.writeCallsRetrying(ctx, flightWork{}, chunk, false)
}

// writeCallsRetrying writes one batch, with the starts and ends of calls
// of fw on PostgreSQL, retrying a failure that may pass after
// retryPauses — and, with wait, while the store says it is unavailable
// (a PostgreSQL restart or outage, a full disk: unavailableError), for
// as long as that lasts, unavailablePause apart, until ctx ends
// (ShutdownTimeout after Run's). Meanwhile the records that arrive wait
// in the buffer, and Unavailable says since when the store is. (What Run
// writes before it takes records, from a journal, does not wait: it is
// kept there for the next start.)
func (r *Recorder) writeCallsRetrying(ctx context.Context, fw flightWork, chunk []CallRecord, wait bool) error {
	once := func(ctx context.Context) error { return r.store.RecordCalls(ctx, chunk) }
	if r.fl != nil && (len(fw.starts) > 0 || len(fw.ended) > 0) {
		starts := fw.records()
		once = func(ctx context.Context) error {
			return r.fl.store.writeCalls(ctx, r.fl.self.id, starts, chunk, fw.ended)
		}
	}
	write := func() error {
		actx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout)
		defer cancel()
		err := once(actx)
		if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return unavailableError{fmt.Errorf("the history's database did not answer within %s: %w", r.opts.WriteTimeout, err)}
		}
		return err
	}
	err := write()
	for try := 0; err != nil; try++ {
		down := wait && isUnavailable(err)
		if fault.KindOf(err) == fault.Validation || ctx.Err() != nil || (!down && try >= len(retryPauses)) {
			break
		}
		pause := unavailablePause
		if try < len(retryPauses) {
			pause = retryPauses[try]
		}
		if down {
			r.noteUnavailable(err)
		}
		if try < len(retryPauses) || try%unavailableLogEvery == 0 {
			r.log.Warn("writing call history failed; retrying", logKeyCount, len(chunk), logKeyError, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		if ctx.Err() != nil {
			break
		}
		err = write()
	}
	if err == nil && r.unavailable.Load() != nil {
		since := r.unavailable.Swap(nil).since
		r.log.Info("the call history's database is back: the records that waited for it are written",
			logKeyDown, time.Since(since).Round(time.Millisecond))
	}
	return err
}

// While the store is unavailable a batch is tried again every
// unavailablePause, and the retry logged every unavailableLogEvery tries.
const (
	unavailablePause    = time.Second
	unavailableLogEvery = 30
)

// outage is since when, and why, the store has been unavailable.
type outage struct {
	since time.Time
	err   error
}

// noteUnavailable notes that the store is unavailable, err saying why.
func (r *Recorder) noteUnavailable(err error) {
	o := &outage{since: time.Now(), err: err}
	if old := r.unavailable.Load(); old != nil {
		o.since = old.since
	}
	r.unavailable.Store(o)
}

// Unavailable reports since when the store has been unavailable (a
// PostgreSQL database restarted or unreachable, a SQLite file's disk
// full), the records waiting for
// it meanwhile, and the last error; a zero time while it is not.
func (r *Recorder) Unavailable() (since time.Time, waiting int, err error) {
	o := r.unavailable.Load()
	if o == nil {
		return time.Time{}, 0, nil
	}
	r.mu.Lock()
	waiting = int(r.accepted - r.settled)
	r.mu.Unlock()
	return o.since, waiting, o.err
}

// settle marks the next n accepted records as written (err nil) or given
// up, and releases the Flushes waiting for them.
func (r *Recorder) settle(n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := r.settled
	r.settled += uint64(n)
	if r.jnl != nil {
		r.jnl.settled(r.settled, err != nil, from)
	}
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
	pctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout) // a hung database holds nothing up
	n, err := r.store.Prune(pctx, r.opts.Keep)
	cancel()
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
	if n := r.late.Load(); n != l.loggedLate && (final || time.Since(l.lastLateLog) >= time.Second) {
		r.log.Warn("calls answered before their records were written: the history did not commit within the wait",
			logKeyCount, n-l.loggedLate, logKeyTotal, n, logKeyWait, r.opts.CommitWait)
		l.loggedLate, l.lastLateLog = n, time.Now()
	}
	if n := r.jfailed.Load(); n != l.loggedJournal && (final || time.Since(l.lastJournalLog) >= time.Second) {
		var err error
		if p := r.jnlErr.Load(); p != nil {
			err = *p
		}
		r.log.Warn("appending to the call history's journal failed: those answers waited for the database's commit",
			logKeyCount, n-l.loggedJournal, logKeyTotal, n, logKeyError, err)
		l.loggedJournal, l.lastJournalLog = n, time.Now()
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
	r.mu.Lock()
	if r.jnl != nil {
		if kept := r.jnl.close(r.settled); kept > 0 {
			r.log.Warn("calls kept in the journal for the next start: they could not be written to the history now",
				logKeyCount, kept, logKeyPath, r.jnl.dir)
		}
		r.jnl = nil
		r.journaling.Store(false)
	}
	r.mu.Unlock()
	if in := r.infl.Swap(nil); in != nil {
		in.close()
	}
	if l.leaseDone != nil {
		<-l.leaseDone // it stops with Run's context
		r.retireFlight(ctx)
	}
	close(r.stopped)
	l.logDrops(true)
	if err != nil {
		return fmt.Errorf("writing call history at shutdown: %w", err)
	}
	return nil
}
