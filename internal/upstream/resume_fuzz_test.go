package upstream

import (
	"strings"
	"testing"
	"time"
)

// FuzzEventCursor feeds the lines of arbitrary event streams to the
// cursor as the lean path's stream reader does: it must never panic, the
// last event id it reports must be one the stream carried, never with a
// NUL, and a retry it keeps must come from a retry: line, in range.
func FuzzEventCursor(f *testing.F) {
	f.Add("id: 1\nretry: 2000\ndata: \n\n")
	f.Add("id: a\x00b\n\nid: 7\n")
	f.Add("retry: -5\nretry: 99999999999\nid:x\n\n")
	f.Add("event: close\nretry: 10\n\n")
	f.Fuzz(func(t *testing.T, stream string) {
		var cur eventCursor
		for _, line := range strings.Split(stream, "\n") {
			switch {
			case line == "":
				cur.dispatched()
			case !strings.HasPrefix(line, "data:"):
				cur.field([]byte(line))
			}
		}
		if cur.lastID != "" && !strings.Contains(stream, "id:"+cur.lastID) && !strings.Contains(stream, "id: "+cur.lastID) {
			t.Fatalf("last id %q is not in the stream %q", cur.lastID, stream)
		}
		if strings.IndexByte(cur.lastID, 0) >= 0 {
			t.Fatalf("last id %q holds NUL", cur.lastID)
		}
		if cur.retry != 0 && !strings.Contains(stream, "retry:") {
			t.Fatalf("retry %v from a stream without retry: %q", cur.retry, stream)
		}
		if cur.retry < 0 || cur.retry > time.Duration(1<<31)*time.Millisecond {
			t.Fatalf("retry %v out of range", cur.retry)
		}
	})
}
