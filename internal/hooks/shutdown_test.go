package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/store"

	"github.com/switchboard-mcp/switchboard/internal/hooks"
)

// TestShutdown: ending Run cancels the runs in flight (killing their
// processes), records the queued ones as cancelled, writes every record
// and leaves no goroutine behind.
func TestShutdown(t *testing.T) {
	dir := t.TempDir()
	hold := script(t, dir, "hold.sh", fmt.Sprintf("echo $$ >> %q\nexec sleep 60\n", filepath.Join(dir, "pids")))
	cfg := parseConfig(t, nil, fmt.Sprintf(`hook_settings: {max_concurrent: 2, queue_size: 10}
hooks:
  - {name: hold, on: work.start, actions: [{type: command, command: [%q]}]}
`, hold))
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "h.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := runtime.NumGoroutine()
	eng, err := hooks.New(hooks.Options{Config: cfg, Store: st, Describe: fakeDescribe, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- eng.Run(ctx) }()
	for range 5 {
		if _, err := eng.Emit(context.Background(), "work.start", nil); err != nil {
			t.Fatal(err)
		}
	}
	var pids []int
	waitFor(t, 10*time.Second, "two commands running", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, "pids"))
		pids = nil
		for _, f := range strings.Fields(string(data)) {
			n, _ := strconv.Atoi(f)
			pids = append(pids, n)
		}
		return len(pids) == 2
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d: got %v, want it gone", pid, err)
		}
	}
	runs, err := st.HookRuns(context.Background(), store.HookRunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range runs {
		counts[r.Status]++
	}
	if len(runs) != 5 || counts["cancelled"] != 5 {
		t.Errorf("got %v, want 5 runs, all cancelled (2 in flight, 3 queued)", counts)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("got %d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
