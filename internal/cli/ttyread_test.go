//go:build unix

package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// TestTerminalQuestionGivenUp: on a real pseudo-terminal, a question
// whose context ends while a half-typed answer waits returns at once,
// leaves no read pending and discards what was typed, so that the next
// question gets only what is typed after it; the terminal's state is as
// before.
func TestTerminalQuestionGivenUp(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	go func() { _, _ = io.Copy(io.Discard, ptmx) }() // the echo
	before, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	q := newTerminalAsker(tty, io.Discard)

	if _, err := io.WriteString(ptmx, "abc"); err != nil { // no Enter
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := q.lineCtx(ctx)
		got <- err
	}()
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the given-up question returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the question did not return when its context ended")
	}
	if q.pending != nil {
		t.Error("a read was left pending")
	}
	after, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Error("the terminal's state changed")
	}

	if _, err := io.WriteString(ptmx, "xyz\r"); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	s, err := q.lineCtx(ctx2)
	if err != nil || s != "xyz" {
		t.Errorf("the next question read %q, %v; want \"xyz\" only", s, err)
	}
}

// TestAnswerTimeoutOnATerminal: --answer-timeout declines a form nobody
// answers, saying why, and the server gets the decline; the call goes on.
func TestAnswerTimeoutOnATerminal(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	p := startOnPTY(t, nil, "call", "--config", cfg, "--answer-timeout", "1s", "asks", "ask")
	p.expect("Login (login)")
	out := p.succeeds("call")
	wantContains(t, "the output", out, `no answer within 1s (--answer-timeout); asks's question "Sign up for the trip" declined`, `{"action":"decline"}`)
}

// TestAnswerTimeoutFlag: a negative --answer-timeout is a usage error
// naming the flag.
func TestAnswerTimeoutFlag(t *testing.T) {
	t.Parallel()
	cfg := asksConfig(t, nil)
	r := runCLI(t, "call", "--config", cfg, "--answer-timeout", "-1s", "asks", "ask")
	wantCode(t, r, ExitUsage)
	if !strings.Contains(r.stderr, "--answer-timeout -1s is negative") {
		t.Errorf("stderr: %s", r.stderr)
	}
}
