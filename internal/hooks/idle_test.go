package hooks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIdle: Idle returns once every queued hook has run, including the
// hooks of events those hooks fire, and returns early when ctx ends.
func TestIdle(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "second")
	slow := script(t, dir, "slow.sh", fmt.Sprintf("sleep 0.2; touch %q\n", out))
	f := engineOnly(t, fmt.Sprintf(`hooks:
  - {name: first, on: job.start, actions: [{type: event, event: job.next}]}
  - {name: second, on: job.next, actions: [{type: command, command: [%q]}]}
`, slow), nil)
	ctx := context.Background()

	if err := f.eng.Idle(ctx); err != nil {
		t.Fatalf("Idle with nothing queued: %v", err)
	}
	if _, err := f.eng.Emit(ctx, "job.start", nil); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := f.eng.Idle(short); err == nil {
		t.Fatal("Idle returned nil while a hook was still running")
	}
	if err := f.eng.Idle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("Idle returned before the chained hook ran: %v", err)
	}
}
