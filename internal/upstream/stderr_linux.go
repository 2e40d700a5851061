package upstream

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A stdio child's stderr is read outside the Go runtime's poller. os/exec
// copies a pipe registered with the poller's epoll (edge-triggered), and
// Linux wakes an epoll waiter on every write to a pipe: a server that
// logs line by line as fast as it can woke the daemon once per line,
// whether or not anyone read — about 8 ms of CPU per MiB, half a core at
// the 60 MiB/s such a server writes (BenchmarkStderrFlood). Here a
// goroutine waits in poll(2) only while the pipe is empty, reads 32 KiB
// at a time, and after a read that emptied the pipe lets stderrPause pass
// before the next, so that a flood is read in a few large reads (the pipe
// is grown to 1 MiB once a read fills, so that the writer need not wait
// for them). The cost is one thread per stdio child, blocked in poll(2)
// while its server is quiet.

// Reading a child's stderr.
const (
	stderrReadBytes = 32 << 10 // io.Copy's buffer, which os/exec used
	stderrPipeBytes = 1 << 20  // what a pipe that filled a read is grown to
	stderrPause     = 2 * time.Millisecond
)

// stderrPipe reads a child's stderr into its tail.
type stderrPipe struct {
	tail     *tailBuffer
	r, w     *os.File // w is the child's end, closed in the parent once it started
	rfd      int
	stop     int // an eventfd that wakes the reader to stop
	stopping atomic.Bool
	done     chan struct{}
	once     sync.Once
}

// pipeStderr gives cmd, whose stderr is a tail, a pipe for it that a
// stderrPipe reads once the child has started (run). It returns nil, and
// leaves cmd as it was (os/exec copies it then), when cmd.Stderr is not a
// tail or the pipe cannot be made.
func pipeStderr(cmd *exec.Cmd) *stderrPipe {
	tail, ok := cmd.Stderr.(*tailBuffer)
	if !ok {
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil
	}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil
	}
	// Non-blocking, so that a read of an empty pipe returns to poll(2),
	// which also watches stop. The file is not the poller's: os.NewFile
	// registers only a descriptor that is already non-blocking.
	r := os.NewFile(uintptr(p[0]), "stderr")
	_ = unix.SetNonblock(p[0], true)
	s := &stderrPipe{tail: tail, r: r, w: os.NewFile(uintptr(p[1]), "stderr"), rfd: p[0], stop: stop, done: make(chan struct{})}
	cmd.Stderr = s.w
	return s
}

// run starts reading, once the child has started; abort is for a child
// that did not start.
func (s *stderrPipe) run() {
	if s == nil {
		return
	}
	_ = s.w.Close()
	go s.read()
}

func (s *stderrPipe) abort() {
	if s == nil {
		return
	}
	_ = s.w.Close()
	_ = s.r.Close()
	close(s.done)
	s.finish(0)
}

func (s *stderrPipe) read() {
	defer close(s.done)
	defer s.r.Close()
	buf := make([]byte, stderrReadBytes)
	grown := false
	fds := []unix.PollFd{{Fd: int32(s.rfd), Events: unix.POLLIN}, {Fd: int32(s.stop), Events: unix.POLLIN}}
	for !s.stopping.Load() {
		n, err := unix.Read(s.rfd, buf)
		if n > 0 {
			s.tail.mu.Lock()
			s.tail.absorb(buf[:n])
			s.tail.mu.Unlock()
		}
		switch {
		case errors.Is(err, unix.EAGAIN):
			if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
		case errors.Is(err, unix.EINTR):
		case err != nil, n == 0: // n == 0: every writer has closed it
			return
		case n < len(buf):
			// The pipe is empty: let what comes next gather in it.
			time.Sleep(stderrPause)
		case !grown:
			grown = true
			_, _ = unix.FcntlInt(uintptr(s.rfd), unix.F_SETPIPE_SZ, stderrPipeBytes)
		}
	}
}

// finish waits up to d for the child's stderr to end (everything that
// holds it, grandchildren too, has closed it), then stops reading, as
// os/exec's WaitDelay does, so that the tail is complete when it can be.
func (s *stderrPipe) finish(d time.Duration) {
	if s == nil {
		return
	}
	s.once.Do(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
			s.stopping.Store(true)
			_, _ = unix.Write(s.stop, []byte{1, 0, 0, 0, 0, 0, 0, 0})
			<-s.done
		}
		_ = unix.Close(s.stop)
	})
}
