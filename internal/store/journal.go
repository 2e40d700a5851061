package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The journal makes a call's record durable before the call is answered,
// for a Recorder whose store is a SQLite file. A transaction per answer
// costs SQLite about 200 µs of CPU (it rewrites a page of the table and of
// each index); appending the record to a file costs one write(2) of a few
// hundred bytes, which survives the process being killed as a commit in
// WAL mode with synchronous=NORMAL does (docs/decisions.md). The Recorder
// still writes the records to the store in batches, and drops them from
// the journal once they are committed.
//
// Each Recorder appends to segment files of its own (journalExt) in the
// journal directory, holding an exclusive lock (flock) on each while its
// process lives. A segment whose lock can be taken belongs to a process
// that stopped without writing all of its records: the next Recorder on
// the database writes them to the store (the upsert by ID makes a record
// that was already committed harmless) and deletes it.

// journalExt ends the name of a segment; a segment being created ends in
// journalTmpExt until it is locked.
const (
	journalExt    = ".log"
	journalTmpExt = ".tmp"
)

// journalSegmentBytes is the size at which a Recorder starts a new
// segment; a segment is deleted once all of its records are committed.
const journalSegmentBytes = 1 << 20

// staleTmpAge is how old a segment still being created must be before
// recovery deletes it: a live process renames it within microseconds.
const staleTmpAge = time.Minute

// DefaultJournal returns the journal directory a Recorder uses by default
// for s: "<database file>-pending" beside a SQLite database, and "" (none)
// for PostgreSQL, whose commit is itself the durable write.
func DefaultJournal(s Store) string {
	if l, ok := s.(*SQLite); ok {
		return l.Path() + "-pending"
	}
	return ""
}

// journal is a Recorder's write-ahead journal. Its methods are called with
// the Recorder's mutex held, except recover and close, which Run calls
// before and after accepting records.
type journal struct {
	dir  string
	log  *slog.Logger
	segs []*segment // oldest first; the last takes appends
}

// segment is one journal file.
type segment struct {
	f    *os.File // open for appending and locked
	path string
	size int64
	// min and max are the sequence numbers (the Recorder's count of
	// accepted records) of its first and last record.
	min, max uint64
	count    int
	// keep marks a segment to keep when the process ends: it holds a
	// record whose write failed, or that was not written before Run
	// returned, so that the next Recorder writes it.
	keep bool
	// broken marks a segment a write failed on: nothing more is
	// appended to it.
	broken bool
}

// openJournal creates the journal directory (mode 0700, like the
// database's).
func openJournal(dir string, log *slog.Logger) (*journal, error) {
	if !journalSupported {
		return nil, errors.New("this platform has no file locks for a journal")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the call history's journal %s: %w", dir, err)
	}
	return &journal{dir: dir, log: log}, nil
}

// encodeJournalLine renders rec as one journal line.
func encodeJournalLine(rec *CallRecord) ([]byte, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// append writes a record's line, seq being its sequence number; the
// record is durable when it returns nil. A failed write leaves the segment
// broken, and the record to the store's commit.
func (j *journal) append(seq uint64, line []byte) error {
	s := j.current()
	if s == nil || s.broken || s.keep || s.size >= journalSegmentBytes {
		var err error
		if s, err = j.newSegment(); err != nil {
			return err
		}
	}
	n, err := s.f.Write(line)
	s.size += int64(n)
	if err != nil {
		// Part of the line may be on disk: recovery skips a line that
		// does not decode, and nothing more goes after it.
		s.broken = true
		return fmt.Errorf("appending to the call history's journal %s: %w", s.path, err)
	}
	if s.count == 0 {
		s.min = seq
	}
	s.max, s.count = seq, s.count+1
	return nil
}

func (j *journal) current() *segment {
	if len(j.segs) == 0 {
		return nil
	}
	return j.segs[len(j.segs)-1]
}

// newSegment creates, locks and names a new segment: locked before it has
// its final name, so that recovery never takes a live one for a dead
// process's.
func (j *journal) newSegment() (*segment, error) {
	f, err := os.CreateTemp(j.dir, "calls-*"+journalTmpExt)
	if err != nil {
		return nil, fmt.Errorf("creating a segment of the call history's journal: %w", err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		os.Remove(f.Name())
		if err == nil {
			err = errors.New("another process holds its lock")
		}
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	path := strings.TrimSuffix(f.Name(), journalTmpExt) + journalExt
	if err := os.Rename(f.Name(), path); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("naming a segment of the call history's journal: %w", err)
	}
	s := &segment{f: f, path: path}
	j.segs = append(j.segs, s)
	return s, nil
}

// settled drops what the store now holds: records up to seq are settled,
// and those in (failedFrom, seq] failed to be written when failed is set.
// A segment all of whose records are committed is deleted, or emptied when
// it is the one taking appends; one holding a failed record is kept for
// the next start.
func (j *journal) settled(seq uint64, failed bool, failedFrom uint64) {
	if failed {
		for _, s := range j.segs {
			if s.count > 0 && s.min <= seq && s.max > failedFrom {
				s.keep = true
			}
		}
	}
	kept := j.segs[:0]
	for i, s := range j.segs {
		last := i == len(j.segs)-1
		switch {
		case s.keep || s.count == 0 || s.max > seq:
			kept = append(kept, s)
		case last && !s.broken:
			// Emptied in place: appends continue at offset 0 (the file
			// is not opened O_APPEND, so its offset must move too, or
			// the next line would follow a hole of zeros).
			err := s.f.Truncate(0)
			if err == nil {
				_, err = s.f.Seek(0, io.SeekStart)
			}
			if err != nil {
				s.broken = true
				j.log.Warn("emptying a segment of the call history's journal failed", logKeyError, err)
			}
			s.size, s.count = 0, 0
			kept = append(kept, s)
		default:
			j.remove(s)
		}
	}
	clear(j.segs[len(kept):])
	j.segs = kept
}

// remove deletes a segment: the name first, so that no other process
// recovers it, then the file and its lock.
func (j *journal) remove(s *segment) {
	if err := os.Remove(s.path); err != nil {
		j.log.Warn("deleting a segment of the call history's journal failed", logKeyError, err)
	}
	s.f.Close()
}

// close ends the journal when Run returns: segments whose records are all
// committed are deleted, the others kept (and their locks released) for
// the next Recorder on the database to write. It reports how many records
// were kept.
func (j *journal) close(settled uint64) int {
	j.settled(settled, false, 0)
	kept := 0
	for _, s := range j.segs {
		if s.count == 0 {
			j.remove(s)
			continue
		}
		kept += s.count
		s.f.Close()
	}
	j.segs = nil
	return kept
}

// recover writes the records of segments no live process holds to the
// store with write (which writes one batch, retrying as the Recorder
// does), batch records at a time, and deletes each segment once all of its
// records are committed. It reports how many records it wrote.
func (j *journal) recover(ctx context.Context, batch int, write func(context.Context, []CallRecord) error) (int, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return 0, fmt.Errorf("reading the call history's journal %s: %w", j.dir, err)
	}
	total := 0
	var errs []error
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(j.dir, name)
		switch {
		case strings.HasSuffix(name, journalExt):
			n, err := j.recoverSegment(ctx, path, batch, write)
			total += n
			if err != nil {
				errs = append(errs, err)
			}
		case strings.HasSuffix(name, journalTmpExt):
			// A segment its process never named holds no record.
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTmpAge {
				_ = os.Remove(path)
			}
		}
	}
	return total, errors.Join(errs...)
}

// openDeadFile opens path, a file of a process's own that it holds
// locked while it lives, and locks it: nil when another process recovered
// it meanwhile (gone) or a live one holds it (or this one), with the error
// when it cannot be opened or locked.
func openDeadFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // recovered by another process meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		return nil, err // a live process's (or our own)
	}
	return f, nil
}

// recoverSegment writes one dead process's segment to the store and
// deletes it; a live one (locked) is left alone.
func (j *journal) recoverSegment(ctx context.Context, path string, batch int, write func(context.Context, []CallRecord) error) (int, error) {
	f, err := openDeadFile(path)
	if f == nil {
		return 0, err
	}
	defer f.Close()
	recs, bad, err := readJournal(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	if bad > 0 {
		j.log.Warn("skipped lines of the call history's journal that do not decode (cut short by a power loss?)",
			logKeyCount, bad, logKeyPath, path)
	}
	n := len(recs)
	for len(recs) > 0 {
		chunk := recs[:min(batch, len(recs))]
		if err := write(ctx, chunk); err != nil {
			return 0, fmt.Errorf("writing the records of %s to the store (kept for the next start): %w", path, err)
		}
		recs = recs[len(chunk):]
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("deleting %s: %w", path, err)
	}
	return n, nil
}

// readJournal decodes a segment's lines, counting those that do not
// decode.
func readJournal(r io.Reader) (recs []CallRecord, bad int, err error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rec CallRecord
			if json.Unmarshal(line, &rec) != nil || check(&rec) != nil {
				bad++
			} else {
				recs = append(recs, rec)
			}
		}
		if err == io.EOF {
			return recs, bad, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}
