// Package procs keeps GOMAXPROCS in step with the CPU the process uses.
//
// A gateway spends most of its time waiting on the network. With several
// Ps and little to do, the Go scheduler wakes an idle thread each time a
// goroutine becomes runnable, and that thread searches for work, finds
// none and sleeps again; on a forwarded call this costs more CPU than the
// call's own work (docs/benchmarks.md: 456 µs per call with 2 Ps and one
// caller, 362 µs with 1). The Governor runs the process on as few Ps as
// its load needs and adds Ps as soon as they are busy, up to the
// runtime's own default, so a busy gateway still uses every core.
package procs

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"time"
)

// Defaults of Options.
const (
	// DefaultInterval is how often the CPU use is sampled.
	DefaultInterval = 250 * time.Millisecond
	// busy is the share of its Ps' time the process may use before Ps are
	// added: above it, work may be waiting for a P.
	busy = 0.75
	// target is the share of each P's time the process should use after
	// Ps are taken away, so that it is below busy with room to spare.
	target = 0.5
	// calmSamples is how many samples in a row must want fewer Ps before
	// any are taken away: adding is at once, taking away is slow.
	calmSamples = 8
)

// Options configure a Governor.
type Options struct {
	// Max is the most Ps; 0 means the runtime's GOMAXPROCS when Run
	// starts (the CPUs the process may use, cgroup limits included).
	Max int
	// Interval is the sampling period; 0 means DefaultInterval.
	Interval time.Duration
	// Logger gets a debug line for each change; nil discards them.
	Logger *slog.Logger

	// cpu and set replace the process's CPU clock and runtime.GOMAXPROCS
	// in tests.
	cpu func() (time.Duration, bool)
	set func(int)
}

// Enabled reports whether the governor should run: not when GOMAXPROCS is
// set in the environment (the operator chose), and not where the process's
// CPU time cannot be read.
func Enabled() bool {
	if os.Getenv("GOMAXPROCS") != "" {
		return false
	}
	_, ok := cpuTime()
	return ok
}

// Run governs GOMAXPROCS until ctx is done, then restores the runtime's
// value from before it started. It starts with one P.
func Run(ctx context.Context, opts Options) {
	if opts.cpu == nil {
		opts.cpu = cpuTime
	}
	if opts.set == nil {
		opts.set = func(n int) { runtime.GOMAXPROCS(n) }
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	initial := runtime.GOMAXPROCS(0)
	maxProcs := opts.Max
	if maxProcs <= 0 {
		maxProcs = initial
	}
	if maxProcs <= 1 {
		return // nothing to govern
	}
	used, ok := opts.cpu()
	if !ok {
		return
	}
	cur := 1
	opts.set(cur)
	defer opts.set(initial)
	log.Debug("GOMAXPROCS governed by load", "procs", cur, "max", maxProcs)

	t := time.NewTicker(opts.Interval)
	defer t.Stop()
	last := time.Now()
	calm := 0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			u, ok := opts.cpu()
			wall := now.Sub(last)
			if !ok || wall <= 0 {
				continue
			}
			load := float64(u-used) / float64(wall) // in Ps' worth of CPU
			used, last = u, now
			next := decide(cur, maxProcs, load, &calm)
			if next != cur {
				log.Debug("GOMAXPROCS changed", "from", cur, "to", next, "load", math.Round(load*100)/100)
				cur = next
				opts.set(cur)
			}
		}
	}
}

// decide returns the Ps to run on, given cur Ps, at most maxProcs, and
// load, the CPU the process used over the last sample in Ps' worth. Ps
// are doubled as soon as they are busy; they are reduced to what keeps
// each one at target only after calmSamples samples in a row wanted
// fewer (calm counts them).
func decide(cur, maxProcs int, load float64, calm *int) int {
	if load > busy*float64(cur) {
		*calm = 0
		return min(maxProcs, cur*2)
	}
	want := max(1, int(math.Ceil(load/target)))
	if want >= cur {
		*calm = 0
		return cur
	}
	*calm++
	if *calm < calmSamples {
		return cur
	}
	*calm = 0
	return want
}
