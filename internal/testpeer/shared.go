package testpeer

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Shared returns what start returns (a peer's URL), started once per test
// binary under the name what and handed to every test that asks for it, so
// that tests whose point is not a fresh process share one peer (a node peer
// costs about a second of CPU to start). Each test still opens its own
// sessions on it. The peer lives until [StopShared], which a binary that uses
// Shared calls from TestMain after m.Run; tests about the process itself
// (restarts, exits, stderr) start their own.
//
// start runs with a testing.TB of the binary's, not the caller's: its
// Cleanup functions run at StopShared, its TempDir lasts as long, and a
// Fatal fails this caller and every later one with the same message.
// Setenv, Chdir and Skip are not for shared peers and fail them.
func Shared(t testing.TB, what string, start func(testing.TB) string) string {
	t.Helper()
	shared.mu.Lock()
	p, ok := shared.peers[what]
	if !ok {
		p = &sharedPeer{tb: &processTB{name: what}}
		p.tb.ctx, p.tb.cancel = context.WithCancel(context.Background())
		if shared.peers == nil {
			shared.peers = map[string]*sharedPeer{}
		}
		shared.peers[what] = p
		shared.order = append(shared.order, p)
	}
	shared.mu.Unlock()
	p.once.Do(func() {
		done := make(chan struct{})
		go func() { // a Fatal ends this goroutine, not the caller's
			defer close(done)
			p.value = start(p.tb)
		}()
		<-done
	})
	if msg := p.tb.failure(); msg != "" {
		t.Fatalf("testpeer: the shared %s did not start: %s", what, msg)
	}
	return p.value
}

// StopShared stops the peers [Shared] started, last first, and removes
// their temporary directories.
func StopShared() {
	shared.mu.Lock()
	peers := shared.order
	shared.peers, shared.order = nil, nil
	shared.mu.Unlock()
	for i := len(peers) - 1; i >= 0; i-- {
		peers[i].tb.stop()
	}
}

// shared holds the binary's shared peers by name.
var shared struct {
	mu    sync.Mutex
	peers map[string]*sharedPeer
	order []*sharedPeer // in the order they were asked for
}

type sharedPeer struct {
	once  sync.Once
	tb    *processTB
	value string
}

// processTB is the testing.TB a shared peer is started with: it belongs to
// the test binary rather than to a test. The embedded TB is nil; it is
// there for testing.TB's unexported method, which only package testing
// calls.
type processTB struct {
	testing.TB
	name   string
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	logs     strings.Builder
	failed   string // why it failed, or ""
}

var _ testing.TB = (*processTB)(nil)

func (p *processTB) Helper()      {}
func (p *processTB) Name() string { return "shared " + p.name }

func (p *processTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

func (p *processTB) Context() context.Context { return p.ctx }

func (p *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", "testpeer-shared")
	if err != nil {
		p.Fatalf("making a temporary directory: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dirs = append(p.dirs, dir)
	return dir
}

func (p *processTB) ArtifactDir() string { return p.TempDir() }
func (p *processTB) Attr(string, string) {}
func (p *processTB) Output() io.Writer   { return p }

// Write keeps what the peer's start logs, for a failure message.
func (p *processTB) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logs.Len() < outputLimit {
		p.logs.Write(b)
	}
	return len(b), nil
}

func (p *processTB) Log(args ...any) { fmt.Fprintln(p, args...) }
func (p *processTB) Logf(format string, args ...any) {
	fmt.Fprintf(p, format+"\n", args...)
}

func (p *processTB) fail(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == "" {
		p.failed = msg
	}
}

func (p *processTB) Fail()             { p.fail("failed") }
func (p *processTB) Failed() bool      { return p.failure() != "" }
func (p *processTB) Error(args ...any) { p.fail(fmt.Sprint(args...)) }
func (p *processTB) Errorf(format string, args ...any) {
	p.fail(fmt.Sprintf(format, args...))
}
func (p *processTB) FailNow() {
	p.Fail()
	runtime.Goexit()
}
func (p *processTB) Fatal(args ...any) {
	p.Error(args...)
	runtime.Goexit()
}
func (p *processTB) Fatalf(format string, args ...any) {
	p.Errorf(format, args...)
	runtime.Goexit()
}

func (p *processTB) Setenv(key, _ string) {
	p.Fatalf("Setenv(%s) changes the whole binary's environment: a shared peer cannot", key)
}
func (p *processTB) Chdir(dir string) {
	p.Fatalf("Chdir(%s) changes the whole binary's directory: a shared peer cannot", dir)
}
func (p *processTB) Skip(args ...any) { p.Fatal(append([]any{"skipped:"}, args...)...) }
func (p *processTB) SkipNow()         { p.Fatal("skipped") }
func (p *processTB) Skipf(format string, args ...any) {
	p.Fatalf("skipped: "+format, args...)
}
func (p *processTB) Skipped() bool { return false }

// failure returns why the start failed, with what it logged, or "".
func (p *processTB) failure() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == "" {
		return ""
	}
	if p.logs.Len() == 0 {
		return p.failed
	}
	return p.failed + "\n" + p.logs.String()
}

// stop runs the cleanups, last first, and removes the temporary
// directories.
func (p *processTB) stop() {
	p.cancel()
	p.mu.Lock()
	cleanups, dirs := p.cleanups, p.dirs
	p.cleanups, p.dirs = nil, nil
	p.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}
