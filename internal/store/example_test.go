package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"
)

// Open takes a SQLite file path (or a postgres:// DSN) and returns the history of tool
// calls: RecordCalls stores a batch in one transaction, Calls reads it back newest first.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, "history.db"), store.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []store.CallRecord{
		{Source: "cli", Server: "github", Tool: "search", Args: json.RawMessage(`{"q":"string"}`),
			Status: "success", StartedAt: start, Duration: 120 * time.Millisecond},
		{Source: "gateway", Server: "github", Tool: "create_issue", Status: "error", ErrorKind: "validation",
			StartedAt: start.Add(time.Second), Duration: 5 * time.Millisecond},
	}
	if err := s.RecordCalls(ctx, recs); err != nil {
		fmt.Println(err)
		return
	}
	calls, err := s.Calls(ctx, store.CallFilter{Server: "github"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range calls {
		fmt.Println(c.StartedAt.Format(time.TimeOnly), c.Source, c.Tool, c.Status, c.Duration, c.ID != "")
	}
	errs, _ := s.Calls(ctx, store.CallFilter{Status: "error"})
	fmt.Println(len(errs), "failed call:", errs[0].Tool, errs[0].ErrorKind)
	// Output:
	// 03:04:06 gateway create_issue error 5ms true
	// 03:04:05 cli search success 120ms true
	// 1 failed call: create_issue validation
}
