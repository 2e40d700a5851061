package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyRun is a switchboard command running on a pseudo-terminal, driven
// like a person would: wait for a prompt, type an answer.
type ptyRun struct {
	t    *testing.T
	tty  *os.File // the terminal's other end, where the person types
	out  syncBuffer
	seen int // how much of out expect has consumed
	done chan error
	read sync.WaitGroup
}

// startOnPTY runs switchboard with args on a new pseudo-terminal (its
// standard input, output and error), in t's environment with env
// ("NAME=value") over it and a working directory of its own.
//
// It runs in this process, as Main does: the command reads the terminal
// from its invocation, not from the process (run, invocation), so a child
// process would add nothing but its start, the race-built test binary's
// (about 0.3 s of CPU, ~20 runs a package).
func startOnPTY(t *testing.T, env []string, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 200}); err != nil {
		ptmx.Close()
		tty.Close()
		t.Fatalf("sizing the pseudo-terminal: %v", err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	inv := invocation{args: args, stdin: tty, stdout: tty, stderr: tty, env: withVars(envOf(t), vars), dir: t.TempDir()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	p := &ptyRun{t: t, tty: ptmx, done: make(chan error, 1)}
	p.read.Go(func() { _, _ = io.Copy(&p.out, ptmx) })
	go func() {
		var err error
		if code := run(ctx, inv); code != ExitOK {
			err = fmt.Errorf("exit code %d", code)
		}
		// The reader gets the rest of the output, then EIO: nothing else
		// holds the terminal's command end.
		tty.Close()
		p.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		ptmx.Close() // a command still reading the terminal gets an error
		<-p.done
		p.read.Wait()
	})
	return p
}

// expect waits until the output after what was already expected contains
// s.
func (p *ptyRun) expect(s string) {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := p.out.String()
		if i := strings.Index(out[p.seen:], s); i >= 0 {
			p.seen += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q on the terminal; it shows:\n%s", s, out)
		}
		select {
		case err := <-p.done:
			p.done <- err
			if !strings.Contains(p.out.String()[p.seen:], s) {
				p.read.Wait()
				if !strings.Contains(p.out.String()[p.seen:], s) {
					p.t.Fatalf("the command ended (%v) without %q; the terminal shows:\n%s", err, s, p.out.String())
				}
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// send types a line.
func (p *ptyRun) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.tty, line+"\r"); err != nil {
		p.t.Fatalf("typing %q: %v", line, err)
	}
}

// answer waits for prompt, as expect does, and types line.
func (p *ptyRun) answer(prompt, line string) {
	p.t.Helper()
	p.expect(prompt)
	p.send(line)
}

// succeeds waits for the command to end, fails the test unless it
// succeeded, and returns its output; what names the command in the
// failure.
func (p *ptyRun) succeeds(what string) string {
	p.t.Helper()
	out, err := p.wait()
	if err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return out
}

// wait waits for the command to end and returns its output.
func (p *ptyRun) wait() (string, error) {
	p.t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		p.read.Wait()
		return p.out.String(), err
	case <-time.After(90 * time.Second):
		p.t.Fatalf("the command did not end; the terminal shows:\n%s", p.out.String())
		return "", nil
	}
}
