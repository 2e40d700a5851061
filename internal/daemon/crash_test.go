package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpg"
)

// The crash tests kill -9 a real daemon process while many clients call
// through its gateway, restart it on the same store, and check that every
// call whose answer a client received is in the history.

// The crash daemon child: the test binary re-run with envCrashChild set
// serves a daemon on the store named by envCrashEngine and envCrashDB,
// whose one server is the JSON config.Server in envCrashServer, prints
// "ready <url>", and serves until its stdin closes (or it is killed).
const (
	envCrashChild  = "SWITCHBOARD_DAEMON_TEST_CRASH_CHILD"
	envCrashEngine = "SWITCHBOARD_DAEMON_TEST_CRASH_ENGINE" // sqlite or postgres
	envCrashDB     = "SWITCHBOARD_DAEMON_TEST_CRASH_DB"
	envCrashServer = "SWITCHBOARD_DAEMON_TEST_CRASH_SERVER"
)

func TestCrashKeepsAnsweredCallsSQLite(t *testing.T) {
	t.Parallel()
	testCrashKeepsAnsweredCalls(t, "sqlite", filepath.Join(t.TempDir(), "switchboard.db"))
}

func TestCrashKeepsAnsweredCallsPostgres(t *testing.T) {
	t.Parallel()
	dsn := testpg.Database(t, testpg.Shared(t))
	testCrashKeepsAnsweredCalls(t, "postgres", dsn)
}

func testCrashKeepsAnsweredCalls(t *testing.T, engine, db string) {
	srv := okServer(t, "alpha")
	d := startCrashDaemon(t, engine, db, srv)

	// Callers on a few sessions, as several clients would, call until
	// the daemon dies; each keeps the messages of the calls it got an
	// answer for.
	sessions := make([]*mcp.ClientSession, 4)
	for i := range sessions {
		sessions[i] = d.connect(t)
	}
	waitTools(t, sessions[0], "alpha's tools", has("alpha__echo"))
	const callers = 48
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered []string
		flowing  = make(chan struct{}, callers) // one per caller, at its first answer
	)
	for w := range callers {
		cs := sessions[w%len(sessions)]
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				msg := fmt.Sprintf("crash-%02d-%06d", w, n)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"message": msg}})
				if err != nil {
					return // the daemon is gone
				}
				if res.IsError || !strings.Contains(textOf(res), msg) {
					t.Errorf("call %s answered %q", msg, textOf(res))
					return
				}
				mu.Lock()
				answered = append(answered, msg)
				mu.Unlock()
				if n == 0 {
					flowing <- struct{}{}
				}
			}
		})
	}
	// Kill it once calls are flowing: when every caller has had an
	// answer, each is in its next call or about to make it, on every
	// session, and answered calls are being committed behind them.
	timeout := time.After(time.Minute)
	for range callers {
		select {
		case <-flowing:
		case <-timeout:
			d.kill(t)
			wg.Wait()
			t.Fatalf("not every one of %d callers had an answer within a minute", callers)
		}
	}
	d.kill(t)
	wg.Wait()
	cancel()
	t.Logf("killed the daemon after %d answered calls", len(answered))

	// What the store held when the daemon died: the answered calls it
	// lacks were in the journal only.
	st := openCrashStore(t, engine, db)
	missing, _ := missingCalls(t, st, answered)
	t.Logf("%d of the %d answered calls were not yet in the store when the daemon died", len(missing), len(answered))

	// Restarted on the same store, it holds every answered call.
	restarted := startCrashDaemon(t, engine, db, srv)
	defer restarted.stop(t)
	// The restarted daemon replays the journal first: with -race on a
	// loaded machine that can take seconds.
	deadline := time.Now().Add(time.Minute)
	for {
		var recs int
		missing, recs = missingCalls(t, st, answered)
		if len(missing) == 0 {
			t.Logf("the history holds %d echo calls, %d of them answered", recs, len(answered))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d answered calls are not in the history after the restart, e.g. %s",
				len(missing), len(answered), missing[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// missingCalls returns the messages of answered that no echo call in st
// carries, and how many echo calls st holds.
func missingCalls(t *testing.T, st store.Store, answered []string) ([]string, int) {
	t.Helper()
	recs, err := st.Calls(context.Background(), store.CallFilter{Tool: "echo", Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(recs))
	for _, r := range recs {
		var args struct{ Message string }
		if err := json.Unmarshal(r.Args, &args); err == nil {
			have[args.Message] = true
		}
	}
	var missing []string
	for _, msg := range answered {
		if !have[msg] {
			missing = append(missing, msg)
		}
	}
	return missing, len(recs)
}

// crashDaemon is a daemon child process.
type crashDaemon struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	done  chan struct{} // closed once cmd.Wait returns
}

// startCrashDaemon starts a daemon process on the store and waits until it
// listens.
func startCrashDaemon(t *testing.T, engine, db string, srv config.Server) *crashDaemon {
	t.Helper()
	js, err := json.Marshal(srv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashChild+"=1", envCrashEngine+"="+engine, envCrashDB+"="+db, envCrashServer+"="+string(js))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // kill -9 reaches its upstreams too
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &crashDaemon{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- u
			}
		}
		cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	})
	select {
	case d.url = <-ready:
	case <-d.done:
		t.Fatalf("the daemon exited before it was ready: %v", cmd.ProcessState)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon was not ready within 30s")
	}
	return d
}

func (d *crashDaemon) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	r := &running{url: d.url}
	return r.connect(t, "/mcp", nil, nil)
}

// kill sends SIGKILL to the daemon and its process group, and waits for
// it to die.
func (d *crashDaemon) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.done
	if ws, ok := d.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the daemon ended with %v, want killed by SIGKILL", d.cmd.ProcessState)
	}
}

// stop closes the daemon's stdin, which makes it shut down cleanly.
func (d *crashDaemon) stop(t *testing.T) {
	t.Helper()
	d.stdin.Close()
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Error("the daemon did not stop within 30s of its stdin closing")
	}
}

func openCrashStore(t *testing.T, engine, db string) store.Store {
	t.Helper()
	var (
		st  store.Store
		err error
	)
	if engine == "postgres" {
		st, err = store.OpenPostgres(context.Background(), db, store.Options{})
	} else {
		st, err = store.OpenSQLite(context.Background(), db, store.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// runCrashChild is the daemon child's main.
func runCrashChild() int {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute) // a lost child does not serve for ever
	defer cancelTimeout()
	if err := crashChild(ctx, cancel); err != nil {
		fmt.Fprintln(os.Stderr, "crash daemon:", err)
		return 1
	}
	return 0
}

func crashChild(ctx context.Context, cancel context.CancelFunc) error {
	var srv config.Server
	if err := json.Unmarshal([]byte(os.Getenv(envCrashServer)), &srv); err != nil {
		return fmt.Errorf("reading %s: %w", envCrashServer, err)
	}
	db := os.Getenv(envCrashDB)
	var (
		st  store.Store
		err error
	)
	if os.Getenv(envCrashEngine) == "postgres" {
		st, err = store.OpenPostgres(ctx, db, store.Options{})
	} else {
		st, err = store.OpenSQLite(ctx, db, store.Options{})
	}
	if err != nil {
		return err
	}
	defer st.Close()
	dir, err := os.MkdirTemp("", "sbcrash")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := testConfig(srv)
	cfg.History.RecordValues = true // the test finds each call by its message
	d, err := New(Options{Config: cfg, Store: st, StateDir: dir, Version: "test", NoControl: true})
	if err != nil {
		return err
	}
	if err := d.Listen(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	fmt.Printf("ready http://%s\n", d.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return <-done
}

// TestCrashAccountsForCallsInFlight: a call running when the daemon is
// killed leaves a record once the daemon is back — an error saying that
// the process stopped while the call ran — rather than no trace at all.
func TestCrashAccountsForCallsInFlight(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "switchboard.db")
	srv := okServer(t, "alpha")
	d := startCrashDaemon(t, "sqlite", db, srv)
	killMidCall(t, d, nil)
	restarted := startCrashDaemon(t, "sqlite", db, srv)
	defer restarted.stop(t)
	waitInterrupted(t, openCrashStore(t, "sqlite", db), time.Minute)
}

// TestCrashAccountsForCallsInFlightPostgres: two replicas on one
// PostgreSQL history; one is killed while a call runs on it, and the
// other records the call — an error saying its process stopped — once
// the dead one's lease has expired (store.DefaultLease), without a
// restart.
func TestCrashAccountsForCallsInFlightPostgres(t *testing.T) {
	t.Parallel()
	dsn := testpg.Database(t, testpg.Shared(t))
	srv := okServer(t, "alpha")
	a := startCrashDaemon(t, "postgres", dsn, srv)
	b := startCrashDaemon(t, "postgres", dsn, srv)
	defer b.stop(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// A start is written up to 10 ms after the call began (later on a
	// loaded machine), and the call may reach its server sooner.
	killMidCall(t, a, func() bool {
		var n int
		err := conn.QueryRow(context.Background(), "SELECT count(*) FROM calls_in_flight").Scan(&n)
		return err == nil && n == 1
	})
	waitInterrupted(t, openCrashStore(t, "postgres", dsn), store.DefaultLease+time.Minute)
}

// killMidCall kills d while a call of alpha__slow runs on its server,
// and noted holds (when not nil).
func killMidCall(t *testing.T, d *crashDaemon, noted func() bool) {
	t.Helper()
	cs := d.connect(t)
	waitTools(t, cs, "alpha's tools", has("alpha__slow"))
	mark := filepath.Join(t.TempDir(), "started")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha__slow", Arguments: map[string]any{"seconds": 60, "mark": mark}})
	}()
	eventually(t, "the call is running on the server", func() bool { _, err := os.Stat(mark); return err == nil })
	if noted != nil {
		eventually(t, "the call is noted in flight", noted)
	}
	d.kill(t)
	<-done
}

// waitInterrupted waits up to wait for st to hold the one call of
// alpha__slow, recorded as interrupted by its process's death.
func waitInterrupted(t *testing.T, st store.Store, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		recs, err := st.Calls(context.Background(), store.CallFilter{Tool: "slow"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 {
			c := recs[0]
			if c.Status != "error" || c.Source != "gateway" || c.Server != "alpha" || c.Args != nil || !c.FinishedAt.IsZero() || !strings.HasPrefix(c.ErrorMessage, store.InterruptedMessage) {
				t.Errorf("the call in flight: got %+v, want an error of source gateway on alpha saying its process stopped", c)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call in flight when the daemon was killed has %d records after %s, want 1", len(recs), wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
