//go:build unix && !linux

package store_test

import "syscall"

// childProcAttr: no parent-death signal outside Linux; the crash tests
// kill their child themselves.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
