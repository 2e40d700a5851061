package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// report is everything one run measured.
type report struct {
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	CPUs      int    `json:"cpus"`
	Duration  string `json:"duration_per_cell"`
	Warmup    string `json:"warmup_per_cell"`
	// LoadAvg is /proc/loadavg's 1-minute figure before and after the
	// run: other work on the machine skews every figure.
	LoadAvg [2]string `json:"load_avg_before_after"`
	Callers []int     `json:"callers"`
	// Progress is set when every call carried a progress token.
	Progress bool `json:"progress,omitempty"`
	// NoFastPath is set when the gateway ran with gateway.fast_path: false.
	NoFastPath bool   `json:"no_fast_path,omitempty"`
	Cells      []cell `json:"cells"`
	Memory     memory `json:"memory"`
	Aims       []aim  `json:"aims"`
	// ProfileFile is the gateway's CPU profile of the through-gateway
	// cell with ProfileCallers callers, if one was asked for; ProfileTop
	// is its top 10 functions as `go tool pprof -top` lists them.
	ProfileFile    string `json:"profile_file,omitempty"`
	ProfileCallers int    `json:"profile_callers,omitempty"`
	ProfileTop     string `json:"profile_top,omitempty"`
	// TraceFile is the gateway's execution trace of the same cell, if
	// one was asked for.
	TraceFile string `json:"trace_file,omitempty"`
}

// cell is one measurement: n callers on one path.
type cell struct {
	Callers int    `json:"callers"`
	Path    string `json:"path"` // "direct", "gateway", "proxy", "relay" or "lean"
	// Calls is how many calls succeeded in the measured part, which took
	// Seconds; Errors how many failed, the first with FirstError.
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_sec"`
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	// GatewayCPUPerCallMicros is the gateway process's user+system CPU
	// time over the measured part divided by Calls (gateway cells; in
	// proxy cells, the bare proxy's).
	GatewayCPUPerCallMicros float64 `json:"gateway_cpu_per_call_us,omitempty"`
	// UpstreamCPUPerCallMicros is the same for the upstream process.
	UpstreamCPUPerCallMicros float64 `json:"upstream_cpu_per_call_us"`
}

// memory is the gateway daemon's resident memory (VmRSS), in bytes.
type memory struct {
	// OneUpstreamIdle is the benchmark's gateway, one upstream, before
	// any call.
	OneUpstreamIdle int64 `json:"one_upstream_idle_bytes"`
	// IdleUpstreams is a fresh gateway with Upstreams idle upstreams,
	// connected; IdleSessions the same with Sessions idle client sessions
	// open on it as well.
	Upstreams     int    `json:"upstreams"`
	UpstreamsNote string `json:"upstreams_note"`
	IdleUpstreams int64  `json:"idle_upstreams_bytes"`
	Sessions      int    `json:"sessions"`
	IdleSessions  int64  `json:"idle_sessions_bytes"`
}

// aim is one of the targets and whether the run met it.
type aim struct {
	Name     string `json:"name"`
	Target   string `json:"target"`
	Measured string `json:"measured"`
	// Met is "yes", "no" or "not measured" (the run lacked the cell).
	Met string `json:"met"`
	// Floors is the same figure through the bare proxy and the TCP
	// relay, in the same cell, where the run measured them.
	Floors string `json:"floors,omitempty"`
}

// floors formats figure for the proxy, lean and relay cells with callers
// callers: "proxy 295 µs, relay 104 µs", or "" if none of them ran.
func floors(r *report, callers int, figure func(c cell) string) string {
	var parts []string
	for _, path := range []string{pathProxy, pathLean, pathRelay} {
		if c, ok := r.find(callers, path); ok {
			parts = append(parts, path+" "+figure(c))
		}
	}
	return strings.Join(parts, ", ")
}

// The aims.
const (
	aimCPUPerCallMicros = 150  // gateway CPU per forwarded call, every cell
	aimThroughputRatio  = 0.85 // of direct calls/s at aimThroughputCallers
	aimThroughputCalls  = 16
	aimAddedP50Micros   = 150 // added p50 with one caller
)

// find returns the cell for n callers on path.
func (r *report) find(n int, path string) (cell, bool) {
	for _, c := range r.Cells {
		if c.Callers == n && c.Path == path {
			return c, true
		}
	}
	return cell{}, false
}

// aims judges the report against the aims.
func aims(r *report) []aim {
	yesNo := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no"
	}
	var out []aim

	cpu := aim{Name: "gateway CPU per forwarded call", Target: fmt.Sprintf("< %d µs in every cell", aimCPUPerCallMicros), Met: "not measured"}
	var worst cell
	for _, c := range r.Cells {
		if c.Path == pathGateway && c.GatewayCPUPerCallMicros >= worst.GatewayCPUPerCallMicros {
			worst = c
		}
	}
	if worst.Path != "" {
		cpu.Measured = fmt.Sprintf("worst %.0f µs (%s)", worst.GatewayCPUPerCallMicros, callersText(worst.Callers))
		cpu.Met = yesNo(worst.GatewayCPUPerCallMicros < aimCPUPerCallMicros)
		cpu.Floors = floors(r, worst.Callers, func(c cell) string {
			return fmt.Sprintf("%.0f µs", c.GatewayCPUPerCallMicros)
		})
	}
	out = append(out, cpu)

	tp := aim{Name: "throughput through the gateway", Target: fmt.Sprintf(">= %.0f %% of direct at %d callers", aimThroughputRatio*100, aimThroughputCalls), Met: "not measured"}
	d, okD := r.find(aimThroughputCalls, pathDirect)
	g, okG := r.find(aimThroughputCalls, pathGateway)
	if okD && okG && d.CallsPerSec > 0 {
		ratio := g.CallsPerSec / d.CallsPerSec
		tp.Measured = fmt.Sprintf("%.0f %% (%.0f vs %.0f calls/s)", ratio*100, g.CallsPerSec, d.CallsPerSec)
		tp.Met = yesNo(ratio >= aimThroughputRatio)
		tp.Floors = floors(r, aimThroughputCalls, func(c cell) string {
			return fmt.Sprintf("%.0f %%", 100*c.CallsPerSec/d.CallsPerSec)
		})
	}
	out = append(out, tp)

	lat := aim{Name: "latency added at p50", Target: fmt.Sprintf("< %.2f ms with 1 caller", float64(aimAddedP50Micros)/1000), Met: "not measured"}
	d, okD = r.find(1, pathDirect)
	g, okG = r.find(1, pathGateway)
	if okD && okG {
		added := g.P50Micros - d.P50Micros
		lat.Measured = fmt.Sprintf("%+.3f ms (%.3f vs %.3f ms)", added/1000, g.P50Micros/1000, d.P50Micros/1000)
		lat.Met = yesNo(added < aimAddedP50Micros)
		lat.Floors = floors(r, 1, func(c cell) string {
			return fmt.Sprintf("%+.3f ms", (c.P50Micros-d.P50Micros)/1000)
		})
	}
	out = append(out, lat)
	return out
}

// writeJSON prints the report as indented JSON.
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeTable prints the report for a person: the comparison table, the
// memory figures, the aims and, if profiled, the profile's top 10.
func writeTable(w io.Writer, r *report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Gateway benchmark: echo over streamable HTTP, one go-sdk client session shared by the callers,\n")
	if r.Progress {
		fmt.Fprintf(&b, "every call with a progress token (as editors send),\n")
	}
	if r.NoFastPath {
		fmt.Fprintf(&b, "the gateway with fast_path: false (every request through the MCP SDK's server),\n")
	}
	fmt.Fprintf(&b, "%s per cell after a %s warm-up, %d CPUs, %s %s, load average %s before, %s after.\n", r.Duration, r.Warmup, r.CPUs, r.GoVersion, r.Platform, r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "CPU per call is the process's user+system time (/proc/<pid>/stat) over the cell divided by its calls.\n")
	if slices.ContainsFunc(r.Cells, func(c cell) bool { return c.Path == pathProxy }) {
		fmt.Fprintf(&b, "Path proxy is a bare reverse proxy (net/http/httputil, no MCP) in the gateway's place: the floor for\n")
		fmt.Fprintf(&b, "any gateway that forwards over two net/http hops; its CPU is in the gateway column.\n")
	}
	if slices.ContainsFunc(r.Cells, func(c cell) bool { return c.Path == pathRelay }) {
		fmt.Fprintf(&b, "Path relay is a TCP relay (copies bytes both ways, parses nothing) in the gateway's place: the floor for\n")
		fmt.Fprintf(&b, "any forwarder in user space on this machine; its CPU is in the gateway column.\n")
	}
	if slices.ContainsFunc(r.Cells, func(c cell) bool { return c.Path == pathLean }) {
		fmt.Fprintf(&b, "Path lean parses each request and response (http.ReadRequest, http.ReadResponse) and forwards them\n")
		fmt.Fprintf(&b, "on one goroutine per connection, without net/http's server or transport; its CPU is in the gateway column.\n")
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "callers\tpath\tcalls/s\tvs direct\tp50 ms\tp99 ms\tadded p50 ms\tgateway CPU/call\tupstream CPU/call\terrors\t")
	for _, c := range r.Cells {
		vs, added, gwCPU := "-", "-", "-"
		if c.Path != pathDirect {
			gwCPU = fmt.Sprintf("%.0f µs", c.GatewayCPUPerCallMicros)
			if d, ok := r.find(c.Callers, pathDirect); ok {
				if d.CallsPerSec > 0 {
					vs = fmt.Sprintf("%.0f %%", 100*c.CallsPerSec/d.CallsPerSec)
				}
				added = fmt.Sprintf("%+.3f", (c.P50Micros-d.P50Micros)/1000)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t%s\t%.3f\t%.3f\t%s\t%s\t%.0f µs\t%d\t\n",
			c.Callers, c.Path, c.CallsPerSec, vs, c.P50Micros/1000, c.P99Micros/1000, added, gwCPU, c.UpstreamCPUPerCallMicros, c.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range r.Cells {
		if c.FirstError != "" {
			fmt.Fprintf(&b, "first error, %d callers %s: %s\n", c.Callers, c.Path, c.FirstError)
		}
	}

	m := r.Memory
	fmt.Fprintf(&b, "\nGateway resident memory (VmRSS):\n")
	fmt.Fprintf(&b, "  1 upstream, idle, before any call:  %s\n", mib(m.OneUpstreamIdle))
	fmt.Fprintf(&b, "  %d idle upstreams:                  %s  (%s)\n", m.Upstreams, mib(m.IdleUpstreams), m.UpstreamsNote)
	perSession := float64(m.IdleSessions-m.IdleUpstreams) / float64(max(m.Sessions, 1)) / 1024
	fmt.Fprintf(&b, "  + %d idle client sessions:         %s  (%+.1f KiB per session)\n", m.Sessions, mib(m.IdleSessions), perSession)

	fmt.Fprintf(&b, "\nAims:\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, a := range r.Aims {
		fl := ""
		if a.Floors != "" {
			fl = "  (same cell: " + a.Floors + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\tmet: %s%s\n", a.Name, a.Target, a.Measured, a.Met, fl)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.ProfileTop != "" {
		fmt.Fprintf(&b, "\nGateway CPU profile, %d callers through the gateway (%s), top 10:\n%s", r.ProfileCallers, r.ProfileFile, r.ProfileTop)
	}
	if r.TraceFile != "" {
		fmt.Fprintf(&b, "\nGateway execution trace, %d callers through the gateway: %s (go tool trace %s)\n", r.ProfileCallers, r.TraceFile, r.TraceFile)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mib formats a byte count in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// callersText is "1 caller" or "n callers".
func callersText(n int) string {
	if n == 1 {
		return "1 caller"
	}
	return fmt.Sprintf("%d callers", n)
}
