package soak_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
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

// daemon is a real `switchboard serve` process.
type daemon struct {
	bin, config, state string
	url                string
	token              map[string]string // user → bearer token
	cmd                *exec.Cmd
	logPath            string
	done               chan struct{} // closed once the process has exited
}

// buildSwitchboard builds the switchboard binary into a temporary folder.
func buildSwitchboard(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "switchboard")
	build := exec.Command("go", "build", "-o", bin, "github.com/switchboard-mcp/switchboard/cmd/switchboard")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building switchboard: %v\n%s", err, out)
	}
	return bin
}

// start runs the daemon and waits until /readyz says every server is
// connected.
func (d *daemon) start(t *testing.T, env []string) {
	t.Helper()
	d.logPath = filepath.Join(t.TempDir(), "daemon.log")
	logf, err := os.Create(d.logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	d.cmd = exec.Command(d.bin, "serve", "--config", d.config, "--state-dir", d.state, "--listen", "127.0.0.1:0", "--log-level", "warn")
	d.cmd.Env = append(os.Environ(), env...)
	d.cmd.Stderr = logf
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the cleanup's kill reaches its upstreams too
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting %s serve: %v", d.bin, err)
	}
	d.done = make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// "gateway: http://127.0.0.1:PORT/mcp (streamable HTTP), ..."
			if rest, ok := strings.CutPrefix(sc.Text(), "gateway: "); ok {
				u, _, _ := strings.Cut(rest, " ")
				select {
				case urls <- strings.TrimSuffix(u, "/mcp"):
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	})
	select {
	case d.url = <-urls:
	case <-d.done:
		t.Fatalf("the daemon exited before it served: %v\n%s", d.cmd.ProcessState, d.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("the daemon printed no gateway address within 60s\n%s", d.log())
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(d.url + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the daemon was not ready within 60s: %s\n%s", body, d.log())
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("the daemon's /readyz did not answer within 60s: %v\n%s", err, d.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit, which flushes the history.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stopping the daemon: %v", err)
	}
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the daemon did not stop within 60s of SIGTERM\n%s", d.log())
	}
	if !d.cmd.ProcessState.Success() {
		t.Errorf("the daemon exited with %v after SIGTERM, want 0\n%s", d.cmd.ProcessState, d.log())
	}
}

// log returns the last lines of the daemon's stderr.
func (d *daemon) log() string {
	b, _ := os.ReadFile(d.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "daemon log (last lines):\n" + strings.Join(lines, "\n")
}

// metrics scrapes /metrics and returns each sample's value by its name
// with labels as written (`go_goroutines`, `switchboard_upstream_up{server="alpha"}`).
func (d *daemon) metrics(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token["alice"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping /metrics: HTTP %s", resp.Status)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, sc.Err()
}

// sumPrefix adds the values of the samples whose name with labels starts
// with prefix.
func sumPrefix(m map[string]float64, prefix string) float64 {
	var s float64
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			s += v
		}
	}
	return s
}

// rss returns VmRSS of pid in bytes.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// openFDs counts the open file descriptors of pid.
func openFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents), err
}

// proc is a process in /proc.
type proc struct {
	pid    int
	state  string // R, S, Z, ...
	exe    string
	zombie bool
}

// children lists the child processes of pid.
func children(pid int) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != pid {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p))
		out = append(out, proc{pid: p, state: f[0], exe: exe, zombie: f[0] == "Z"})
	}
	return out
}

// events is the run's log of what the soak did to the daemon.
type events struct {
	mu    sync.Mutex
	start time.Time
	list  []string
	at    []time.Duration
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.at = append(e.at, time.Since(e.start))
	e.list = append(e.list, fmt.Sprintf(format, args...))
}
