package daemon

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A client that sends its headers and then trickles its body (a slow
// loris on the body) is cut off, and the daemon says so; a call whose body
// arrived is not cut by the deadline however long it then runs.
// Not parallel: it shortens bodyGrace for the package.
func TestSlowRequestBodyIsCutOff(t *testing.T) {
	old := bodyGrace
	bodyGrace = 500 * time.Millisecond
	defer func() { bodyGrace = old }()

	var logs lockedBuffer
	r := start(t, testConfig(okHTTPServer(t, "alpha")), func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	addr := strings.TrimPrefix(r.url, "http://")

	// Two clients that stall after the first byte of their bodies.
	head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
	var conns []net.Conn
	for range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	// Without a bound on the body's time the daemon waits for the other
	// 999 bytes for ever; with it, it closes the connection.
	for _, conn := range conns {
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, err := io.Copy(io.Discard, conn); err != nil {
			t.Fatalf("reading until the daemon closes the connection: %v (want it closed within the body's time)", err)
		}
	}
	eventually(t, "the daemon counts the refused bodies", func() bool { return r.d.bodies.refused.Load() == 2 })
	if !strings.Contains(logs.String(), "refused a request whose body did not arrive in time") {
		t.Errorf("log: got\n%s\nwant a line saying a slow body was refused", logs.String())
	}

	// A call that runs longer than the body's time after its body arrived
	// is answered: the deadline was lifted.
	cs := r.connect(t, "/mcp", nil, nil)
	res := call(t, cs, "alpha__slow", map[string]any{"seconds": 1.5})
	if res.IsError || textOf(res) != "done" {
		t.Errorf("slow call: got %q (isError %v), want done", textOf(res), res.IsError)
	}
	if n := r.d.bodies.refused.Load(); n != 2 {
		t.Errorf("refused bodies: got %d, want still 2", n)
	}
	// The second refusal, not logged on its own, is counted in the log
	// by the time the daemon stops.
	r.stop(t)
	if !strings.Contains(logs.String(), "refused more requests whose bodies did not arrive in time") || !strings.Contains(logs.String(), "refused=1") {
		t.Errorf("log: got\n%s\nwant the second refusal counted", logs.String())
	}
}

// A kept-alive connection on which nothing more is asked is closed after
// idleTimeout, not held for ever. Not parallel: it shortens idleTimeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	old := idleTimeout
	idleTimeout = 500 * time.Millisecond
	defer func() { idleTimeout = old }()
	r := start(t, testConfig())
	addr := strings.TrimPrefix(r.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("reading until the daemon closes the idle connection: %v", err)
	}
	if !strings.HasPrefix(string(b), "HTTP/1.1 200") {
		t.Errorf("answer: got %q, want 200", b)
	}
}
