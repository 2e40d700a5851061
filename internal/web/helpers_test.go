package web_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/daemon"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/testpeer"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.Init()
	code := m.Run()
	if err := chrome.close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	testpeer.StopShared() // sharedEverything's
	os.Exit(code)
}

// running is a daemon serving for the length of a test.
type running struct {
	d     *daemon.Daemon
	url   string
	store store.Store
}

// testConfig returns a configuration of the given servers with quick
// reconnects and no pings, on a free loopback port.
func testConfig(servers ...config.Server) *config.Config {
	cfg := config.Default()
	cfg.Servers = servers
	cfg.Defaults.RequestTimeout = 30 * time.Second
	cfg.Defaults.Health = config.Health{PingInterval: time.Hour, PingTimeout: 5 * time.Second,
		Backoff: []time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}, MaxFailures: 3}
	cfg.Gateway.Listen = "127.0.0.1:0"
	return cfg
}

// startDaemon runs a daemon for cfg until the test ends.
func startDaemon(t *testing.T, cfg *config.Config) *running {
	t.Helper()
	return startDaemonWith(t, daemon.Options{Config: cfg})
}

// startDaemonWith runs a daemon with opts (Store, StateDir and Version
// filled in) until the test ends.
func startDaemonWith(t *testing.T, opts daemon.Options) *running {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "switchboard.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.StateDir, opts.Version = st, dir, "test"
	d, err := daemon.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the daemon did not shut down within 30s")
		}
		st.Close()
	})
	return &running{d: d, url: "http://" + d.Addr(), store: st}
}

// everything is server-everything over stdio (missing: the test fails
// with `make peers`).
func everything(t *testing.T, name string) config.Server {
	t.Helper()
	bin, args := testpeer.EverythingCommand(t)
	return config.Server{
		Name: name, Transport: config.TransportStdio, Command: bin, Args: args,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 60 * time.Second, TerminateOnClose: true,
		Enabled: true, LoadTools: true, LoadPrompts: true, LoadResources: true, MaxRetries: 1,
	}
}

// sharedEverything is server-everything over streamable HTTP as a server
// named name: one node process the package's tests share (each daemon on
// sessions of its own), for tests whose point is what the server offers in
// the console, not its process (a stdio one is a node process per daemon,
// about a second of CPU each). The missing peer fails the test as
// everything does.
func sharedEverything(t *testing.T, name string) config.Server {
	t.Helper()
	url := testpeer.Shared(t, "server-everything (streamable HTTP)", func(tb testing.TB) string {
		return testpeer.StartEverything(tb, "streamableHttp")
	})
	return config.Server{
		Name: name, Transport: config.TransportHTTP, URL: url,
		ConnectTimeout: 30 * time.Second, RequestTimeout: 60 * time.Second, TerminateOnClose: true,
		Enabled: true, LoadTools: true, LoadPrompts: true, LoadResources: true, MaxRetries: 1,
	}
}

// chromePath finds Chromium: $SWITCHBOARD_TEST_CHROME, else chromium on
// PATH. A machine without it fails the test, saying how to install it.
func chromePath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SWITCHBOARD_TEST_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser tests need Chromium, which is not installed; install it: make chromium (apt-get install chromium)")
	return ""
}

// chrome is the one headless Chromium the package's browser tests share:
// starting one per test cost a second or more of CPU each. Every test
// still gets a browser context of its own (its own cookies and storage).
var chrome sharedChrome

// sharedChrome starts Chromium on first use and stops it at the end of the
// run.
type sharedChrome struct {
	mu      sync.Mutex
	ctx     context.Context // the browser's first tab, kept open
	cancel  func()
	dataDir string
}

// get returns the browser's context, starting Chromium if it is not
// running.
func (c *sharedChrome) get(t *testing.T) context.Context {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx != nil {
		return c.ctx
	}
	dataDir, err := os.MkdirTemp("", "sbchrome")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromePath(t)),
		chromedp.UserDataDir(dataDir),
		chromedp.WindowSize(1280, 1000),
		chromedp.DisableGPU,
		chromedp.Flag("no-sandbox", os.Getuid() == 0),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancelTab()
		cancelAlloc()
		os.RemoveAll(dataDir)
		t.Fatalf("starting Chromium: %v", err)
	}
	c.ctx, c.dataDir = ctx, dataDir
	c.cancel = func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		cancelTab()
		cancelAlloc()
	}
	return ctx
}

// close stops Chromium, if it was started, and reports the processes it
// left behind (every one it started must be gone).
func (c *sharedChrome) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		return nil
	}
	c.cancel()
	defer os.RemoveAll(c.dataDir)
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := browserProcesses(c.dataDir)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("Chromium processes still running after the tests: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// browser returns a tab of the shared headless Chromium, in a browser
// context of the test's own, with a viewport of width × height. When the
// test ends the tab and its context are closed.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	ctx, cancelTab := chromedp.NewContext(chrome.get(t), chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height)), chromedp.Navigate("about:blank")); err != nil {
		cancelTab()
		t.Fatalf("opening a tab in Chromium: %v", err)
	}
	stopWatch := watchPages(t, ctx)
	t.Cleanup(func() {
		stopWatch()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_ = chromedp.Cancel(cctx)
		cancel()
		cancelTab()
	})
	return ctx
}

// watchPages records Content-Security-Policy violations and uncaught
// JavaScript exceptions on every page the tab shows; the returned func
// stops watching and fails the test if there were any.
func watchPages(t *testing.T, ctx context.Context) func() {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	logs := chromedp.Events(wctx, log.EntryAdded)
	excs := chromedp.Events(wctx, runtime.ExceptionThrown)
	enable := chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, log.Enable, cdp.Empty{})
		return chromedp.Void{}, err
	})
	if err := chromedp.Do(ctx, enable); err != nil {
		cancel()
		t.Fatalf("enabling the browser log: %v", err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
	)
	note := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for ev, err := range logs {
			if err != nil {
				return
			}
			if ev.Entry != nil && strings.Contains(ev.Entry.Text, "Content Security Policy") {
				note("CSP violation: " + ev.Entry.Text + " at " + ev.Entry.URL)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range excs {
			if err != nil {
				return
			}
			if d := ev.ExceptionDetails; d != nil {
				msg := d.Text
				if d.Exception != nil {
					msg += " " + d.Exception.Description
				}
				note(fmt.Sprintf("uncaught exception: %s at %s:%d", msg, d.URL, d.LineNumber+1))
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("browser: %s", p)
		}
	}
}

// browserProcesses lists the processes using a Chromium data directory.
func browserProcesses(dataDir string) []int {
	return processesWith("--user-data-dir=" + dataDir)
}

// processesWith lists the processes with an argument equal to arg (or
// containing it, when arg starts with "~").
func processesWith(arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			if string(a) == arg || (strings.HasPrefix(arg, "~") && strings.Contains(string(a), arg[1:])) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// shot saves a full-page screenshot in the test's artifact directory.
//
// Only when the screenshot is kept: with -artifacts, or
// SWITCHBOARD_DOCS_SHOTS. Without either the artifact directory is
// removed when the test ends, and the ~50 full-page screenshots (rendered,
// PNG-encoded, then base64-decoded by the race-built test) cost the
// package several seconds of CPU for files nobody sees.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !keepShots() {
		return
	}
	// A page that is still laying out has no size yet: try again briefly.
	var buf []byte
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if buf, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	// SWITCHBOARD_DOCS_SHOTS=DIR also saves the screenshots there, as
	// DIR/NAME.png: docs/web.md's pictures come from such a run.
	if dir := os.Getenv("SWITCHBOARD_DOCS_SHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
			t.Errorf("saving a docs screenshot: %v", err)
		}
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Errorf("saving screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// keepShots reports whether screenshots are kept after the run: the
// test binary's -artifacts flag is set, or SWITCHBOARD_DOCS_SHOTS names a
// directory.
func keepShots() bool {
	if os.Getenv("SWITCHBOARD_DOCS_SHOTS") != "" {
		return true
	}
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true"
}

// do runs browser steps, failing the test (with a screenshot and the
// page's text) when one fails.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	err := chromedp.Do(ctx, steps...)
	// A navigation the test starts is aborted when the page navigates by
	// itself at that moment (a finished call loads its result): the
	// test's navigation is then simply made again.
	for i := 0; i < 3 && err != nil && strings.Contains(err.Error(), "net::ERR_ABORTED"); i++ {
		err = chromedp.Do(ctx, steps...)
	}
	if err != nil {
		fail(t, ctx, what, err)
	}
}

// click clicks the element sel finds, as chromedp.Click does, looking it
// up again when the driver's node went stale between the lookup and the
// click ("Could not find node with given id": a navigation, or the
// driver fetching the document again after one, renumbers the nodes, and
// on a loaded machine that can land between the two). The mouse events
// are sent only once the node's position is known, so a retry never
// clicks twice.
func click[S chromedp.Selectable](sel S) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for i := 0; ; i++ {
			v, err := chromedp.Click(sel)(ctx, tg)
			if err == nil || i == 4 || !staleNode(err) {
				return v, err
			}
		}
	}
}

// staleNode reports whether err is the browser refusing a node id it no
// longer knows.
func staleNode(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Could not find node with given id") || strings.Contains(msg, "No node with given id found")
}

// waitJS waits until a JavaScript condition is true or 30 s pass. The
// page itself checks the condition every 50 ms and answers once it holds
// (or the time is up): one round trip to the browser per wait, not one
// per check, each of which cost the race-built test and Chromium some CPU
// (several hundred per run, more the more loaded the machine). It keeps
// waiting across navigations (a finished call loads its result): the
// page's answer is then lost with its document, and the new page is asked.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		// "" once the condition holds; else why not: "false", or the
		// exception the last check threw.
		why, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`new Promise(function (resolve) {
  var end = Date.now() + %d, why = "false";
  (function check() {
    try { if (%s) { resolve(""); return; } why = "false"; } catch (e) { why = String(e); }
    if (Date.now() >= end) resolve(why); else setTimeout(check, 50);
  })();
})`, left.Milliseconds(), "!!("+expr+")"), chromedp.EvalAwaitPromise))
		switch {
		case err == nil && why == "":
			return
		case err == nil:
			last = fmt.Errorf("still %s after 30s: %s", why, expr)
		default:
			// The document went away mid-wait (a navigation), or the new
			// one is not ready to be asked yet.
			last = err
			time.Sleep(50 * time.Millisecond)
		}
	}
	if last == nil {
		last = fmt.Errorf("still false after 30s: %s", expr)
	}
	fail(t, ctx, what, last)
}

// waitRecorded waits until the daemon's history holds n calls matching f
// with each status of statuses ("" for any): the recorder writes in the
// background, and the store is the only place to see it, a query much
// cheaper than loading a page again and again.
func waitRecorded(t *testing.T, r *running, f store.CallFilter, n int, statuses ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, err := r.store.Calls(context.Background(), f)
		if err != nil {
			t.Fatalf("reading the history: %v", err)
		}
		got := map[string]int{}
		for _, rec := range recs {
			got[rec.Status]++
		}
		ok := len(recs) >= n
		for _, s := range statuses {
			ok = ok && got[s] > 0
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s the history holds %d calls matching %+v by status %v, want %d with %v", len(recs), f, got, n, statuses)
		}
		time.Sleep(20 * time.Millisecond) // the recorder's batches: nothing to wait on
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		fail(t, ctx, "evaluating "+expr, err)
	}
	return v
}

func fail(t *testing.T, ctx context.Context, what string, err error) {
	t.Helper()
	shot(t, ctx, "failure")
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
}

// jsString quotes a Go string for JavaScript.
func jsString(s string) string { return strconv.Quote(s) }

// rowLabel is the JavaScript expression of a server row's state label.
func rowLabel(server string) string {
	return fmt.Sprintf(`(function(){for (const tr of document.querySelectorAll('#servers tbody tr')) if (tr.dataset.server === %s) return tr.querySelector('[data-field="label"]').textContent; return ""})()`, jsString(server))
}
