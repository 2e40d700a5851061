//go:build !linux

package main

import (
	"errors"
	"syscall"
	"time"
)

// errNeedsLinux is why the benchmark cannot measure here: it reads the
// kernel's accounting from /proc.
var errNeedsLinux = errors.New("the gateway benchmark needs Linux: it reads CPU time and memory from /proc")

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) {}

func cpuTime(int) (time.Duration, error) { return 0, errNeedsLinux }

func rss(int) (int64, error) { return 0, errNeedsLinux }

func isExited(int) bool { return false }

func loadAvg() string { return "?" }
