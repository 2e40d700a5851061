package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/store"
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

// hungStore is a history whose database never answers: every read waits
// until its context ends.
type hungStore struct{ store.Store }

func (hungStore) Calls(ctx context.Context, _ store.CallFilter) ([]store.CallRecord, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("listing calls: %w", ctx.Err())
}

func (hungStore) Call(ctx context.Context, id string) (store.CallRecord, error) {
	<-ctx.Done()
	return store.CallRecord{}, fmt.Errorf("reading call %s: %w", id, ctx.Err())
}

// A history read whose database does not answer (hung, or the network
// dropping its packets) ends with an error saying so, rather than
// waiting as long as the connection lasts. Not parallel: it shortens the
// package's read timeout.
func TestHistoryReadOfAHungDatabase(t *testing.T) {
	defer control.SetHistoryReadTimeout(200 * time.Millisecond)()
	local := control.NewLocal(control.Components{Store: hungStore{}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := local.History(ctx, store.CallFilter{})
	if fault.KindOf(err) != fault.Timeout || !strings.Contains(err.Error(), "did not answer within 200ms") || ctx.Err() != nil {
		t.Errorf("History from a hung database: got %v, want a timeout saying the database did not answer", err)
	}
	_, err = local.HistoryCall(ctx, "0123abcd")
	if fault.KindOf(err) != fault.Timeout || ctx.Err() != nil {
		t.Errorf("HistoryCall from a hung database: got %v, want a timeout", err)
	}
}
