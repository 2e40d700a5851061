// Internal on purpose: drives the write-ahead journal (openJournal, append, settle, recover, its segments) directly, as a crash leaves it.

package store

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// journalLines encodes records for a journal, failing the test if one
// does not.
func journalLine(t *testing.T, rec CallRecord) []byte {
	t.Helper()
	b, err := encodeJournalLine(&rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// die ends j as a killed process would: its files closed (which releases
// their locks), nothing deleted.
func die(j *journal) {
	for _, s := range j.segs {
		s.f.Close()
	}
	j.segs = nil
}

// replayed is a write function for recover that keeps what it is given.
type replayed struct {
	mu   sync.Mutex
	recs []CallRecord
}

func (c *replayed) write(_ context.Context, recs []CallRecord) error {
	c.mu.Lock()
	c.recs = append(c.recs, recs...)
	c.mu.Unlock()
	return nil
}

func (c *replayed) ids() string {
	var ids []string
	for _, r := range c.recs {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, ",")
}

// TestJournalEmptiedInPlace: once all of a segment's records are
// committed it is emptied, and the records appended after that are read
// back whole by the next process.
func TestJournalEmptiedInPlace(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := j.append(uint64(i+1), journalLine(t, journalRecord(fmt.Sprintf("old%d", i), i))); err != nil {
			t.Fatal(err)
		}
	}
	j.settled(3, false, 0)
	if len(j.segs) != 1 || j.segs[0].size != 0 {
		t.Fatalf("after settling everything: %d segments, want the one taking appends, emptied", len(j.segs))
	}
	for i := range 2 {
		if err := j.append(uint64(i+4), journalLine(t, journalRecord(fmt.Sprintf("new%d", i), i))); err != nil {
			t.Fatal(err)
		}
	}
	die(j)

	next, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var c replayed
	n, err := next.recover(context.Background(), 10, c.write)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || c.ids() != "new0,new1" {
		t.Errorf("recovered %d records (%s), want new0,new1", n, c.ids())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left in the journal after recovery, want none", len(left))
	}
}

// TestJournalLeavesLiveSegments: a Recorder starting beside a live one
// (another process on the same database) leaves its segments alone, and
// writes what it left once it has stopped.
func TestJournalLeavesLiveSegments(t *testing.T) {
	dir := t.TempDir()
	live, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := live.append(1, journalLine(t, journalRecord("live", 0))); err != nil {
		t.Fatal(err)
	}
	other, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var c replayed
	if n, err := other.recover(context.Background(), 10, c.write); n != 0 || err != nil {
		t.Fatalf("recovering beside a live journal: %d records (%s), %v; want none", n, c.ids(), err)
	}
	// It stops without its record written: the segment is kept.
	if kept := live.close(0); kept != 1 {
		t.Fatalf("close kept %d records, want 1", kept)
	}
	if n, err := other.recover(context.Background(), 10, c.write); n != 1 || err != nil || c.ids() != "live" {
		t.Errorf("recovering after it stopped: %d records (%s), %v; want live", n, c.ids(), err)
	}
}

// TestJournalRotates: past journalSegmentBytes appends go to a new
// segment, and a segment is deleted once all of its records are
// committed.
func TestJournalRotates(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer j.close(0)
	line := journalLine(t, journalRecord("r", 0))
	n := uint64(3*journalSegmentBytes/len(line) + 1)
	for seq := uint64(1); seq <= n; seq++ {
		if err := j.append(seq, line); err != nil {
			t.Fatal(err)
		}
	}
	if len(j.segs) != 3 {
		t.Fatalf("%d segments after %d bytes, want 3", len(j.segs), n*uint64(len(line)))
	}
	j.settled(j.segs[1].max, false, 0)
	if left, _ := os.ReadDir(dir); len(j.segs) != 1 || len(left) != 1 {
		t.Errorf("after the first two segments are committed: %d segments, %d files; want 1", len(j.segs), len(left))
	}
}

// journalRecord returns a valid call record started i seconds into a test.
func journalRecord(id string, i int) CallRecord {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return CallRecord{ID: id, Source: "gateway", Server: "files", Tool: "read_file", Status: "success",
		StartedAt: start, FinishedAt: start.Add(time.Millisecond), Duration: time.Millisecond}
}
