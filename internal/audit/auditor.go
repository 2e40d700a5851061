package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Stdout is the file name that sends the trail to standard output.
const Stdout = "-"

// DefaultQueue bounds the events waiting to be written.
const DefaultQueue = 4096

// Options configures an Auditor.
type Options struct {
	// File is the audit file's path, or Stdout ("-").
	File string
	// Stdout receives the trail when File is "-"; nil means os.Stdout.
	Stdout io.Writer
	// MaxSize is the size in bytes past which the file is rotated; 0
	// never rotates.
	MaxSize int64
	// MaxBackups is how many rotated files are kept; 0 keeps them all
	// (unless MaxAge removes them).
	MaxBackups int
	// MaxAge removes rotated files older than this; 0 keeps them.
	MaxAge time.Duration
	// Compress gzips rotated files.
	Compress bool
	// Queue bounds the events waiting to be written (DefaultQueue when
	// 0); past it an event is dropped, counted and logged.
	Queue int
	// Redact cleans an event's reason of secrets; nil leaves it.
	Redact func(string) string
	// Logger receives an error for every event that could not be written;
	// nil discards.
	Logger *slog.Logger
	// OnFailure is called (on the writer's goroutine, or the recording
	// one for a dropped event) with each event that could not be written
	// and why: the daemon counts it in a metric and, with
	// audit.required, sets the stop switch.
	OnFailure func(e Event, err error)
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// ErrQueueFull is the failure of an event dropped because the writer is
// behind by Options.Queue events.
var ErrQueueFull = errors.New("the audit writer is behind: the event queue is full")

// Auditor writes events to the audit trail. Record never blocks on the
// file: events wait in a bounded queue for Run, which writes them until
// its context is done, then writes what is queued and closes the file.
// Methods on a nil *Auditor do nothing: that is the audit trail off.
type Auditor struct {
	opts     Options
	instance Instance
	logger   *slog.Logger
	now      func() time.Time

	w    io.Writer
	rot  *rotator // nil for stdout
	wake chan struct{}

	mu     sync.Mutex
	queue  []Event
	closed bool

	written, failed atomic.Int64
}

// New opens the audit file (creating it and its directory), so that a
// bad path is reported at once; nothing is written until Run.
func New(opts Options) (*Auditor, error) {
	if opts.File == "" {
		return nil, errors.New("audit: no file given: set audit.file to a path, or \"-\" for standard output")
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	a := &Auditor{opts: opts, logger: opts.Logger, now: opts.Now, wake: make(chan struct{}, 1)}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	host, _ := os.Hostname()
	a.instance = Instance{Host: host, PID: os.Getpid()}
	if opts.File == Stdout {
		a.w = opts.Stdout
		if a.w == nil {
			a.w = os.Stdout
		}
	} else {
		a.rot = &rotator{path: opts.File, maxSize: opts.MaxSize, maxBackups: opts.MaxBackups, maxAge: opts.MaxAge, compress: opts.Compress, now: a.now}
		if err := a.rot.open(); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		a.w = a.rot
	}
	return a, nil
}

// File returns the audit file's path ("-" for standard output; "" when a
// is nil).
func (a *Auditor) File() string {
	if a == nil {
		return ""
	}
	return a.opts.File
}

// Record queues e for writing, filling its time and instance and
// redacting its reason. It never waits for the file. An event recorded
// once Run has returned is dropped and counted as failed.
func (a *Auditor) Record(e Event) {
	if a == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = a.now()
	}
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	if e.Instance == (Instance{}) {
		e.Instance = a.instance
	}
	if e.Reason != "" && a.opts.Redact != nil {
		e.Reason = a.opts.Redact(e.Reason)
	}
	a.mu.Lock()
	switch {
	case a.closed:
		a.mu.Unlock()
		a.fail(e, errors.New("the audit trail is closed (the daemon is shutting down)"))
		return
	case len(a.queue) >= a.opts.Queue:
		a.mu.Unlock()
		a.fail(e, ErrQueueFull)
		return
	}
	a.queue = append(a.queue, e)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Written returns how many events were written.
func (a *Auditor) Written() int64 {
	if a == nil {
		return 0
	}
	return a.written.Load()
}

// Failed returns how many events could not be written.
func (a *Auditor) Failed() int64 {
	if a == nil {
		return 0
	}
	return a.failed.Load()
}

// Run writes queued events until ctx is done, then writes those still
// queued, closes the file and returns nil. Call it once.
func (a *Auditor) Run(ctx context.Context) error {
	if a == nil {
		return nil
	}
	var batch []Event
	flush := func(final bool) {
		a.mu.Lock()
		batch, a.queue = a.queue, batch[:0]
		a.closed = a.closed || final
		a.mu.Unlock()
		for _, e := range batch {
			a.write(e)
		}
		clear(batch)
	}
	for {
		select {
		case <-a.wake:
			flush(false)
		case <-ctx.Done():
			flush(true)
			if a.rot != nil {
				if err := a.rot.Close(); err != nil {
					a.logger.Error("closing the audit file failed", "file", a.opts.File, "err", err)
				}
			}
			return nil
		}
	}
}

// write writes one event as one line.
func (a *Auditor) write(e Event) {
	b, err := json.Marshal(e)
	if err != nil {
		a.fail(e, fmt.Errorf("encoding the event: %w", err))
		return
	}
	if _, err := a.w.Write(append(b, '\n')); err != nil {
		a.fail(e, err)
		return
	}
	a.written.Add(1)
}

// fail counts and reports an event that could not be written.
func (a *Auditor) fail(e Event, err error) {
	a.failed.Add(1)
	a.logger.Error("AUDIT EVENT NOT WRITTEN: the audit trail is missing an event", "audit_event", e.Event, "outcome", string(e.Outcome), "file", a.opts.File, "err", err)
	if a.opts.OnFailure != nil {
		a.opts.OnFailure(e, err)
	}
}

// Append writes events to the audit trail o describes at once, for a
// process that records a few events and exits (a CLI command run without
// a daemon). Each failed event is also reported as Run would.
func Append(o Options, events ...Event) error {
	var first error
	report := o.OnFailure
	o.OnFailure = func(e Event, err error) {
		if first == nil {
			first = err
		}
		if report != nil {
			report(e, err)
		}
	}
	a, err := New(o)
	if err != nil {
		return err
	}
	for _, e := range events {
		a.Record(e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = a.Run(ctx) // writes the queue, then closes
	if first != nil {
		return fmt.Errorf("audit: %d of %d events could not be written to %s: %w", a.Failed(), len(events), o.File, first)
	}
	return nil
}
