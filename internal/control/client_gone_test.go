package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// A daemon that dies while it has a call (SIGKILL, a crash) closes the
// connection before answering: the client says that, and that the call
// may have run, not "Post http://switchboard/v1/call: EOF" with advice
// to start a daemon that was running.
func TestClientSaysTheDaemonWentAwayMidCall(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(shortDir(t), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		// Read the whole request, then die without a word.
		if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
			_ = req.Body.Close()
		}
		conn.Close()
	}()
	c := control.Dial(sock)
	defer c.Close()
	_, err = c.Call(context.Background(), control.CallRequest{Server: "alpha", Tool: "slow", Arguments: json.RawMessage(`{}`), Source: "cli"})
	<-done
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.Connection {
		t.Fatalf("got %v, want a connection error", err)
	}
	for _, want := range []string{"closed the connection before it answered", sock} {
		if !strings.Contains(fe.Message, want) {
			t.Errorf("message: got %q, want it to say %q", fe.Message, want)
		}
	}
	if strings.Contains(err.Error(), "http://switchboard") {
		t.Errorf("message: got %q, want no internal URL", err)
	}
	if s := strings.Join(fe.Suggestions, "; "); !strings.Contains(s, "may have run") || !strings.Contains(s, "switchboard history") {
		t.Errorf("suggestions: got %q, want them to say the call may have run and where to look", s)
	}

	// No daemon at all is still "is it running?".
	ln.Close()
	_, err = control.Dial(sock).Status(context.Background())
	fe = fault.As(err)
	if fe == nil || !strings.Contains(fe.Message, "talking to the switchboard daemon at") ||
		!strings.Contains(strings.Join(fe.Suggestions, "; "), "check that 'switchboard serve' is running") {
		t.Errorf("no daemon: got %v (suggestions %v), want the check-it-is-running advice", err, fe.Suggestions)
	}
}

// A daemon whose history cannot be written, or whose history database
// cannot be reached, says so in its status, over the socket, for
// `switchboard servers` and the console to tell the operator.
func TestStatusCarriesHistoryWriteFailures(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(shortDir(t), "d.sock")
	ln, err := control.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 11, 27, 23, 5, 0, 0, time.UTC)
	local := control.NewLocal(control.Components{
		HistoryWriteFailures: func() int64 { return 3 },
		HistoryUnavailable: func() (time.Time, int, error) {
			return since, 12, errors.New("recording 1 calls: connection refused")
		},
	})
	hs := &http.Server{Handler: control.NewHandler(local, nil)}
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(ln) }()
	defer func() { hs.Close(); <-done }()
	c := control.Dial(sock)
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.HistoryWriteFailures != 3 {
		t.Errorf("status: got %d history write failures, want 3", st.HistoryWriteFailures)
	}
	want := &control.HistoryOutage{Since: since, Waiting: 12, Error: "recording 1 calls: connection refused"}
	if o := st.HistoryUnavailable; o == nil || !o.Since.Equal(want.Since) || o.Waiting != want.Waiting || o.Error != want.Error {
		t.Errorf("status: got history unavailable %+v, want %+v", o, want)
	}
}
