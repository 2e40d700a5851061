// Internal on purpose: drives the decision (decide, calmSamples) with made-up loads, and Run through its unexported CPU and GOMAXPROCS hooks.

package procs

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		cur, max int
		load     float64
		calm     int
		want     int
		wantCalm int
	}{
		{"idle at one P stays", 1, 8, 0.1, 0, 1, 0},
		{"half busy at one P stays", 1, 8, 0.5, 0, 1, 0},
		{"busy at one P doubles", 1, 8, 0.8, 3, 2, 0},
		{"busy at two Ps doubles", 2, 8, 1.6, 0, 4, 0},
		{"doubling stops at max", 4, 6, 3.9, 0, 6, 0},
		{"busy at max stays", 2, 2, 1.9, 0, 2, 0},
		{"load that fits stays", 4, 8, 1.8, 5, 4, 0},
		{"fewer wanted: not yet", 4, 8, 0.9, 0, 4, 1},
		{"fewer wanted: still not", 4, 8, 0.9, calmSamples - 2, 4, calmSamples - 1},
		{"fewer wanted long enough", 4, 8, 0.9, calmSamples - 1, 2, 0},
		{"idle long enough goes to one", 8, 8, 0.05, calmSamples - 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calm := tt.calm
			if got := decide(tt.cur, tt.max, tt.load, &calm); got != tt.want || calm != tt.wantCalm {
				t.Errorf("decide(%d, %d, %.2f, calm %d): got %d (calm %d), want %d (calm %d)",
					tt.cur, tt.max, tt.load, tt.calm, got, calm, tt.want, tt.wantCalm)
			}
		})
	}
}

// fakeProcess is a process whose CPU use is load Ps' worth, on the
// bubble's clock.
type fakeProcess struct {
	mu    sync.Mutex
	load  float64
	used  time.Duration
	at    time.Time
	procs []int // every value set, in order
}

func (p *fakeProcess) cpu() (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.used += time.Duration(p.load * float64(now.Sub(p.at)))
	p.at = now
	return p.used, true
}

func (p *fakeProcess) setLoad(l float64) {
	p.cpu() // account for the time at the old load
	p.mu.Lock()
	p.load = l
	p.mu.Unlock()
}

func (p *fakeProcess) set(n int) {
	p.mu.Lock()
	p.procs = append(p.procs, n)
	p.mu.Unlock()
}

func (p *fakeProcess) current() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.procs[len(p.procs)-1]
}

func TestRunFollowsTheLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeProcess{at: time.Now()}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, Options{Max: 8, Interval: 100 * time.Millisecond, cpu: p.cpu, set: p.set})
		}()
		stopped := false
		defer func() {
			if !stopped {
				cancel()
				<-done
			}
		}()
		step := func(d time.Duration) {
			time.Sleep(d)
			synctest.Wait()
		}

		step(time.Second)
		if got := p.current(); got != 1 {
			t.Fatalf("idle: got %d Ps, want 1", got)
		}

		// A busy P: doubled within a sample or two, up to what the load
		// keeps busy.
		p.setLoad(0.95)
		step(250 * time.Millisecond)
		if got := p.current(); got != 2 {
			t.Fatalf("one P busy: got %d Ps, want 2", got)
		}
		p.setLoad(3.9)
		step(500 * time.Millisecond)
		if got := p.current(); got != 8 {
			t.Fatalf("3.9 Ps' worth of load: got %d Ps, want 8 (4 was busy too)", got)
		}

		// Load falls: Ps go only after calmSamples samples.
		p.setLoad(0.9)
		step(time.Duration(calmSamples-2) * 100 * time.Millisecond)
		if got := p.current(); got != 8 {
			t.Fatalf("load fell %d samples ago: got %d Ps, want still 8", calmSamples-2, got)
		}
		step(time.Second)
		if got := p.current(); got != 2 {
			t.Fatalf("load 0.9 for a while: got %d Ps, want 2", got)
		}

		cancel()
		<-done
		stopped = true
		if got, want := p.current(), runtime.GOMAXPROCS(0); got != want {
			t.Errorf("after Run: got %d Ps set, want the runtime's %d restored", got, want)
		}
	})
}

func TestRunWithOneCPUDoesNothing(t *testing.T) {
	p := &fakeProcess{at: time.Now()}
	Run(context.Background(), Options{Max: 1, cpu: p.cpu, set: p.set})
	if len(p.procs) != 0 {
		t.Errorf("got GOMAXPROCS set to %v, want it left alone with one CPU", p.procs)
	}
}

func TestCPUTime(t *testing.T) {
	before, ok := cpuTime()
	if !ok {
		t.Skip("no process CPU clock (getrusage) on " + runtime.GOOS + ", so the governor is off here (see Enabled); this test runs on unix systems")
	}
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for {
		for i := range 1_000_000 {
			x ^= i
		}
		after, _ := cpuTime()
		if after-before >= 20*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time: got %v more after 10s of spinning, want at least 20ms", after-before)
		}
	}
	_ = x
}

func TestEnabledRespectsGOMAXPROCS(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	if Enabled() {
		t.Error("Enabled with GOMAXPROCS set: got true, want false (the operator chose)")
	}
}
