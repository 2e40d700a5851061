package store

import (
	"context"
	"os"
	"sync/atomic"
	"time"
)

// What a Recorder on a PostgreSQL history keeps of its calls in flight
// (postgres_flight.go says what the database keeps). Begin queues the
// call's start, which Run writes in the next transaction it runs — with
// the records it writes then, or, when none comes within flightDelay, in
// one of its own that does not wait for the WAL flush — so that starts,
// like records, share transactions. A call that ends before its start
// was taken costs nothing: its start is dropped. The row of a call whose
// start was written is deleted in the transaction that writes the call's
// record, or a later one.

// flightDelay is the longest a call's start waits to be written: a call
// killed with its process sooner after it began is not accounted for.
const flightDelay = 10 * time.Millisecond

// DefaultLease is how long a process's lease on a PostgreSQL history
// lasts unless renewed: the longest its calls in flight go unrecorded
// after it is killed. It renews every third of it.
const DefaultLease = 15 * time.Second

// flightCall is a call begun on a PostgreSQL history.
type flightCall struct {
	rec   CallRecord
	state flightState
	ended bool
}

type flightState uint8

const (
	flightPending flightState = iota // its row is not written
	flightWriting                    // Run is writing its row
	flightWritten                    // its row is in the database
)

// endMark is a call whose row goes once the records up to seq (the
// Recorder's accepted count) are written: its own among them.
type endMark struct {
	id  string
	seq uint64
}

// flight is a Recorder's account of its calls in flight on a PostgreSQL
// history. The slices and map are guarded by the Recorder's mu.
type flight struct {
	store flightStore
	self  replica
	lease time.Duration
	// on is set while the process is registered: Begin notes calls.
	on atomic.Bool

	starts []*flightCall          // begun, their rows not yet taken to be written
	begun  map[string]*flightCall // begun and not ended
	ending []endMark              // ended, rows written: in seq order
	rows   atomic.Int64           // starts written, for tests and benchmarks
	sweeps atomic.Int64           // sweeps done, for tests
}

func newFlight(s flightStore, lease time.Duration) *flight {
	host, _ := os.Hostname()
	return &flight{
		store: s,
		self:  replica{id: newID(), host: host, pid: os.Getpid()},
		lease: lease,
		begun: map[string]*flightCall{},
	}
}

// beginFlight notes that the call rec describes has started.
func (r *Recorder) beginFlight(rec *CallRecord) (end func()) {
	fc := &flightCall{rec: *rec}
	id := rec.ID
	r.mu.Lock()
	if r.isDone {
		r.mu.Unlock()
		return func() {}
	}
	r.fl.begun[id] = fc
	r.fl.starts = append(r.fl.starts, fc)
	wake := len(r.fl.starts) == 1 // Run sets its deadline
	r.mu.Unlock()
	if wake {
		r.wake()
	}
	return func() {
		r.mu.Lock()
		r.endFlightLocked(id, r.accepted)
		r.mu.Unlock()
	}
}

// endFlightLocked notes that call id ended, its record (if any) being
// the seq-th accepted; r.mu is held.
func (r *Recorder) endFlightLocked(id string, seq uint64) {
	fc := r.fl.begun[id]
	if fc == nil {
		return
	}
	delete(r.fl.begun, id)
	fc.ended = true
	if fc.state == flightWritten {
		r.fl.ending = append(r.fl.ending, endMark{id: id, seq: seq})
	}
}

// flightWork is what a write of Run's takes of the calls in flight.
type flightWork struct {
	starts []*flightCall
	ended  []string
}

// takeFlightLocked takes the starts to write and the rows to delete once
// the records up to seq are written; r.mu is held.
func (r *Recorder) takeFlightLocked(seq uint64) flightWork {
	var w flightWork
	for _, fc := range r.fl.starts {
		if !fc.ended {
			fc.state = flightWriting
			w.starts = append(w.starts, fc)
		}
	}
	clear(r.fl.starts)
	r.fl.starts = r.fl.starts[:0]
	n := 0
	for n < len(r.fl.ending) && r.fl.ending[n].seq <= seq {
		w.ended = append(w.ended, r.fl.ending[n].id)
		n++
	}
	r.fl.ending = append(r.fl.ending[:0], r.fl.ending[n:]...)
	return w
}

// flightWritten settles w after its write: err nil if it committed.
func (r *Recorder) flightWritten(w flightWork, err error) {
	if len(w.starts) == 0 && len(w.ended) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		// The rows to delete are tried again with the next write; the
		// starts are given up (the calls stay unaccounted for should
		// the process die).
		marks := make([]endMark, 0, len(w.ended)+len(r.fl.ending))
		for _, id := range w.ended {
			marks = append(marks, endMark{id: id})
		}
		r.fl.ending = append(marks, r.fl.ending...)
		for _, fc := range w.starts {
			fc.state = flightPending
		}
		return
	}
	r.fl.rows.Add(int64(len(w.starts)))
	for _, fc := range w.starts {
		fc.state = flightWritten
		if fc.ended {
			r.fl.ending = append(r.fl.ending, endMark{id: fc.rec.ID, seq: r.accepted})
		}
	}
}

// records returns the starts of w as records.
func (w flightWork) records() []CallRecord {
	if len(w.starts) == 0 {
		return nil
	}
	recs := make([]CallRecord, len(w.starts))
	for i, fc := range w.starts {
		recs[i] = fc.rec
	}
	return recs
}

// runLease registers the process with the history and renews its lease
// until ctx is done, taking away the calls of processes whose lease
// expired after each renewal.
func (r *Recorder) runLease(ctx context.Context) {
	fl := r.fl
	every := fl.lease / 3
	registered := false
	var contact time.Time // since when every renewal succeeded; zero after a failure
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		opCtx, cancel := context.WithTimeout(ctx, every)
		renewed := false
		if registered {
			ok, err := fl.store.renewReplica(opCtx, fl.self.id, fl.lease)
			switch {
			case err != nil:
				contact = time.Time{}
				r.log.Warn("renewing this process's lease on the history failed; should it stay unrenewed, other processes record its calls in flight as interrupted",
					logKeyError, err, logKeyLease, fl.lease)
			case !ok:
				r.log.Warn("this process's lease on the history had expired (cut off from the database for longer than the lease): other processes recorded its calls in flight as interrupted, and each record is replaced as its call ends",
					logKeyLease, fl.lease)
				registered = false
				contact = time.Time{}
			default:
				renewed = true
			}
		}
		if !registered {
			if err := fl.store.registerReplica(opCtx, fl.self, fl.lease); err != nil {
				contact = time.Time{}
				r.log.Warn("registering this process with the history failed: its calls in flight are not accounted for should it die", logKeyError, err)
			} else {
				registered, renewed = true, true
				fl.on.Store(true)
			}
		}
		if renewed {
			if contact.IsZero() {
				contact = time.Now()
			}
			r.sweep(opCtx, false, time.Since(contact))
		}
		cancel()
		t.Reset(every)
	}
}

// sweep records the calls in flight of the processes whose lease expired
// while this one had been in contact with the database for longer (and
// its own, when it retires), and logs what it did.
func (r *Recorder) sweep(ctx context.Context, retire bool, contact time.Duration) {
	n, gone, err := r.fl.store.sweepReplicas(ctx, r.fl.self.id, retire, contact)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("recording the calls of processes that stopped failed", logKeyError, err)
		}
		return
	}
	r.fl.sweeps.Add(1)
	if n > 0 {
		r.log.Warn("recorded the calls a stopped process was running when it stopped (status error)",
			logKeyCount, n, logKeyReplicas, gone)
	}
}

// retireFlight ends the process's registration: the calls it still has in
// flight are recorded as interrupted.
func (r *Recorder) retireFlight(ctx context.Context) {
	r.fl.on.Store(false)
	r.sweep(ctx, true, 0)
}
