// Command gateway is the gateway benchmark: it measures, in one run on one
// machine, the same MCP client calling `echo` on a go-sdk streamable-HTTP
// upstream directly and through a Switchboard daemon, at several numbers of
// concurrent callers, and prints calls/s, p50 and p99 latency, the gateway
// process's own CPU time per forwarded call (from the kernel's accounting
// in /proc), the upstream's CPU per call for context, and the daemon's
// resident memory with 10 idle upstreams and with 100 idle client sessions;
// then the project's aims and whether each is met. For scale, it also
// measures a bare reverse proxy (net/http/httputil, no MCP) in the
// gateway's place: what any gateway on net/http spends at the least.
//
// Three kinds of process keep the CPU accounting clean: this one (the
// client), the upstream and the gateway, both this binary re-executed with
// a role in the environment. A child exits when its stdin closes, so none
// outlives the run.
//
//	go run ./test/bench/gateway [-duration 5s] [-warmup D] [-callers 1,16,64] [-sessions 100] [-json] [-profile gw.pprof] [-trace gw.trace] [-proxy=false] [-relay=false] [-lean] [-gomaxprocs N] [-progress] [-fast-path=false]
//
// It needs Linux (/proc). See docs/benchmarks.md for figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if role, ok := os.LookupEnv(envRole); ok {
		os.Exit(runChild(role))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	// Duration is how long each cell measures, after its warm-up.
	Duration time.Duration
	// Warmup is how long each cell warms up; 0 means a fifth of
	// Duration, from 100 ms to 1 s.
	Warmup time.Duration
	// Callers lists the numbers of concurrent callers, one cell pair each.
	Callers []int
	// Sessions is how many idle client sessions the memory measurement
	// opens.
	Sessions int
	// JSON prints the report as JSON instead of a table.
	JSON bool
	// Profile, if set, is where the gateway writes a CPU profile of the
	// through-gateway cell with profileCallers callers.
	Profile string
	// Trace, if set, is where the gateway writes an execution trace of
	// the same cell (`go tool trace`).
	Trace string
	// Proxy adds a third path at each number of callers: through a bare
	// reverse proxy, the floor for forwarding over two net/http hops.
	Proxy bool
	// Relay adds a path through a TCP relay that copies bytes and parses
	// nothing, the floor for any forwarder in user space.
	Relay bool
	// Lean adds a path through a forwarder that parses each request and
	// response with the standard library but has no net/http server or
	// transport (see serveLean).
	Lean bool
	// GOMAXPROCS, when positive, is set in the gateway's and the
	// proxy's environment (the client and the upstream keep the
	// default).
	GOMAXPROCS int
	// Progress gives every call a progress token, as editors do.
	Progress bool
	// NoFastPath runs the gateway with gateway.fast_path: false, every
	// request through the MCP SDK's server.
	NoFastPath bool
}

// profileCallers is the cell the -profile flag profiles (the one the
// throughput aim is about); without it, the largest cell is profiled.
const profileCallers = 16

// run is the command: it returns the exit code (0 ok, 1 failure, 2 usage).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	code, _, _ := runCommand(ctx, args, stdout, stderr)
	return code
}

// runCommand is run that also returns the benchmark it ran (nil if the
// flags were wrong) and its report (nil if the run failed), so that the
// tests can check the printed report, the JSON form of the same report
// and the children the run started from one run.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) (int, *benchmark, *report) {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0, nil, nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench-gateway: %v\n", err)
		return 2, nil, nil
	}
	b := newBenchmark(opts, stderr)
	rep, err := b.run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "bench-gateway: %v\n", err)
		return 1, b, nil
	}
	if opts.JSON {
		err = writeJSON(stdout, rep)
	} else {
		err = writeTable(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench-gateway: writing the report: %v\n", err)
		return 1, b, rep
	}
	return 0, b, rep
}

// parseFlags reads the command line.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dur := fs.Duration("duration", 5*time.Second, "how long each cell measures (after a warm-up)")
	warm := fs.Duration("warmup", 0, "how long each cell warms up before it measures (0: a fifth of -duration, from 100ms to 1s)")
	sessions := fs.Int("sessions", 100, "how many idle client sessions the memory measurement opens")
	callers := fs.String("callers", "1,16,64", "comma-separated numbers of concurrent callers")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	profile := fs.String("profile", "", "write a CPU profile of the gateway during the through-gateway 16-caller cell to this file")
	trace := fs.String("trace", "", "write an execution trace of the gateway during the through-gateway 16-caller cell to this file")
	proxy := fs.Bool("proxy", true, "also measure a bare reverse proxy (net/http/httputil) in the gateway's place, the floor for two net/http hops")
	relay := fs.Bool("relay", true, "also measure a TCP relay (copies bytes, parses nothing) in the gateway's place, the floor for any forwarder")
	lean := fs.Bool("lean", false, "also measure a forwarder that parses HTTP without net/http's server and transport (a measuring device)")
	progress := fs.Bool("progress", false, "give every call a progress token, as editors do")
	fastPath := fs.Bool("fast-path", true, "the gateway answers tools/call itself (false: gateway.fast_path: false, everything through the MCP SDK)")
	procs := fs.Int("gomaxprocs", 0, "run the gateway and the proxy with this GOMAXPROCS (0: the Go default)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *dur <= 0 {
		return options{}, fmt.Errorf("-duration must be positive, got %s", *dur)
	}
	if *warm < 0 {
		return options{}, fmt.Errorf("-warmup must be 0 (a fifth of -duration) or positive, got %s", *warm)
	}
	if *sessions < 1 || *sessions > maxSessions {
		return options{}, fmt.Errorf("-sessions must be a number from 1 to %d, got %d", maxSessions, *sessions)
	}
	o := options{Duration: *dur, Warmup: *warm, Sessions: *sessions, JSON: *asJSON, Profile: *profile, Trace: *trace, Proxy: *proxy, Relay: *relay, Lean: *lean, GOMAXPROCS: *procs, Progress: *progress, NoFastPath: !*fastPath}
	if *procs < 0 {
		return options{}, fmt.Errorf("-gomaxprocs must be 0 (the default) or more, got %d", *procs)
	}
	for _, f := range strings.Split(*callers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxCallers {
			return options{}, fmt.Errorf("-callers: %q is not a number from 1 to %d", f, maxCallers)
		}
		o.Callers = append(o.Callers, n)
	}
	return o, nil
}

// maxSessions bounds -sessions: each is a client session on the gateway
// and one on its side, both held until the memory measurement ends.
const maxSessions = 10000

// maxCallers bounds -callers: the gateway's concurrency limit is raised
// to it so that no call is refused for being over the limit.
const maxCallers = 1024
