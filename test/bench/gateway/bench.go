package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client-side settings.
const (
	// echoMessage is what every call sends and expects back.
	echoMessage = "hello"
	// gatewayTool is the upstream's echo as the gateway exposes it: server
	// up0's tool echo.
	gatewayTool = "up0__echo"
	// connectTimeout bounds connecting a client session and listing tools.
	connectTimeout = 30 * time.Second
	// settleTimeout bounds waiting for a process's memory to stop moving.
	settleTimeout = 3 * time.Second
)

// benchmark is one run of the benchmark.
type benchmark struct {
	opts options
	log  io.Writer // progress lines

	mu       sync.Mutex
	children []*child // every child started, for cleanup and tests
}

func newBenchmark(opts options, log io.Writer) *benchmark {
	return &benchmark{opts: opts, log: log}
}

// childPIDs returns the process ids of every child the run started.
func (b *benchmark) childPIDs() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var pids []int
	for _, c := range b.children {
		pids = append(pids, c.PID())
	}
	return pids
}

// start starts a child and registers it for cleanup.
func (b *benchmark) start(name, role string, env ...string) (*child, error) {
	c, err := startChild(name, role, env...)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.children = append(b.children, c)
	b.mu.Unlock()
	return c, nil
}

// middleEnv is env plus, with -gomaxprocs, the GOMAXPROCS of the
// processes in the middle (the gateway and the bare proxy), and with
// -fast-path=false the gateway's setting.
func (b *benchmark) middleEnv(env ...string) []string {
	if b.opts.GOMAXPROCS > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(b.opts.GOMAXPROCS))
	}
	if b.opts.NoFastPath {
		env = append(env, envNoFastPath+"=1")
	}
	return env
}

// stopAll stops every child still running.
func (b *benchmark) stopAll() {
	b.mu.Lock()
	cs := slices.Clone(b.children)
	b.mu.Unlock()
	for _, c := range cs {
		c.stop()
	}
}

func (b *benchmark) progress(format string, args ...any) {
	fmt.Fprintf(b.log, "bench-gateway: "+format+"\n", args...)
}

// run measures everything and returns the report. Every child is stopped
// when it returns.
func (b *benchmark) run(ctx context.Context) (*report, error) {
	defer b.stopAll()
	if _, err := cpuTime(os.Getpid()); err != nil {
		return nil, err
	}
	rep := &report{
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(),
		Duration: b.opts.Duration.String(), Warmup: b.warmup().String(), Callers: b.opts.Callers, Progress: b.opts.Progress, NoFastPath: b.opts.NoFastPath,
	}
	rep.LoadAvg[0] = loadAvg()

	up, err := b.start("upstream", roleUpstream)
	if err != nil {
		return nil, err
	}
	gw, err := b.start("gateway", roleGateway, b.middleEnv(envUpstream+"="+up.Addr, envServers+"=1")...)
	if err != nil {
		return nil, err
	}
	if rep.Memory.OneUpstreamIdle, err = settledRSS(ctx, gw.PID()); err != nil {
		return nil, err
	}

	var px *child
	if b.opts.Proxy {
		if px, err = b.start("proxy", roleProxy, b.middleEnv(envUpstream+"="+up.Addr)...); err != nil {
			return nil, err
		}
	}

	var rl *child
	if b.opts.Relay {
		if rl, err = b.start("relay", roleRelay, b.middleEnv(envUpstream+"="+up.Addr)...); err != nil {
			return nil, err
		}
	}

	var ln *child
	if b.opts.Lean {
		if ln, err = b.start("lean", roleLean, b.middleEnv(envUpstream+"="+up.Addr)...); err != nil {
			return nil, err
		}
	}

	hc := newHTTPClient()
	direct, err := connect(ctx, hc, up.Addr+"/mcp/0", "echo", true)
	if err != nil {
		return nil, fmt.Errorf("connecting to the upstream directly: %w", err)
	}
	defer direct.Close()
	via, err := connect(ctx, hc, gw.Addr+"/mcp", gatewayTool, true)
	if err != nil {
		return nil, fmt.Errorf("connecting through the gateway: %w", err)
	}
	defer via.Close()
	var viaProxy *mcp.ClientSession
	if px != nil {
		if viaProxy, err = connect(ctx, hc, px.Addr+"/mcp", "echo", true); err != nil {
			return nil, fmt.Errorf("connecting through the bare proxy: %w", err)
		}
		defer viaProxy.Close()
	}
	var viaRelay *mcp.ClientSession
	if rl != nil {
		if viaRelay, err = connect(ctx, hc, rl.Addr+"/mcp/0", "echo", true); err != nil {
			return nil, fmt.Errorf("connecting through the TCP relay: %w", err)
		}
		defer viaRelay.Close()
	}
	var viaLean *mcp.ClientSession
	if ln != nil {
		if viaLean, err = connect(ctx, hc, ln.Addr+"/mcp/0", "echo", true); err != nil {
			return nil, fmt.Errorf("connecting through the lean forwarder: %w", err)
		}
		defer viaLean.Close()
	}

	profileAt := profileCallers
	if !slices.Contains(b.opts.Callers, profileAt) {
		profileAt = slices.Max(b.opts.Callers)
	}
	for _, n := range b.opts.Callers {
		b.progress("%s, direct", callersText(n))
		c, err := b.cell(ctx, direct, "echo", pathDirect, n, up, nil, "", "")
		if err != nil {
			return nil, err
		}
		rep.Cells = append(rep.Cells, c)
		b.progress("%s, through the gateway", callersText(n))
		profile, trace := "", ""
		if n == profileAt {
			profile, trace = b.opts.Profile, b.opts.Trace
			if profile != "" || trace != "" {
				rep.ProfileCallers = n
			}
		}
		c, err = b.cell(ctx, via, gatewayTool, pathGateway, n, up, gw, profile, trace)
		if err != nil {
			return nil, err
		}
		rep.Cells = append(rep.Cells, c)
		if viaProxy != nil {
			b.progress("%s, through the bare proxy", callersText(n))
			if c, err = b.cell(ctx, viaProxy, "echo", pathProxy, n, up, px, "", ""); err != nil {
				return nil, err
			}
			rep.Cells = append(rep.Cells, c)
		}
		if viaRelay != nil {
			b.progress("%s, through the TCP relay", callersText(n))
			if c, err = b.cell(ctx, viaRelay, "echo", pathRelay, n, up, rl, "", ""); err != nil {
				return nil, err
			}
			rep.Cells = append(rep.Cells, c)
		}
		if viaLean != nil {
			b.progress("%s, through the lean forwarder", callersText(n))
			if c, err = b.cell(ctx, viaLean, "echo", pathLean, n, up, ln, "", ""); err != nil {
				return nil, err
			}
			rep.Cells = append(rep.Cells, c)
		}
	}
	direct.Close()
	via.Close()
	gw.stop()
	if px != nil {
		viaProxy.Close()
		px.stop()
	}
	if rl != nil {
		viaRelay.Close()
		rl.stop()
	}
	if ln != nil {
		viaLean.Close()
		ln.stop()
	}

	b.progress("memory: a gateway with %d idle upstreams, then %d idle client sessions", upstreamEndpoints, b.opts.Sessions)
	if err := b.memory(ctx, up, &rep.Memory); err != nil {
		return nil, err
	}

	if b.opts.Profile != "" {
		rep.ProfileFile = b.opts.Profile
		rep.ProfileTop = profileTop(b.opts.Profile, 10)
	}
	rep.TraceFile = b.opts.Trace
	rep.Aims = aims(rep)
	rep.LoadAvg[1] = loadAvg()
	return rep, nil
}

// newHTTPClient is the client's HTTP client: enough idle connections per
// host that no caller waits for one or opens a new one per call.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * maxCallers
	t.MaxIdleConnsPerHost = 2 * maxCallers
	return &http.Client{Transport: t}
}

// connect opens a client session on endpoint and waits until it lists
// tool; with check, it also calls the tool once to see that it echoes.
func connect(ctx context.Context, hc *http.Client, endpoint, tool string, check bool) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-gateway", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", endpoint, err)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("listing the tools of %s: %w", endpoint, err)
		}
		if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
			break
		}
		select {
		case <-ctx.Done():
			cs.Close()
			return nil, fmt.Errorf("waiting for %s to list %s: %w", endpoint, tool, ctx.Err())
		case <-t.C:
		}
	}
	if !check {
		return cs, nil
	}
	if err := callEcho(ctx, cs, tool, false); err != nil {
		cs.Close()
		return nil, fmt.Errorf("calling %s on %s: %w", tool, endpoint, err)
	}
	return cs, nil
}

// echoParams is the arguments of every call; it is only read.
var echoParams = echoArgs{Message: echoMessage}

// progressTokens numbers the progress tokens of -progress calls.
var progressTokens atomic.Int64

// callEcho calls tool and checks that it echoed. With progress, the call
// carries a progress token, as editors send with every call.
func callEcho(ctx context.Context, cs *mcp.ClientSession, tool string, progress bool) error {
	p := &mcp.CallToolParams{Name: tool, Arguments: echoParams}
	if progress {
		p.SetProgressToken(progressTokens.Add(1))
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("got an error or %d content blocks, want the message back", len(res.Content))
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != echoMessage {
		return fmt.Errorf("got %#v, want the text %q", res.Content[0], echoMessage)
	}
	return nil
}

// Cell paths.
const (
	pathDirect  = "direct"
	pathGateway = "gateway"
	// pathProxy is through a bare reverse proxy: the floor (see
	// serveProxy).
	pathProxy = "proxy"
	// pathRelay is through a TCP relay that parses nothing: the floor
	// for any forwarder (see serveRelay).
	pathRelay = "relay"
	// pathLean is through a forwarder that parses HTTP without net/http's
	// server and transport (see serveLean).
	pathLean = "lean"
)

// warmup returns how long a cell warms up before it measures: -warmup,
// or a fifth of -duration from 100 ms to 1 s.
func (b *benchmark) warmup() time.Duration {
	if b.opts.Warmup > 0 {
		return b.opts.Warmup
	}
	return min(max(b.opts.Duration/5, 100*time.Millisecond), time.Second)
}

// cell measures n callers sharing cs calling tool for the configured
// duration, after a warm-up, with the CPU time of up and (if not nil) gw
// over the measured part (gw is the gateway or the bare proxy, nil for
// the direct path). With profile set, gw writes a CPU profile of it
// there; with trace set, an execution trace.
func (b *benchmark) cell(ctx context.Context, cs *mcp.ClientSession, tool, path string, n int, up, gw *child, profile, trace string) (cell, error) {
	c := cell{Callers: n, Path: path}
	if _, err := load(ctx, cs, tool, n, b.warmup(), b.opts.Progress); err != nil {
		return c, fmt.Errorf("warming up %s %s: %w", callersText(n), path, err)
	}
	if profile != "" {
		if err := gw.command(cmdProfileStart, profile); err != nil {
			return c, err
		}
	}
	if trace != "" {
		if err := gw.command(cmdTraceStart, trace); err != nil {
			return c, err
		}
	}
	upBefore, err := cpuTime(up.PID())
	if err != nil {
		return c, err
	}
	var gwBefore time.Duration
	if gw != nil {
		if gwBefore, err = cpuTime(gw.PID()); err != nil {
			return c, err
		}
	}
	res, err := load(ctx, cs, tool, n, b.opts.Duration, b.opts.Progress)
	if err != nil {
		return c, fmt.Errorf("measuring %s %s: %w", callersText(n), path, err)
	}
	upAfter, err := cpuTime(up.PID())
	if err != nil {
		return c, err
	}
	if gw != nil {
		gwAfter, err := cpuTime(gw.PID())
		if err != nil {
			return c, err
		}
		if res.calls > 0 {
			c.GatewayCPUPerCallMicros = micros((gwAfter - gwBefore) / time.Duration(res.calls))
		}
	}
	if profile != "" {
		if err := gw.command(cmdProfileStop); err != nil {
			return c, err
		}
	}
	if trace != "" {
		if err := gw.command(cmdTraceStop); err != nil {
			return c, err
		}
	}
	c.Calls, c.Errors, c.FirstError = res.calls, res.errors, res.firstError
	c.Seconds = res.elapsed.Seconds()
	if res.calls > 0 {
		c.CallsPerSec = float64(res.calls) / res.elapsed.Seconds()
		c.UpstreamCPUPerCallMicros = micros((upAfter - upBefore) / time.Duration(res.calls))
	}
	c.P50Micros, c.P99Micros = micros(percentile(res.latencies, 50)), micros(percentile(res.latencies, 99))
	return c, nil
}

// loadResult is what load measured.
type loadResult struct {
	calls, errors int
	firstError    string
	elapsed       time.Duration
	latencies     []time.Duration // sorted, successful calls only
}

// load runs n goroutines calling tool on cs back to back for d, each at
// least once, and returns what they measured. A call that fails counts
// as an error; the run itself fails only if ctx is done.
func load(ctx context.Context, cs *mcp.ClientSession, tool string, n int, d time.Duration, progress bool) (loadResult, error) {
	type worker struct {
		lat      []time.Duration
		errors   int
		firstErr error
	}
	ws := make([]worker, n)
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for i := range ws {
		w := &ws[i]
		w.lat = make([]time.Duration, 0, 4096)
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(end) && len(w.lat)+w.errors > 0 {
					return
				}
				if err := callEcho(ctx, cs, tool, progress); err != nil {
					w.errors++
					if w.firstErr == nil {
						w.firstErr = err
					}
					continue
				}
				w.lat = append(w.lat, time.Since(t0))
			}
		})
	}
	wg.Wait()
	var r loadResult
	r.elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return r, err
	}
	for _, w := range ws {
		r.latencies = append(r.latencies, w.lat...)
		r.errors += w.errors
		if w.firstErr != nil && r.firstError == "" {
			r.firstError = w.firstErr.Error()
		}
	}
	r.calls = len(r.latencies)
	slices.Sort(r.latencies)
	return r, nil
}

// percentile returns the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100 // ceil(len·p/100), 1-based
	return sorted[max(i, 1)-1]
}

// micros converts d to microseconds.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// memory measures a fresh gateway's resident memory with every upstream
// endpoint as an idle server, then with -sessions client sessions open
// on it (each initialized and having listed the tools once).
func (b *benchmark) memory(ctx context.Context, up *child, m *memory) error {
	m.Upstreams = upstreamEndpoints
	m.Sessions = b.opts.Sessions
	m.UpstreamsNote = fmt.Sprintf("one upstream process serving %d streamable-HTTP endpoints, /mcp/0 … /mcp/%d", upstreamEndpoints, upstreamEndpoints-1)
	gw, err := b.start("gateway with "+strconv.Itoa(upstreamEndpoints)+" upstreams", roleGateway,
		envUpstream+"="+up.Addr, envServers+"="+strconv.Itoa(upstreamEndpoints))
	if err != nil {
		return err
	}
	defer gw.stop()
	if m.IdleUpstreams, err = settledRSS(ctx, gw.PID()); err != nil {
		return err
	}
	hc := newHTTPClient()
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for i := range b.opts.Sessions {
		cs, err := connect(ctx, hc, gw.Addr+"/mcp", gatewayTool, false)
		if err != nil {
			return fmt.Errorf("opening idle session %d: %w", i+1, err)
		}
		sessions = append(sessions, cs)
	}
	if m.IdleSessions, err = settledRSS(ctx, gw.PID()); err != nil {
		return err
	}
	return nil
}

// settledRSS returns process pid's resident memory once it has stopped
// moving: two samples 250 ms apart within 1 % of each other, or the last
// sample after settleTimeout.
func settledRSS(ctx context.Context, pid int) (int64, error) {
	deadline := time.Now().Add(settleTimeout)
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	prev, err := rss(pid)
	if err != nil {
		return 0, err
	}
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
		cur, err := rss(pid)
		if err != nil {
			return 0, err
		}
		if d := cur - prev; (d < 0 && -d*100 <= prev) || (d >= 0 && d*100 <= prev) || time.Now().After(deadline) {
			return cur, nil
		}
		prev = cur
	}
}
