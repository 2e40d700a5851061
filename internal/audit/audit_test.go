package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/audit"
)

// run runs a until the test ends or the returned stop is called; stop
// returns once Run has written the queue and closed the file.
func run(t *testing.T, a *audit.Auditor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// readAll returns the events of the trail at path.
func readAll(t *testing.T, path string, f audit.Filter) []audit.Event {
	t.Helper()
	var out []audit.Event
	if err := audit.Read(path, f, func(e audit.Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return out
}

func TestLineFields(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.New(audit.Options{File: path, Redact: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[REDACTED]") }})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 21, 0, 0, 123456789, time.FixedZone("CET", 3600))
	a.Record(audit.Event{Time: at, Event: audit.TokenRefused, Outcome: audit.Denied,
		Actor:  audit.Actor{Via: audit.ViaGateway, Remote: "127.0.0.1:5555"},
		Target: audit.Target{View: "default"}, Reason: "the token hunter2 is unknown"})
	run(t, a)()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("line %q: %v", raw, err)
	}
	host, _ := os.Hostname()
	want := map[string]any{
		"time": "2026-11-26T20:00:00.123Z", "event": "auth.token_refused", "outcome": "denied",
		"actor":    map[string]any{"via": "gateway", "remote": "127.0.0.1:5555"},
		"target":   map[string]any{"view": "default"},
		"reason":   "the token [REDACTED] is unknown",
		"instance": map[string]any{"host": host, "pid": float64(os.Getpid())},
	}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("line (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(string(raw), `{"time":`) || !strings.HasSuffix(string(raw), "}\n") || strings.Count(string(raw), "\n") != 1 {
		t.Errorf("got %q, want one line starting with the time", raw)
	}
	if a.Written() != 1 || a.Failed() != 0 {
		t.Errorf("got written %d failed %d, want 1 and 0", a.Written(), a.Failed())
	}
}

func TestNilAuditorIsOff(t *testing.T) {
	t.Parallel()
	var a *audit.Auditor
	a.Record(audit.Event{Event: audit.Stopped})
	if err := a.Run(context.Background()); err != nil || a.Written() != 0 || a.File() != "" {
		t.Errorf("a nil auditor did something: %v %d %q", err, a.Written(), a.File())
	}
}

func TestNewRefusesNoFile(t *testing.T) {
	t.Parallel()
	if _, err := audit.New(audit.Options{}); err == nil || !strings.Contains(err.Error(), "audit.file") {
		t.Errorf("got %v, want an error naming audit.file", err)
	}
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := audit.New(audit.Options{File: filepath.Join(blocker, "audit.jsonl")}); err == nil || !strings.Contains(err.Error(), "audit file") {
		t.Errorf("got %v, want an error about the audit file's directory", err)
	}
}

func TestRotationBySize(t *testing.T) {
	t.Parallel()
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "audit.jsonl")
			clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }
			a, err := audit.New(audit.Options{File: path, MaxSize: 1000, MaxBackups: 3, Compress: compress, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			const n = 60
			for i := range n {
				a.Record(audit.Event{Event: audit.ConfigReload, Outcome: audit.OK, Actor: audit.Actor{User: fmt.Sprint("u", i)}})
			}
			run(t, a)()
			backups, err := audit.Backups(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(backups) != 3 {
				t.Fatalf("got %d backups, want 3 (max_backups)", len(backups))
			}
			for _, b := range append(backups, audit.Backup{Path: path}) {
				st, err := os.Stat(b.Path)
				if err != nil {
					t.Fatal(err)
				}
				if st.Size() > 1000 {
					t.Errorf("%s is %d bytes, over max_size 1000", b.Path, st.Size())
				}
				if compress != strings.HasSuffix(b.Path, ".gz") && b.Path != path {
					t.Errorf("backup %s: compressed is %v, want %v", b.Path, !compress, compress)
				}
			}
			got := readAll(t, path, audit.Filter{})
			if len(got) == 0 || len(got) >= n {
				t.Fatalf("got %d events, want some but not all of %d (older backups removed)", len(got), n)
			}
			// What is left is the newest events, in order.
			for i, e := range got {
				if want := fmt.Sprint("u", n-len(got)+i); e.Actor.User != want {
					t.Fatalf("event %d is %s's, want %s's", i, e.Actor.User, want)
				}
			}
		})
	}
}

func TestMaxAgeRemovesOldBackups(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Hour); return clock } // one writer goroutine calls it after New
	a, err := audit.New(audit.Options{File: path, MaxSize: 300, MaxAge: 90 * time.Minute, Now: now, Queue: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		a.Record(audit.Event{Time: time.Unix(0, 0), Event: audit.Stopped, Outcome: audit.OK})
	}
	run(t, a)()
	backups, _ := audit.Backups(path)
	if len(backups) != 1 {
		t.Errorf("got %d backups, want 1 (the others are older than max_age)", len(backups))
	}
}

func TestFilters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.New(audit.Options{File: path})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	evs := []audit.Event{
		{Time: base, Event: audit.TokenRefused, Outcome: audit.Denied},
		{Time: base.Add(time.Minute), Event: audit.SignIn, Outcome: audit.OK, Actor: audit.Actor{User: "ana"}},
		{Time: base.Add(2 * time.Minute), Event: audit.ServerDisabled, Outcome: audit.OK, Actor: audit.Actor{User: "bo"}},
		{Time: base.Add(3 * time.Minute), Event: audit.ServerEnabled, Outcome: audit.Failed, Actor: audit.Actor{User: "ana"}},
	}
	for _, e := range evs {
		a.Record(e)
	}
	run(t, a)()
	names := func(es []audit.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Event)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    audit.Filter
		want []string
	}{
		{"all", audit.Filter{}, []string{"auth.token_refused", "auth.sign_in", "server.disabled", "server.enabled"}},
		{"since", audit.Filter{Since: base.Add(2 * time.Minute)}, []string{"server.disabled", "server.enabled"}},
		{"event", audit.Filter{Events: []string{"server.enabled"}}, []string{"server.enabled"}},
		{"family", audit.Filter{Events: []string{"auth.*"}}, []string{"auth.token_refused", "auth.sign_in"}},
		{"user", audit.Filter{Users: []string{"ana"}}, []string{"auth.sign_in", "server.enabled"}},
		{"outcome", audit.Filter{Outcomes: []audit.Outcome{audit.OK}}, []string{"auth.sign_in", "server.disabled"}},
		{"all of them", audit.Filter{Users: []string{"ana"}, Outcomes: []audit.Outcome{audit.Failed}, Events: []string{"server."}}, []string{"server.enabled"}},
	} {
		if d := cmp.Diff(tc.want, names(readAll(t, path, tc.f))); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	if err := audit.CheckFilter(audit.Filter{Events: []string{"auth.signin"}}); err == nil || !strings.Contains(err.Error(), "auth.sign_in") {
		t.Errorf("got %v, want an error listing the event names", err)
	}
	if err := audit.CheckFilter(audit.Filter{Outcomes: []audit.Outcome{"refused"}}); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("got %v, want an error listing the outcomes", err)
	}
}

func TestReadReportsABadLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, []byte("{\"time\":\"2026-11-26T12:00:00.000Z\",\"event\":\"engine.stopped\"}\nnot json\n{\"event\":\"unfinished"), 0o600)
	err := audit.Read(path, audit.Filter{}, func(audit.Event) error { return nil })
	var le *audit.LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("got %v, want a LineError on line 2", err)
	}
}

func TestFollowSeesNewLinesAcrossRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.New(audit.Options{File: path, MaxSize: 400})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a)
	a.Record(audit.Event{Event: audit.Stopped, Outcome: audit.OK, Actor: audit.Actor{User: "u0"}})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan audit.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- audit.Follow(ctx, path, audit.Filter{Events: []string{audit.Stopped}}, 10*time.Millisecond, func(e audit.Event) error { got <- e; return nil })
	}()
	want := 0
	next := func() audit.Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case <-time.After(10 * time.Second):
			t.Fatalf("Follow saw no event %d", want)
		}
		return audit.Event{}
	}
	for i := range 8 { // 8 lines of ~200 bytes rotate several times
		if i > 0 {
			a.Record(audit.Event{Event: audit.Resumed, Outcome: audit.OK}) // filtered out
			a.Record(audit.Event{Event: audit.Stopped, Outcome: audit.OK, Actor: audit.Actor{User: fmt.Sprint("u", i)}})
		}
		if e := next(); e.Actor.User != fmt.Sprint("u", i) {
			t.Fatalf("got %s's event, want u%d's", e.Actor.User, i)
		}
		want++
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow: %v", err)
	}
}

func TestConcurrentRecordAndNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.New(audit.Options{File: path, MaxSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	stop := run(t, a)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				a.Record(audit.Event{Event: audit.CallDenied, Outcome: audit.Denied, CallID: fmt.Sprint(g, "-", i)})
			}
		}()
	}
	wg.Wait()
	stop()
	a.Record(audit.Event{Event: audit.CallDenied}) // after Run: dropped, counted
	if a.Written() != 800 || a.Failed() != 1 {
		t.Errorf("got written %d failed %d, want 800 and 1", a.Written(), a.Failed())
	}
	if n := len(readAll(t, path, audit.Filter{})); n != 800 {
		t.Errorf("read %d events, want 800", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

func TestFailedWriteIsReported(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var failures []error
	w := failingWriter{}
	err := audit.Append(audit.Options{File: audit.Stdout, Stdout: w, OnFailure: func(e audit.Event, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	}}, audit.Event{Event: audit.ConfigTrust, Outcome: audit.OK})
	if !errors.Is(err, errDiskFull) {
		t.Errorf("Append: got %v, want the disk-full error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !errors.Is(failures[0], errDiskFull) {
		t.Errorf("got failures %v, want one disk-full error", failures)
	}
}

var errDiskFull = errors.New("no space left on device")

// failingWriter is standard output on a full disk: a file cannot be made
// to fail on demand without privileges the tests do not have.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }
