package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/daemon"
	"github.com/switchboard-mcp/switchboard/internal/store"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// upstreamEndpoints is how many MCP endpoints the upstream serves, at
// /mcp/0 … /mcp/9: one per idle upstream of the memory measurement.
const upstreamEndpoints = 10

// gatewayConnectTimeout bounds how long the gateway child waits for its
// upstreams to connect before it reports ready.
const gatewayConnectTimeout = 30 * time.Second

// runChild runs this process as a child in role and returns its exit
// code.
func runChild(role string) int {
	// The orchestrator closes stdin to stop the child; so does its death.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	switch role {
	case roleUpstream:
		err = serveUpstream()
	case roleGateway:
		err = serveGateway(ctx, cancel)
	case roleProxy:
		err = serveProxy()
	case roleRelay:
		err = serveRelay()
	case roleLean:
		err = serveLean()
	default:
		err = fmt.Errorf("unknown role %q (want %s, %s, %s, %s or %s)", role, roleUpstream, roleGateway, roleProxy, roleRelay, roleLean)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-gateway %s: %v\n", role, err)
		return 1
	}
	return 0
}

// echoArgs are the echo tool's arguments.
type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to return"`
}

// newEchoServer returns a go-sdk server with one tool, echo, which returns
// its message.
func newEchoServer(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	return s
}

// serveUpstream serves upstreamEndpoints go-sdk streamable-HTTP
// endpoints on a loopback port until stdin closes.
func serveUpstream() error {
	mux := http.NewServeMux()
	for i := range upstreamEndpoints {
		srv := newEchoServer("bench-upstream-" + strconv.Itoa(i))
		mux.Handle("/mcp/"+strconv.Itoa(i), mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	}
	return serveUntilStdinCloses(mux, "upstream")
}

// serveProxy serves, at /mcp, a bare reverse proxy to the upstream
// endpoint $SWITCHBOARD_BENCH_UPSTREAM/mcp/0 until stdin closes: the
// standard library's httputil.ReverseProxy, which knows nothing of MCP,
// flushing event streams as they come. It is what forwarding over two
// net/http hops costs at the least, the floor under any gateway built
// on net/http.
func serveProxy() error {
	base := os.Getenv(envUpstream)
	target, err := url.Parse(base + "/mcp/0")
	if base == "" || err != nil {
		return fmt.Errorf("want %s set to the upstream's base URL, got %q", envUpstream, base)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * maxCallers
	t.MaxIdleConnsPerHost = 2 * maxCallers
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path, r.Out.URL.RawPath = target.Scheme, target.Host, target.Path, ""
			r.Out.Host = target.Host
		},
		Transport:     t,
		FlushInterval: -1,
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rp)
	return serveUntilStdinCloses(mux, "proxy")
}

// serveRelay relays TCP connections to the upstream's host until stdin
// closes: each accepted connection gets its own connection to the
// upstream, and bytes are copied both ways as they come, with no HTTP
// parsing at all (the client asks for the upstream's /mcp/0 itself). It
// is the floor under any forwarder in user space on this machine: what
// the kernel charges a process for reading and writing each request and
// response once on each side, and the Go runtime for waking on them.
func serveRelay() error {
	return servePairs("relay", func(in, out net.Conn) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = io.Copy(out, in)
			_ = out.(*net.TCPConn).CloseWrite()
		}()
		_, _ = io.Copy(in, out)
		_ = in.Close()
		<-done
	})
}

// serveUntilStdinCloses serves h on a loopback port, prints the ready
// line, answers commands on stdin, and shuts down when stdin closes.
func serveUntilStdinCloses(h http.Handler, role string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "bench-gateway %s: serving: %v\n", role, err)
		}
	})
	fmt.Printf("%s http://%s\n", lineReady, ln.Addr())
	p := &profiler{}
	serveCommands(os.Stdin, os.Stdout, p)
	p.stopQuietly()
	shutdownCtx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	_ = hs.Shutdown(shutdownCtx)
	_ = hs.Close() // the SDK's event streams do not end on Shutdown
	wg.Wait()
	return nil
}

// serveGateway runs a Switchboard daemon whose servers are the first
// $SWITCHBOARD_BENCH_SERVERS endpoints of the upstream at
// $SWITCHBOARD_BENCH_UPSTREAM, named up0, up1, …, until stdin closes.
func serveGateway(ctx context.Context, cancel context.CancelFunc) error {
	base := os.Getenv(envUpstream)
	n, err := strconv.Atoi(os.Getenv(envServers))
	if base == "" || err != nil || n < 1 || n > upstreamEndpoints {
		return fmt.Errorf("want %s set and %s from 1 to %d, got %q and %q",
			envUpstream, envServers, upstreamEndpoints, base, os.Getenv(envServers))
	}
	dir, err := os.MkdirTemp("", "sbbench")
	if err != nil {
		return fmt.Errorf("creating the state directory: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenSQLite(ctx, filepath.Join(dir, "switchboard.db"), store.Options{})
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	defer st.Close()

	daemon.TuneGC() // as switchboard serve does, and:
	defer daemon.GovernProcs(ctx, nil)()
	d, err := daemon.New(daemon.Options{
		Config:   gatewayConfig(base, n),
		Store:    st,
		StateDir: dir,
		// What `switchboard serve` logs by default: warnings and errors.
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Version:   "bench",
		NoControl: true,
	})
	if err != nil {
		return fmt.Errorf("building the daemon: %w", err)
	}
	if err := d.Listen(); err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	var wg sync.WaitGroup
	runErr := make(chan error, 1)
	wg.Go(func() { runErr <- d.Run(ctx) })
	if err := waitConnected(ctx, d.Pool(), n); err != nil {
		cancel()
		wg.Wait()
		return err
	}
	fmt.Printf("%s http://%s\n", lineReady, d.Addr())
	p := &profiler{}
	serveCommands(os.Stdin, os.Stdout, p)
	p.stopQuietly()
	cancel()
	wg.Wait()
	return <-runErr
}

// gatewayConfig is the daemon's configuration: n streamable-HTTP servers
// on the upstream's endpoints, the gateway on a free loopback port, and
// the concurrency limit raised so that no caller is refused.
func gatewayConfig(base string, n int) *config.Config {
	cfg := config.Default()
	cfg.Gateway.Listen = "127.0.0.1:0"
	cfg.Gateway.DisableFastPath = os.Getenv(envNoFastPath) == "1"
	cfg.Limits.MaxConcurrent = maxCallers
	for i := range n {
		cfg.Servers = append(cfg.Servers, config.Server{
			Name:             "up" + strconv.Itoa(i),
			Transport:        config.TransportHTTP,
			URL:              base + "/mcp/" + strconv.Itoa(i),
			ConnectTimeout:   cfg.Defaults.ConnectTimeout,
			RequestTimeout:   cfg.Defaults.RequestTimeout,
			MaxRetries:       cfg.Defaults.MaxRetries,
			TerminateOnClose: true,
			Enabled:          true,
			LoadTools:        true,
			LoadPrompts:      true,
			LoadResources:    true,
		})
	}
	return cfg
}

// waitConnected polls the pool until n servers are connected.
func waitConnected(ctx context.Context, pool *upstream.Pool, n int) error {
	deadline := time.Now().Add(gatewayConnectTimeout)
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		connected := 0
		var states []string
		for _, s := range pool.Snapshots() {
			if s.State == upstream.StateConnected {
				connected++
			}
			states = append(states, s.Server+": "+string(s.State)+" "+s.LastError)
		}
		if connected == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d upstreams connected after %s: %v", connected, n, gatewayConnectTimeout, states)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// profiler runs one CPU profile at a time.
type profiler struct {
	cpu   *os.File // the CPU profile being written
	trace *os.File // the execution trace being written
}

func (p *profiler) startCPU(path string) error {
	if p.cpu != nil {
		return errors.New("a CPU profile is already running")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("starting the CPU profile: %w", err)
	}
	p.cpu = f
	return nil
}

func (p *profiler) stopCPU() error {
	if p.cpu == nil {
		return errNoProfile
	}
	pprof.StopCPUProfile()
	err := p.cpu.Close()
	p.cpu = nil
	if err != nil {
		return fmt.Errorf("writing the profile: %w", err)
	}
	return nil
}

func (p *profiler) startTrace(path string) error {
	if p.trace != nil {
		return errors.New("an execution trace is already running")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the execution trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return fmt.Errorf("starting the execution trace: %w", err)
	}
	p.trace = f
	return nil
}

func (p *profiler) stopTrace() error {
	if p.trace == nil {
		return errNoTrace
	}
	trace.Stop()
	err := p.trace.Close()
	p.trace = nil
	if err != nil {
		return fmt.Errorf("writing the execution trace: %w", err)
	}
	return nil
}

// stopQuietly ends a profile or trace left running when the orchestrator
// went away.
func (p *profiler) stopQuietly() {
	if p.cpu != nil {
		_ = p.stopCPU()
	}
	if p.trace != nil {
		_ = p.stopTrace()
	}
}
