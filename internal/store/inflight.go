package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// The in-flight file accounts for the calls a process was running when it
// died. A call's record is written when the call ends; a call running when
// the process is killed (SIGKILL, the OOM killer, a crash, a power loss)
// would otherwise leave no trace, although its server may have acted on
// it. So a Recorder with a journal appends a line to a file of its own in
// the journal directory (inflightExt, locked while its process lives) when
// a call starts: one write(2) of a few hundred bytes. Nothing is written
// when the call ends (its record, in the journal, says so); the file is
// rewritten with only the calls still running once it holds maxLines
// lines — fewer than the history keeps, so that the record of every call
// it names is still in the store unless the call was lost. The next Recorder on the database, once it has
// written the journal of the dead process, writes for each call in its
// in-flight file whose record the store does not hold a record with
// status error saying that the process stopped while the call ran.

// inflightExt ends the name of an in-flight file (not journalExt: journal
// recovery leaves it alone).
const inflightExt = ".inflight"

// inflightMaxLines is the most lines the file holds before it is
// rewritten with only the calls still running (about 1.5 MiB), when the
// history keeps more than twice as many calls.
const inflightMaxLines = 4096

// inflightLines is the lines an in-flight file may hold for a history
// that keeps keep calls (negative: all): at most half of them, so that a
// call it names whose record is not in the store was lost, not pruned.
func inflightLines(keep int) int {
	if keep < 0 {
		return inflightMaxLines
	}
	return max(16, min(inflightMaxLines, keep/2))
}

// InterruptedMessage starts the error message of a call whose process
// stopped while it ran.
const InterruptedMessage = "the Switchboard process that ran the call stopped before the call ended (killed, crashed, or the machine went down)"

// inflightLine is one line of an in-flight file: a call that started,
// with what is known of it then, and the process that ran it.
type inflightLine struct {
	Begin *CallRecord `json:"begin"`
	PID   int         `json:"pid"`
}

// inflight is a Recorder's in-flight file.
type inflight struct {
	dir      string
	maxLines int

	mu     sync.Mutex
	f      *os.File
	path   string // f's name once renamed (f.Name() is its first)
	lines  int
	open   map[string][]byte // the begin lines of the calls running
	broken bool              // a write failed: nothing more is written
}

// openInflight creates and locks a new in-flight file in dir, rewritten
// once it holds maxLines lines.
func openInflight(dir string, maxLines int) (*inflight, error) {
	in := &inflight{dir: dir, maxLines: maxLines, open: map[string][]byte{}}
	f, path, err := in.newFile()
	if err != nil {
		return nil, err
	}
	in.f, in.path = f, path
	return in, nil
}

// newFile creates, locks and names a new in-flight file: locked before it
// has its final name, so that recovery never takes a live one.
func (in *inflight) newFile() (*os.File, string, error) {
	f, err := os.CreateTemp(in.dir, "calls-*"+journalTmpExt)
	if err != nil {
		return nil, "", fmt.Errorf("creating the file of calls in flight: %w", err)
	}
	if ok, err := tryLock(f); err != nil || !ok {
		f.Close()
		os.Remove(f.Name())
		if err == nil {
			err = errors.New("another process holds its lock")
		}
		return nil, "", fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	path := strings.TrimSuffix(f.Name(), journalTmpExt) + inflightExt
	if err := os.Rename(f.Name(), path); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", fmt.Errorf("naming the file of calls in flight: %w", err)
	}
	return f, path, nil
}

// begin notes that the call rec describes has started; end, once its
// record is committed, forgets it.
func (in *inflight) begin(rec *CallRecord) (end func()) {
	b, err := json.Marshal(inflightLine{Begin: rec, PID: os.Getpid()})
	if err != nil {
		return func() {}
	}
	b = append(b, '\n')
	id := rec.ID
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.broken || in.f == nil {
		return func() {}
	}
	if !in.write(b) {
		return func() {}
	}
	in.open[id] = b
	return func() { in.end(id) }
}

func (in *inflight) end(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.open, id)
	if !in.broken && in.f != nil && in.lines >= in.maxLines {
		in.compact()
	}
}

// write appends b; in.mu is held. A failed write leaves the file broken:
// the calls it would have accounted for are then not (as before there was
// such a file), which is logged by nobody but costs nothing else.
func (in *inflight) write(b []byte) bool {
	_, err := in.f.Write(b)
	in.lines++
	if err != nil {
		in.broken = true
		return false
	}
	return true
}

// compact replaces the file by one holding only the calls still running;
// in.mu is held. The old file goes once the new one has its name, so that
// a crash in between leaves both, which recovery reads alike.
func (in *inflight) compact() {
	f, path, err := in.newFile()
	if err != nil {
		return // keep appending to the old one
	}
	for _, b := range in.open {
		if _, err := f.Write(b); err != nil {
			os.Remove(path)
			f.Close()
			return
		}
	}
	old, oldPath := in.f, in.path
	in.f, in.path, in.lines = f, path, len(in.open)
	os.Remove(oldPath)
	old.Close()
}

// close removes the file: the calls still running when the Recorder stops
// are not the ones a crash would lose.
func (in *inflight) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.f == nil {
		return
	}
	os.Remove(in.path)
	in.f.Close()
	in.f = nil
}

// recoverInflight writes, for every call in the in-flight files of dead
// processes in dir that the store does not hold, a record saying that its process stopped while it ran, with
// write; it deletes each file once done. It reports how many it wrote.
func recoverInflight(ctx context.Context, dir string, s Store, write func(context.Context, []CallRecord) error) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", dir, err)
	}
	total := 0
	var errs []error
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), inflightExt) {
			continue
		}
		n, err := recoverInflightFile(ctx, filepath.Join(dir, e.Name()), s, write)
		total += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

func recoverInflightFile(ctx context.Context, path string, s Store, write func(context.Context, []CallRecord) error) (int, error) {
	f, err := openDeadFile(path) // journal.go
	if f == nil {
		return 0, err
	}
	defer f.Close()
	begun, order, err := readInflight(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	var recs []CallRecord
	for _, id := range order {
		l := begun[id]
		if _, err := s.Call(ctx, id); err == nil {
			continue // its record got through
		} else if fault.KindOf(err) != fault.NotFound {
			return 0, fmt.Errorf("looking up call %s of %s: %w", id, path, err)
		}
		rec := *l.Begin
		if string(rec.Args) == "null" {
			rec.Args = nil // a nil RawMessage is written as null
		}
		// Only what was known when it started: nothing of its end.
		rec.FinishedAt, rec.Duration, rec.Retries = time.Time{}, 0, 0
		rec.ResultBytes, rec.Truncated, rec.Partial = 0, false, false
		rec.URLElicitations, rec.InputRounds = 0, 0
		rec.Status, rec.ErrorKind = "error", string(fault.Internal)
		rec.ErrorMessage = fmt.Sprintf("%s: pid %d; the server may have run it", InterruptedMessage, l.PID)
		recs = append(recs, rec)
	}
	if len(recs) > 0 {
		if err := write(ctx, recs); err != nil {
			return 0, fmt.Errorf("recording the calls %s says were running (kept for the next start): %w", path, err)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return len(recs), fmt.Errorf("deleting %s: %w", path, err)
	}
	return len(recs), nil
}

// readInflight returns the begin lines of an in-flight file by id, and
// the ids in the order they began. A line that does not decode (cut short)
// is skipped.
func readInflight(r io.Reader) (map[string]inflightLine, []string, error) {
	begun := map[string]inflightLine{}
	var order []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		var l inflightLine
		if len(line) > 0 && json.Unmarshal(line, &l) == nil {
			if l.Begin != nil && l.Begin.ID != "" && check(l.Begin) == nil {
				if _, dup := begun[l.Begin.ID]; !dup {
					order = append(order, l.Begin.ID)
				}
				begun[l.Begin.ID] = l
			}
		}
		if err == io.EOF {
			return begun, order, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}
