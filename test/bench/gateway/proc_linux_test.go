package main

import (
	"os"
	"testing"
	"time"
)

func TestProcAccounting(t *testing.T) {
	pid := os.Getpid()
	before, err := cpuTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel has counted at least five ticks.
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for {
		for i := range 1_000_000 {
			x ^= i
		}
		after, err := cpuTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 5*clockTick {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time: got %v more after 10s of spinning, want at least %v", after-before, 5*clockTick)
		}
	}
	_ = x
	n, err := rss(pid)
	if err != nil {
		t.Fatal(err)
	}
	if n < 1<<20 {
		t.Errorf("RSS: got %d bytes, want at least 1 MiB", n)
	}
}
