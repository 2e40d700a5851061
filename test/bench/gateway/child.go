package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The environment a child is started with.
const (
	// envRole selects the child's role: roleUpstream, roleGateway,
	// roleProxy or roleRelay.
	envRole = "SWITCHBOARD_BENCH_ROLE"
	// envUpstream is the upstream's base URL, for the gateway, the
	// proxy and the relay.
	envUpstream = "SWITCHBOARD_BENCH_UPSTREAM"
	// envServers is how many of the upstream's endpoints the gateway
	// connects to, as that many servers.
	envServers = "SWITCHBOARD_BENCH_SERVERS"
	// envNoFastPath, set to 1, runs the gateway with gateway.fast_path:
	// false.
	envNoFastPath = "SWITCHBOARD_BENCH_NO_FAST_PATH"
)

// Child roles.
const (
	roleUpstream = "upstream"
	roleGateway  = "gateway"
	roleProxy    = "proxy"
	roleRelay    = "relay"
	roleLean     = "lean"
)

// The line protocol between the orchestrator and a child. The child
// writes "ready <address>" on stdout once it serves; then it answers each
// command line on stdin with "ok" or "error <message>". It shuts down
// when stdin closes.
const (
	lineReady         = "ready"
	lineOK            = "ok"
	lineError         = "error"
	cmdProfileStart   = "cpu-profile-start" // followed by the file to write
	cmdProfileStop    = "cpu-profile-stop"
	cmdTraceStart     = "trace-start" // followed by the file to write
	cmdTraceStop      = "trace-stop"
	childStartTimeout = 60 * time.Second
	childReplyTimeout = 30 * time.Second
	childStopTimeout  = 15 * time.Second
)

// child is a running child process of this binary.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string   // stdout, line by line; closed when stdout ends
	tail  *tailBuffer   // the end of stderr, for error messages
	done  chan struct{} // closed when the process has been waited for
	// Addr is what the child printed after "ready".
	Addr string

	stopOnce sync.Once
}

// startChild runs this binary in role with env added, and waits for it
// to report that it serves.
func startChild(name, role string, env ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the %s: finding this program: %w", name, err)
	}
	c := &child{name: name, lines: make(chan string, 64), tail: &tailBuffer{max: 4 << 10}, done: make(chan struct{})}
	c.cmd = exec.Command(exe)
	c.cmd.Env = append(append(os.Environ(), envRole+"="+role), env...)
	c.cmd.Stdout = &lineWriter{ch: c.lines}
	c.cmd.Stderr = c.tail
	c.cmd.SysProcAttr = sysProcAttr()
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("starting the %s: %w", name, err)
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s (%s): %w", name, exe, err)
	}
	go func() {
		_ = c.cmd.Wait()
		close(c.lines)
		close(c.done)
	}()
	line, err := c.readLine(childStartTimeout)
	if err != nil {
		c.stop()
		return nil, fmt.Errorf("starting the %s: %w", name, err)
	}
	addr, ok := strings.CutPrefix(line, lineReady+" ")
	if !ok {
		c.stop()
		return nil, fmt.Errorf("starting the %s: it said %q, want %q%s", name, line, lineReady+" <address>", c.stderrNote())
	}
	c.Addr = addr
	return c, nil
}

// PID returns the child's process id.
func (c *child) PID() int { return c.cmd.Process.Pid }

// readLine returns the child's next stdout line.
func (c *child) readLine(timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-c.lines:
		if !ok {
			<-c.done
			return "", fmt.Errorf("it exited (%v)%s", c.cmd.ProcessState, c.stderrNote())
		}
		return line, nil
	case <-t.C:
		return "", fmt.Errorf("no answer within %s%s", timeout, c.stderrNote())
	}
}

// command sends one command line and waits for the child's answer.
func (c *child) command(args ...string) error {
	line := strings.Join(args, " ")
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return fmt.Errorf("telling the %s %q: %w", c.name, line, err)
	}
	reply, err := c.readLine(childReplyTimeout)
	if err != nil {
		return fmt.Errorf("telling the %s %q: %w", c.name, line, err)
	}
	if msg, ok := strings.CutPrefix(reply, lineError+" "); ok {
		return fmt.Errorf("the %s refused %q: %s", c.name, line, msg)
	}
	if reply != lineOK {
		return fmt.Errorf("telling the %s %q: it said %q, want %q", c.name, line, reply, lineOK)
	}
	return nil
}

// stop closes the child's stdin, which asks it to shut down, and kills
// its process group if it has not exited within childStopTimeout.
func (c *child) stop() {
	c.stopOnce.Do(func() {
		c.stdin.Close()
		t := time.NewTimer(childStopTimeout)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			killGroup(c.cmd.Process.Pid)
			<-c.done
		}
		// Anything the child started in its group goes with it.
		killGroup(c.cmd.Process.Pid)
	})
}

// stderrNote is the end of the child's stderr, for an error message.
func (c *child) stderrNote() string {
	s := strings.TrimSpace(c.tail.String())
	if s == "" {
		return ""
	}
	return "; its stderr ends:\n" + s
}

// lineWriter sends what is written to it, line by line, to ch. Lines
// nobody reads are dropped once ch is full, so that a child never blocks
// on its stdout.
type lineWriter struct {
	ch  chan<- string
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		select {
		case w.ch <- line:
		default:
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// serveCommands is the child's side of the protocol: it answers command
// lines on stdin until stdin closes. profile handles the profiling
// commands.
func serveCommands(stdin io.Reader, stdout io.Writer, profile *profiler) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		var err error
		switch cmd {
		case cmdProfileStart:
			err = profile.startCPU(arg)
		case cmdProfileStop:
			err = profile.stopCPU()
		case cmdTraceStart:
			err = profile.startTrace(arg)
		case cmdTraceStop:
			err = profile.stopTrace()
		default:
			err = fmt.Errorf("unknown command %q", cmd)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s %s\n", lineError, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Fprintln(stdout, lineOK)
	}
}

// errNoProfile is returned when a profile is stopped that never started;
// errNoTrace, the same for an execution trace.
var (
	errNoProfile = errors.New("no CPU profile is running")
	errNoTrace   = errors.New("no execution trace is running")
)
