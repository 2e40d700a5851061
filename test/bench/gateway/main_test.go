package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary play the upstream and the gateway, which
// the benchmark starts by re-executing itself.
func TestMain(m *testing.M) {
	if role, ok := os.LookupEnv(envRole); ok {
		os.Exit(runChild(role))
	}
	// The children are this race-built binary, which otherwise sleeps a
	// second at exit (GORACE's atexit_sleep_ms) before the run can go on.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// sharedRun is one run of the whole command, with every path, the
// profile and the trace, that the tests below read. A run keeps both
// cores busy for as long as its cells last and starts six race-built
// children, so the tests share one small run rather than each running
// the benchmark: cells of 20 ms after 10 ms of warm-up, and 10 idle
// sessions (each costs about 15 ms of CPU between the client and the
// gateway, under the race detector), are enough for every figure.
type sharedRun struct {
	code           int
	stdout, stderr string
	b              *benchmark
	rep            *report
	profile, trace string
}

// sharedDir holds the shared run's profile and trace; TestMain removes it.
var sharedDir string

var theRun = sync.OnceValue(func() sharedRun {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var r sharedRun
	dir, err := os.MkdirTemp("", "bench-gateway-test-")
	if err != nil {
		r.code, r.stderr = -1, err.Error()
		return r
	}
	sharedDir = dir
	r.profile, r.trace = filepath.Join(dir, "gw.pprof"), filepath.Join(dir, "gw.trace")
	var stdout, stderr bytes.Buffer
	args := []string{"-duration", "20ms", "-warmup", "10ms", "-sessions", strconv.Itoa(testSessions), "-callers", "1,2", "-profile", r.profile, "-trace", r.trace, "-gomaxprocs", "1", "-progress", "-lean"}
	r.code, r.b, r.rep = runCommand(ctx, args, &stdout, &stderr)
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
})

// testSessions is how many idle sessions the shared run opens.
const testSessions = 10

// shared returns the shared run, failing t if it did not succeed.
func shared(t *testing.T) sharedRun {
	t.Helper()
	r := theRun()
	if r.code != 0 || r.rep == nil {
		t.Fatalf("run: got exit code %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	return r
}

// tableRow is one row of the comparison table.
type tableRow struct {
	callersPerSec float64
	errors        int
}

// parseTable reads the comparison table's rows, keyed "<callers> <path>".
func parseTable(t *testing.T, out string) map[string]tableRow {
	t.Helper()
	rows := map[string]tableRow{}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[1] != pathDirect && f[1] != pathGateway && f[1] != pathProxy && f[1] != pathRelay && f[1] != pathLean) {
			continue
		}
		if _, err := strconv.Atoi(f[0]); err != nil {
			continue
		}
		cps, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("row %q: calls/s %q is not a number", line, f[2])
		}
		errs, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			t.Fatalf("row %q: errors %q is not a number", line, f[len(f)-1])
		}
		rows[f[0]+" "+f[1]] = tableRow{cps, errs}
	}
	return rows
}

func TestCommandPrintsEveryCell(t *testing.T) {
	t.Parallel()
	r := shared(t)
	out := r.stdout
	rows := parseTable(t, out)
	for _, n := range []string{"1", "2"} {
		for _, path := range []string{pathDirect, pathGateway, pathProxy, pathRelay, pathLean} {
			r, ok := rows[n+" "+path]
			if !ok {
				t.Errorf("no row for %s caller(s) %s in:\n%s", n, path, out)
				continue
			}
			if r.callersPerSec <= 0 {
				t.Errorf("%s caller(s) %s: got %v calls/s, want more than 0", n, path, r.callersPerSec)
			}
			if r.errors != 0 {
				t.Errorf("%s caller(s) %s: got %d errors, want 0", n, path, r.errors)
			}
		}
	}
	if got, want := len(rows), 10; got != want {
		t.Errorf("got %d table rows, want %d:\n%s", got, want, out)
	}
	for _, want := range []string{
		"20ms per cell after a 10ms warm-up", "10 idle upstreams:", "+ 10 idle client sessions:",
		"gateway CPU per forwarded call", "throughput through the gateway", "latency added at p50",
		"top 10:", "Total samples =", "flat%", "Path relay is a TCP relay",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	// With callers 1,2 the 16-caller cell is missing, so its aim says so.
	if !strings.Contains(out, "met: not measured") {
		t.Errorf("the throughput aim at 16 callers: got no %q in:\n%s", "met: not measured", out)
	}
	if fi, err := os.Stat(r.profile); err != nil || fi.Size() == 0 {
		t.Errorf("the gateway's CPU profile: got %v (err %v), want a non-empty file", fi, err)
	}
	if fi, err := os.Stat(r.trace); err != nil || fi.Size() == 0 {
		t.Errorf("the gateway's execution trace: got %v (err %v), want a non-empty file", fi, err)
	}
}

func TestJSONReportAndNoLeftovers(t *testing.T) {
	t.Parallel()
	r := shared(t)
	var buf bytes.Buffer
	if err := writeJSON(&buf, r.rep); err != nil {
		t.Fatal(err)
	}
	var got report
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("the JSON report does not decode: %v\n%s", err, buf.String())
	}
	if len(got.Cells) != 10 {
		t.Fatalf("got %d cells, want 10 (1 and 2 callers direct, through the gateway, the bare proxy, the relay and the lean forwarder)", len(got.Cells))
	}
	for _, c := range got.Cells {
		if c.Calls == 0 || c.CallsPerSec <= 0 || c.P50Micros <= 0 || c.P99Micros < c.P50Micros {
			t.Errorf("%d callers %s: got calls %d, %.0f calls/s, p50 %.0f µs, p99 %.0f µs; want calls and 0 < p50 <= p99",
				c.Callers, c.Path, c.Calls, c.CallsPerSec, c.P50Micros, c.P99Micros)
		}
	}
	if m := got.Memory; m.OneUpstreamIdle <= 0 || m.IdleUpstreams <= 0 || m.IdleSessions <= 0 || m.Sessions != testSessions {
		t.Errorf("memory: got %+v, want every figure above 0 and %d sessions", m, testSessions)
	}
	if got.Duration != "20ms" || got.Warmup != "10ms" {
		t.Errorf("got %s cells after %s warm-ups, want 20ms after 10ms", got.Duration, got.Warmup)
	}
	if got.ProfileCallers != 2 || got.ProfileFile != r.profile || got.TraceFile != r.trace {
		t.Errorf("profile: got %d callers, file %q, trace %q; want 2 (the largest cell), %q and %q",
			got.ProfileCallers, got.ProfileFile, got.TraceFile, r.profile, r.trace)
	}

	// Six children: the upstream, the benchmark's gateway, the bare
	// proxy, the relay, the lean forwarder and the memory measurement's
	// gateway; all gone once run returns.
	pids := r.b.childPIDs()
	if len(pids) != 6 {
		t.Errorf("got %d children, want 6", len(pids))
	}
	for _, pid := range pids {
		if !isExited(pid) {
			t.Errorf("child %d is still running after run returned", pid)
		}
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		args    []string
		callers []int
		wantErr bool
	}{
		{nil, []int{1, 16, 64}, false},
		{[]string{"-callers", "1, 2"}, []int{1, 2}, false},
		{[]string{"-callers", "0"}, nil, true},
		{[]string{"-callers", "x"}, nil, true},
		{[]string{"-duration", "0s"}, nil, true},
		{[]string{"extra"}, nil, true},
		{[]string{"-gomaxprocs", "-1"}, nil, true},
		{[]string{"-gomaxprocs", "1", "-proxy=false", "-relay=false"}, []int{1, 16, 64}, false},
		{[]string{"-progress", "-fast-path=false"}, []int{1, 16, 64}, false},
		{[]string{"-lean", "-callers", "16"}, []int{16}, false},
		{[]string{"-warmup", "10ms", "-sessions", "5"}, []int{1, 16, 64}, false},
		{[]string{"-warmup", "-1s"}, nil, true},
		{[]string{"-sessions", "0"}, nil, true},
		{[]string{"-sessions", "10001"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseFlags(tt.args, &bytes.Buffer{})
			if gotErr := err != nil; gotErr != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.callers, o.Callers); err == nil && diff != "" {
				t.Errorf("callers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p50 of four", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of four", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
