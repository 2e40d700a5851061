package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// TestHistoryJSONOfACallThatNeverFinished: a call recorded as running
// when its process was killed has finished_at null in history --json,
// not 0001-01-01T00:00:00Z; a finished call keeps its time.
func TestHistoryJSONOfACallThatNeverFinished(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC)
	b, err := json.Marshal(newHistoryRecord(store.CallRecord{ID: "a", StartedAt: started, Status: "error"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"finished_at":null`) {
		t.Errorf("a call that never finished: got %s, want finished_at null", b)
	}
	b, err = json.Marshal(newHistoryRecord(store.CallRecord{ID: "b", StartedAt: started, FinishedAt: started.Add(time.Second)}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"finished_at":"2026-11-28T01:02:04Z"`) {
		t.Errorf("a finished call: got %s, want its finished_at", b)
	}
}
