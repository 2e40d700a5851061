package testpeer

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Limits for StartEverything. Node takes about half a second to start here;
// the timeout is generous because tests run it while the race detector loads
// both cores.
const (
	startAttempts = 3                // ports tried before giving up
	startTimeout  = 60 * time.Second // per attempt, until the child listens
	pollInterval  = 25 * time.Millisecond
	stopGrace     = 5 * time.Second // between SIGTERM and SIGKILL on cleanup
	outputLimit   = 64 << 10        // bytes of the child's output kept for failure messages
)

// httpPaths maps the HTTP modes of server-everything to their endpoint path.
var httpPaths = map[string]string{
	"sse":            "/sse",
	"streamableHttp": "/mcp",
}

// StartEverything runs server-everything over HTTP for the rest of the test
// and returns its endpoint URL: http://127.0.0.1:PORT/sse for mode "sse",
// http://127.0.0.1:PORT/mcp for mode "streamableHttp". It returns once the
// server accepts connections. Cleanup stops the server and its process group.
func StartEverything(t testing.TB, mode string) string {
	t.Helper()
	return startEverything(t, mode).url
}

// Everything is a server-everything child over HTTP that a test can
// restart on the same port, as a deploy restarts a server: the new
// process knows none of the old one's sessions.
type Everything struct {
	// URL is the endpoint, the same across restarts.
	URL  string
	t    testing.TB
	mode string
	port int
	p    *peer
}

// StartRestartableEverything runs server-everything over HTTP, as
// [StartEverything] does, and returns it for [Everything.Restart].
func StartRestartableEverything(t testing.TB, mode string) *Everything {
	t.Helper()
	p := startEverything(t, mode)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatalf("testpeer: %v", err)
	}
	port, _ := strconv.Atoi(u.Port())
	return &Everything{URL: p.url, t: t, mode: mode, port: port, p: p}
}

// Restart stops the server (SIGTERM to its process group, then SIGKILL)
// and starts a new one on the same port; it returns once the new one
// listens.
func (e *Everything) Restart() {
	e.t.Helper()
	e.p.stop()
	node, script := Node(e.t), entry(e.t, "server-everything")
	deadline := time.Now().Add(startTimeout)
	for {
		p, err := spawn(e.t, node, []string{script, e.mode}, []string{"PORT=" + strconv.Itoa(e.port)})
		if err != nil {
			e.t.Fatalf("testpeer: restarting server-everything %s: %v", e.mode, err)
		}
		err = p.waitListening(e.port, deadline)
		if err == nil {
			e.p = p
			return
		}
		p.stop()
		// The old process's port may linger a moment; another process
		// taking it would not go away.
		if !errors.Is(err, errExited) || time.Now().After(deadline) {
			e.t.Fatalf("testpeer: server-everything %s did not start again on port %d: %v; output:\n%s", e.mode, e.port, err, p.out)
		}
	}
}

// peer is a running server-everything child.
type peer struct {
	url  string
	cmd  *exec.Cmd
	out  *tailBuffer
	done chan struct{} // closed once cmd.Wait has returned
	err  error         // cmd.Wait's result; read only after done is closed
	stop func()        // kills the process group and waits; safe to call twice
}

func startEverything(t testing.TB, mode string) *peer {
	t.Helper()
	path, ok := httpPaths[mode]
	if !ok {
		t.Fatalf("testpeer: StartEverything: unknown mode %q, want \"sse\" or \"streamableHttp\"", mode)
	}
	node, script := Node(t), entry(t, "server-everything")

	var failures []string
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testpeer: finding a free port for server-everything: %v", err)
		}
		p, err := spawn(t, node, []string{script, mode}, []string{"PORT=" + strconv.Itoa(port)})
		if err != nil {
			t.Fatalf("testpeer: starting server-everything %s: %v", mode, err)
		}
		err = p.waitListening(port, time.Now().Add(startTimeout))
		if err == nil {
			p.url = fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
			return p
		}
		p.stop()
		failures = append(failures, fmt.Sprintf("attempt %d on port %d: %v; output:\n%s", attempt, port, err, p.out))
		if !errors.Is(err, errExited) {
			break // a timeout will not get better on another port
		}
	}
	t.Fatalf("testpeer: server-everything %s did not start:\n%s", mode, strings.Join(failures, "\n"))
	return nil
}

// errExited marks a child that exited before it listened, most likely
// because another process took its port first.
var errExited = errors.New("exited before listening")

// spawn starts node with args in its own process group, with env added to
// the environment, and registers its cleanup.
func spawn(t testing.TB, node string, args, env []string) (*peer, error) {
	return spawnCmd(t, exec.Command(node, args...), env)
}

// spawnCmd starts cmd in its own process group, with env added to the
// environment, and registers its cleanup.
func spawnCmd(t testing.TB, cmd *exec.Cmd, env []string) (*peer, error) {
	p := &peer{out: &tailBuffer{limit: outputLimit}, done: make(chan struct{})}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = stopGrace // should a grandchild hold the output pipes open
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cmd = cmd
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	p.stop = sync.OnceFunc(func() {
		pgid := cmd.Process.Pid // Setpgid made the child its group's leader
		select {
		case <-p.done:
			// Already reaped, so the group id may be reused: signal nothing.
			return
		default:
		}
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	})
	t.Cleanup(p.stop)
	return p, nil
}

// waitListening polls until the child holds a socket listening on port and
// that port accepts a connection on 127.0.0.1, or the child exits, or the
// deadline passes. Checking that the listener is the child's own matters: the
// server's "listening" line is printed on a failed listen too, and in sse
// mode the child then exits 0, so a connection alone could reach whichever
// process took the port. The check reads /proc's socket tables, which list
// every socket of the machine's network namespace (hundreds while tests run
// side by side): it is made only once the port accepts a connection, not at
// every poll (a refused connection on loopback costs next to nothing).
func (p *peer) waitListening(port int, deadline time.Time) error {
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			if owned, known := listensOn(p.cmd.Process.Pid, port); owned || !known {
				select {
				case <-p.done:
				default:
					return nil
				}
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w (%v)", errExited, p.err)
		case <-ticker.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, startTimeout)
		}
	}
}

// listensOn reports whether process pid has a TCP socket listening on port,
// from /proc. known is false where /proc has no such tables (not Linux).
func listensOn(pid, port int) (owned, known bool) {
	inodes := make(map[string]bool)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		known = true
		lines := strings.Split(string(data), "\n")
		for _, line := range lines[1:] {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A is TCP_LISTEN
				continue
			}
			i := strings.LastIndexByte(f[1], ':')
			if p, err := strconv.ParseUint(f[1][i+1:], 16, 16); err == nil && int(p) == port {
				inodes["socket:["+f[9]+"]"] = true
			}
		}
	}
	if !known || len(inodes) == 0 {
		return false, known
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, true
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && inodes[link] {
			return true, true
		}
	}
	return false, true
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer is an io.Writer keeping the last limit bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.dropped += over
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns what was kept, noting how much was dropped before it.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("[%d bytes dropped]\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}
