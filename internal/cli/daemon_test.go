package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// testDaemon is a control API served on the state directory's socket over
// an in-process session with every configured server, as `switchboard
// serve` serves it.
type testDaemon struct {
	s        *session
	requests atomic.Int64 // requests other than status
	reloads  atomic.Int64
}

// startDaemon starts a test daemon for the configuration file at cfgPath
// in t's state directory (see setenv).
func startDaemon(t *testing.T, cfgPath string) *testDaemon {
	t.Helper()
	return startDaemonIn(t, cfgPath, envOf(t))
}

// startDaemonIn is startDaemon in the environment env.
func startDaemonIn(t *testing.T, cfgPath string, env func(string) (string, bool)) *testDaemon {
	t.Helper()
	a := &app{stdout: io.Discard, stderr: io.Discard, cmd: "serve", configPath: cfgPath, logLevel: "error", env: env, dir: dirOf(t)}
	cfg, err := a.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := a.open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &testDaemon{s: s}
	comps := a.components(s)
	comps.Reload = func(context.Context) (control.ReloadReport, error) {
		d.reloads.Add(1)
		return control.ReloadReport{Source: cfg.Source, Added: []string{"gamma"}, Unchanged: []string{"alpha"}, Blocks: []string{"gateway", "limits"}, Warnings: []string{"gamma is slow to start"}}, nil
	}
	path, err := a.socketPath()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	h := control.NewHandler(control.NewLocal(comps), nil)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/status" {
			d.requests.Add(1)
		}
		h.ServeHTTP(w, r)
	})}
	var wg sync.WaitGroup
	wg.Go(func() { _ = hs.Serve(ln) })
	t.Cleanup(func() {
		_ = hs.Close()
		wg.Wait()
		s.close()
	})
	return d
}

var (
	reLatency  = regexp.MustCompile(`\d+\.\dms`)
	reVolatile = regexp.MustCompile(`"(since|latency_ns|latency_ms|last_connected_at|last_ping_at)": [^,\n]+`)
	reSpaces   = regexp.MustCompile(` +`)
	reLogLine  = regexp.MustCompile(`(?m)^time=.*\n`)
	// The test server lists its "late" tool 300 ms after it starts: the
	// daemon, which has run longer, lists it; a command connecting its own
	// servers does not yet.
	reLateRow   = regexp.MustCompile(`(?m)^\S+ +late +.*\n`)
	reLateJSON  = regexp.MustCompile(`(?m)^  \{\n(?:^    .*\n)*?^    "name": "late",\n(?:^    .*\n)*?^  \},?\n`)
	reToolCount = regexp.MustCompile(`(connected +)\d+|("tools": )\d+|\d+( tools)`)
)

// mask hides what differs between two looks at the same servers: times,
// latencies and the column widths they cause, the late tool and the tool
// counts it changes, and the log lines of servers connected in-process (a
// daemon logs them on its own stderr).
func mask(s string) string {
	s = reLogLine.ReplaceAllString(s, "")
	s = reLateRow.ReplaceAllString(s, "")
	s = reLateJSON.ReplaceAllString(s, "")
	s = reToolCount.ReplaceAllString(s, "${1}${2}N${3}")
	s = reLatency.ReplaceAllString(s, "Xms")
	s = reVolatile.ReplaceAllString(s, `"$1": X`)
	return reSpaces.ReplaceAllString(s, " ")
}

// runBoth runs a command in-process (SWITCHBOARD_NO_DAEMON=1) and then
// against the daemon, and fails unless the daemon served the second run.
func runBoth(t *testing.T, d *testDaemon, args ...string) (local, daemon result) {
	t.Helper()
	return runBothUsing(t, d, true, args...)
}

// runBothUsing is runBoth; unless wantDaemon, the command must fail before
// it needs a backend.
func runBothUsing(t *testing.T, d *testDaemon, wantDaemon bool, args ...string) (local, daemon result) {
	t.Helper()
	setenv(t, envNoDaemon, "1")
	before := d.requests.Load()
	local = runCLI(t, args...)
	if n := d.requests.Load(); n != before {
		t.Fatalf("%v with %s=1: the daemon got %d requests, want none", args, envNoDaemon, n-before)
	}
	setenv(t, envNoDaemon, "")
	daemon = runCLI(t, args...)
	if wantDaemon && d.requests.Load() == before {
		t.Fatalf("%v: the daemon got no request, want the command to use it\nstderr:\n%s", args, daemon.stderr)
	}
	return local, daemon
}

func TestDaemonAndInProcessPrintTheSame(t *testing.T) {
	t.Parallel()
	// alpha and beta are served in this process: every in-process run
	// below connects its servers again, and the point is what the two
	// paths print, not the servers' processes. dead is a stdio server
	// that exits at start, so that the two print a dead child's stderr
	// the same.
	cfg := writeConfigWith(t, map[string]string{"dead": "exit"}, httpServersYAML(t, "alpha", "beta"))
	d := startDaemon(t, cfg)
	tests := []struct {
		name     string
		args     []string
		code     int
		noDaemon bool // fails before it needs a backend
	}{
		{"servers", []string{"servers"}, ExitFailure, false},
		{"servers json", []string{"servers", "--json"}, ExitFailure, false},
		{"tools", []string{"tools"}, ExitFailure, false},
		{"tools json", []string{"tools", "--json"}, ExitFailure, false},
		{"tools of one server", []string{"tools", "alpha"}, ExitOK, false},
		{"tools of one server json", []string{"tools", "beta", "--json"}, ExitOK, false},
		{"tools of an unknown server", []string{"tools", "alpah"}, ExitFailure, true},
		{"tool", []string{"tool", "alpha", "echo"}, ExitOK, false},
		{"call", []string{"call", "alpha", "echo", "message=hello world"}, ExitOK, false},
		{"call json", []string{"call", "alpha", "add", "a=2", "b=3.5", "--json"}, ExitOK, false},
		{"call with progress", []string{"call", "alpha", "progress", "steps=3"}, ExitOK, false},
		{"call image", []string{"call", "alpha", "image", "--json"}, ExitOK, false},
		{"call late tool", []string{"call", "alpha", "late"}, ExitOK, false},
		{"call tool error", []string{"call", "alpha", "fail"}, ExitFailure, false},
		{"call tool error json", []string{"call", "alpha", "fail", "--json"}, ExitFailure, false},
		{"call unknown tool", []string{"call", "alpha", "ecoh"}, ExitFailure, false},
		{"call unknown tool json", []string{"call", "alpha", "ecoh", "--json"}, ExitFailure, false},
		{"call invalid arguments", []string{"call", "alpha", "add", "a=1"}, ExitFailure, false},
		{"call dead server", []string{"call", "dead", "echo"}, ExitFailure, false},
		{"call timeout", []string{"call", "alpha", "slow", "seconds=30", "--timeout", "1s"}, ExitFailure, false},
		{"refresh", []string{"servers", "refresh", "beta"}, ExitOK, false},
		{"prompts", []string{"prompts"}, ExitFailure, false},
		{"prompts of one server json", []string{"prompts", "alpha", "--json"}, ExitOK, false},
		{"prompt", []string{"prompt", "alpha", "greet", "name=Ada"}, ExitOK, false},
		{"prompt json", []string{"prompt", "alpha", "greet", "name=Ada", "--json"}, ExitOK, false},
		{"prompt missing argument", []string{"prompt", "alpha", "greet"}, ExitFailure, false},
		{"prompt unknown", []string{"prompt", "alpha", "gret"}, ExitFailure, false},
		{"resources", []string{"resources"}, ExitFailure, false},
		{"resources of one server json", []string{"resources", "beta", "--json"}, ExitOK, false},
		{"read", []string{"read", "alpha", "test://readme"}, ExitOK, false},
		{"read json", []string{"read", "alpha", "test://readme", "--json"}, ExitOK, false},
		{"read dead server", []string{"read", "dead", "test://readme"}, ExitFailure, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			local, daemon := runBothUsing(t, d, !tt.noDaemon, append(tt.args, "--config", cfg)...)
			wantCode(t, local, tt.code)
			wantCode(t, daemon, tt.code)
			if got, want := mask(daemon.stdout), mask(local.stdout); got != want {
				t.Errorf("stdout: got (daemon)\n%s\nwant (in-process)\n%s", daemon.stdout, local.stdout)
			}
			if got, want := mask(daemon.stderr), mask(local.stderr); got != want {
				t.Errorf("stderr: got (daemon)\n%s\nwant (in-process)\n%s", daemon.stderr, local.stderr)
			}
		})
	}

	// Every call above is recorded twice (in-process and in the daemon);
	// wait for the daemon's recorder before comparing the history.
	deadline := time.Now().Add(10 * time.Second)
	for {
		setenv(t, envNoDaemon, "1")
		r := runCLI(t, "history", "--config", cfg, "--json", "--limit", "1000")
		if n := strings.Count(r.stdout, `"id"`); n >= 24 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, args := range [][]string{
		{"history"}, {"history", "--json"}, {"history", "--status", "error"}, {"history", "--tool", "nope"}, {"history", "--json", "--tool", "nope"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			local, daemon := runBoth(t, d, append(args, "--config", cfg)...)
			wantCode(t, daemon, local.code)
			if daemon.stdout != local.stdout || daemon.stderr != local.stderr {
				t.Errorf("got (daemon)\n%s%s\nwant (in-process)\n%s%s", daemon.stdout, daemon.stderr, local.stdout, local.stderr)
			}
		})
	}
	setenv(t, envNoDaemon, "1")
	r := runCLI(t, "history", "--config", cfg, "--json", "--limit", "1")
	id := regexp.MustCompile(`"id": "([^"]+)"`).FindStringSubmatch(r.stdout)
	if id == nil {
		t.Fatalf("history --json: got %q, want a call", r.stdout)
	}
	for _, args := range [][]string{{"history", "show", id[1][:8]}, {"history", "show", id[1], "--json"}, {"history", "show", "nope"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			local, daemon := runBoth(t, d, append(args, "--config", cfg)...)
			wantCode(t, daemon, local.code)
			if daemon.stdout != local.stdout || daemon.stderr != local.stderr {
				t.Errorf("got (daemon)\n%s%s\nwant (in-process)\n%s%s", daemon.stdout, daemon.stderr, local.stdout, local.stderr)
			}
		})
	}

	t.Run("disable and enable", func(t *testing.T) {
		for _, args := range [][]string{{"servers", "disable", "beta"}, {"servers", "enable", "beta"}, {"servers", "enable", "beta"}} {
			local, daemon := runBoth(t, d, append(args, "--config", cfg)...)
			wantCode(t, local, ExitOK)
			wantCode(t, daemon, ExitOK)
			if daemon.stdout != local.stdout {
				t.Errorf("%v: got (daemon) %q, want (in-process) %q", args, daemon.stdout, local.stdout)
			}
		}
	})
}

func TestDaemonStopAndResume(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	d := startDaemon(t, cfg)
	for _, tt := range []struct {
		args []string
		// stopped sets the switch before each of the two runs: the switch
		// file is shared, and the daemon follows it within a poll, so the
		// in-process run would otherwise change what the daemon's finds.
		stopped bool
	}{{[]string{"stop"}, false}, {[]string{"stop", "--json"}, false}, {[]string{"resume"}, true}, {[]string{"resume"}, false}, {[]string{"resume", "--json"}, false}} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			before := func() {
				if tt.stopped {
					wantCode(t, runCLI(t, "stop"), ExitOK)
				}
			}
			before()
			setenv(t, envNoDaemon, "1")
			local := runCLI(t, tt.args...)
			setenv(t, envNoDaemon, "")
			before()
			n := d.requests.Load()
			daemon := runCLI(t, tt.args...)
			if d.requests.Load() == n {
				t.Fatalf("%v: the daemon got no request, want the command to use it", tt.args)
			}
			wantCode(t, local, ExitOK)
			wantCode(t, daemon, ExitOK)
			if daemon.stdout != local.stdout {
				t.Errorf("got (daemon) %q, want (in-process) %q", daemon.stdout, local.stdout)
			}
		})
	}
	// Through the daemon the switch reaches its engine at once, not at the
	// next poll of the switch file, and a call in flight is cancelled.
	done := make(chan result, 1)
	go func() { done <- runCLI(t, "call", "--config", cfg, "alpha", "slow", "seconds=30") }()
	deadline := time.Now().Add(20 * time.Second)
	for d.s.eng.Stats().InFlight == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started in the daemon")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := runCLI(t, "stop")
	wantCode(t, r, ExitOK)
	if !d.s.eng.Stopped() {
		t.Errorf("after stop through the daemon: the daemon's engine is not stopped")
	}
	select {
	case r := <-done:
		wantCode(t, r, ExitFailure)
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight was not cancelled by stop")
	}
	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x")
	wantCode(t, r, ExitFailure)
	wantCode(t, runCLI(t, "resume"), ExitOK)
	if d.s.eng.Stopped() {
		t.Errorf("after resume through the daemon: the daemon's engine is still stopped")
	}
	r = runCLI(t, "call", "--config", cfg, "alpha", "echo", "message=x")
	wantCode(t, r, ExitOK)
}

func TestDaemonInterruptCancelsTheCall(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	d := startDaemon(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runCLICtx(t, ctx, "call", "--config", cfg, "alpha", "slow", "seconds=30") }()
	deadline := time.Now().Add(20 * time.Second)
	for d.s.eng.Stats().InFlight == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started in the daemon")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case r := <-done:
		wantCode(t, r, ExitInterrupted)
		wantInterruptedCall(t, r, "alpha/slow")
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not return after the interrupt")
	}
	for d.s.eng.Stats().InFlight != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call is still running in the daemon after the interrupt")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDaemonForAnotherConfigIsNotUsed(t *testing.T) {
	t.Parallel()
	other := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "beta"))
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha")) // the same state directory as the daemon's
	d := startDaemon(t, other)
	r := runCLI(t, "tools", "--config", cfg)
	wantCode(t, r, ExitOK)
	if n := d.requests.Load(); n != 0 {
		t.Errorf("tools for another configuration: the daemon got %d requests, want none", n)
	}
	wantContains(t, "tools", r.stdout, "alpha")
	r = runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "reload stderr", r.stderr, "serves "+control.AbsSource(other)+", not "+cfg)
}

func TestReload(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	r := runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitFailure)
	wantContains(t, "reload without a daemon", r.stdout, "configuration OK: "+cfg+", 1 server(s)")
	wantContains(t, "reload without a daemon", r.stderr, "no daemon is running", "hint: start one with 'switchboard serve'")

	d := startDaemon(t, cfg)
	r = runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitOK)
	want := "reloaded " + cfg + ": 1 added, 0 removed, 0 changed, 1 unchanged\n  added: gamma\n  also changed: gateway, limits\n"
	if r.stdout != want {
		t.Errorf("reload: got %q, want %q", r.stdout, want)
	}
	wantContains(t, "reload stderr", r.stderr, "warning: gamma is slow to start")
	r = runCLI(t, "reload", "--config", cfg, "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "reload --json", r.stdout, `"added": [`, `"gamma"`, `"blocks": [`, `"limits"`)
	if n := d.reloads.Load(); n != 2 {
		t.Errorf("reloads: got %d, want 2", n)
	}

	bad := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	if err := appendFile(bad, "nonsense: true\n"); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "reload", "--config", bad)
	wantCode(t, r, ExitFailure)
	wantContains(t, "reload of an invalid file", r.stderr, "nonsense")
}

// appendFile appends text to the file at path.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestReloadNeedsNotTheDaemonsSecrets checks that reload asks the daemon
// to reload its own file, in its own environment: a token variable the
// daemon has but the caller's shell lacks does not stop it, nor servers
// and tools, which ask the daemon too.
func TestReloadNeedsNotTheDaemonsSecrets(t *testing.T) {
	t.Parallel()
	const tokenVar = "SWITCHBOARD_TEST_RELOAD_TOKEN"
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	if err := appendFile(cfg, "gateway:\n  tokens:\n    - name: alice\n      user: alice\n      token_env: "+tokenVar+"\n"); err != nil {
		t.Fatal(err)
	}
	// The daemon's environment has the token; the operator's shell (t's)
	// does not.
	d := startDaemonIn(t, cfg, withVars(envOf(t), map[string]string{tokenVar: "daemon-secret"}))
	r := runCLI(t, "reload", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "reload", r.stdout, "reloaded "+cfg)
	if n := d.reloads.Load(); n != 1 {
		t.Errorf("reloads: got %d, want 1", n)
	}
	// So do the commands that ask the daemon.
	r = runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "alpha")
	r = runCLI(t, "tools", "--config", cfg)
	wantCode(t, r, ExitOK)
	wantContains(t, "tools", r.stdout, "echo")
}

// TestConfigValidateChecksTheFoundFile: config validate without a FILE
// checks the switchboard.yaml it finds, not the configuration a running
// daemon serves (which would say "ok" about a file the person did not
// write, while theirs is broken).
func TestConfigValidateChecksTheFoundFile(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]string{"alpha": "ok"})
	setenv(t, "XDG_CONFIG_HOME", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	dir := t.TempDir()
	chdir(t, dir)
	found := filepath.Join(dir, "switchboard.yaml")
	if err := os.WriteFile(found, []byte("servers:\n  - name: web\n    transport: htp\n    url: http://127.0.0.1:1/mcp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, cfg)

	r := runCLI(t, "config", "validate")
	wantCode(t, r, ExitFailure)
	wantContains(t, "config validate", r.stderr, found+":3:16: servers.web.transport:")
	if strings.Contains(r.stderr, "note: using the running daemon") {
		t.Errorf("config validate followed the daemon:\n%s", r.stderr)
	}
}

// TestNoConfigUsesTheDaemon: without --config, a command answers from the
// daemon running on the state directory whatever it serves, and says
// which configuration that is when it is not the one it would have found
// (here the embedded default); --config still chooses.
func TestNoConfigUsesTheDaemon(t *testing.T) {
	t.Parallel()
	cfg := writeConfigWith(t, map[string]string{}, httpServersYAML(t, "alpha"))
	setenv(t, "XDG_CONFIG_HOME", t.TempDir())
	setenv(t, "HOME", t.TempDir())
	chdir(t, t.TempDir())
	d := startDaemon(t, cfg)

	before := d.requests.Load()
	r := runCLI(t, "servers")
	wantCode(t, r, ExitOK)
	wantContains(t, "servers", r.stdout, "alpha", "connected")
	if strings.Contains(r.stdout, "tasks") {
		t.Errorf("servers showed the embedded default:\n%s", r.stdout)
	}
	wantContains(t, "servers", r.stderr, "note: using the running daemon (pid ", "which serves "+cfg, "rather than the embedded default")
	if d.requests.Load() == before {
		t.Error("servers did not ask the daemon")
	}
	r = runCLI(t, "tools", "alpha")
	wantCode(t, r, ExitOK)
	wantContains(t, "tools", r.stdout, "echo")

	// With --config naming the file the daemon serves: no note.
	r = runCLI(t, "servers", "--config", cfg)
	wantCode(t, r, ExitOK)
	if strings.Contains(r.stderr, "note:") {
		t.Errorf("a note for the daemon's own file: %s", r.stderr)
	}
}
