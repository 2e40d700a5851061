package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A client that opens connections and leaves them idle, or never finishes
// their headers, cannot use up the gateway's connections: past
// gateway.max_connections a new connection closes the oldest idle one,
// else the oldest unfinished one, so other clients are still served; when
// every connection is serving a request, the new one is answered 503
// naming the key. Without the bound every such connection stayed open
// (a kept-alive one for 2 minutes) until the daemon ran out of file
// descriptors and accepted no one.
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(okHTTPServer(t, "alpha"))
	cfg.Gateway.MaxConnections = 20
	var logs lockedBuffer
	r := start(t, cfg, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	addr := strings.TrimPrefix(r.url, "http://")
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closed reports whether the daemon closed c.
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return errors.Is(err, io.EOF)
	}
	countClosed := func(cs []net.Conn) (n int) {
		for _, c := range cs {
			if closed(c) {
				n++
			}
		}
		return n
	}

	// 30 connections left idle after a request each: the 10 oldest are
	// closed for the newer ones.
	var idle []net.Conn
	for range 30 {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("GET /healthz on connection %d: %v", len(idle), err)
		}
		resp.Body.Close()
		idle = append(idle, c)
	}
	eventually(t, "the daemon closes the 10 oldest idle connections", func() bool { return countClosed(idle[:10]) == 10 })
	if n := countClosed(idle[10:]); n != 0 {
		t.Errorf("newer idle connections closed: got %d, want 0", n)
	}

	// 30 connections that never finish their headers (a slow loris): a
	// client is still served, by closing the oldest of them.
	var loris []net.Conn
	for range 30 {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", addr)
		loris = append(loris, c)
	}
	eventually(t, "a client is served beside 30 unfinished connections", func() bool {
		resp, err := http.Get(r.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if n := countClosed(loris); n == 0 {
		t.Error("unfinished connections closed: got none, want the oldest")
	}
	cs := r.connect(t, "/mcp", nil, nil)
	if res := call(t, cs, "alpha__echo", map[string]any{"message": "hi"}); res.IsError {
		t.Fatalf("alpha__echo beside the unfinished connections: %s", textOf(res))
	}
	cs.Close()

	// 20 connections each serving a request (a body still to come): the
	// next connection is refused with 503, naming the key.
	for range 20 {
		c := dial()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{", addr)
	}
	// Each is serving once the daemon has read its headers: until then it
	// is one the limit may close (on a loaded machine, past 1 s).
	eventually(t, "the daemon reads the 20 requests' headers", func() bool { return r.d.conns.Load().active() >= 20 })
	var body string
	eventually(t, "a connection over the limit is refused", func() bool {
		c := dial()
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("reading the answer over the limit: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return resp.StatusCode == http.StatusServiceUnavailable
	})
	if !strings.Contains(body, `"code":-32000`) || !strings.Contains(body, "raise gateway.max_connections") {
		t.Errorf("refusal: got %s, want a JSON-RPC error naming gateway.max_connections", body)
	}
	if !strings.Contains(logs.String(), "refused a connection over the connection limit") {
		t.Errorf("log: got\n%s\nwant a line saying a connection was refused", logs.String())
	}
}

// The bound keeps a quarter of the open-file limit (at least 64) for
// everything else, whatever gateway.max_connections says.
func TestConnectionLimitKeepsFilesForTheRest(t *testing.T) {
	t.Parallel()
	n := openFileLimit()
	if n == 0 && runtime.GOOS != "windows" {
		t.Fatalf("openFileLimit: got 0 on %s, want the process's RLIMIT_NOFILE", runtime.GOOS)
	}
	l := newConnLimit(nil, func() int { return 0 }, slog.New(slog.DiscardHandler))
	got, by := l.limit()
	if want := n - max(64, n/4); got != max(want, 16) || !strings.Contains(by, "open-file limit") {
		t.Errorf("limit with max_connections 0: got %d (%s), want %d (the open-file limit's)", got, by, want)
	}
	l = newConnLimit(nil, func() int { return 10 }, slog.New(slog.DiscardHandler))
	if got, by := l.limit(); got != 10 || by != "gateway.max_connections" {
		t.Errorf("limit with max_connections 10: got %d (%s), want 10 (gateway.max_connections)", got, by)
	}
}

// A request whose headers are over maxHeaderBytes is refused with 431
// before the daemon holds more of them (Go's default let each connection
// hold 1 MiB).
func TestHugeHeadersRefused(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig())
	req, _ := http.NewRequest(http.MethodGet, r.url+"/healthz", nil)
	req.Header.Set("X-Pad", strings.Repeat("a", 100<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("100 KiB of headers: got %d, want 431", resp.StatusCode)
	}
	req.Header.Set("X-Pad", strings.Repeat("a", 16<<10))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("16 KiB of headers: got %d, want 200", resp.StatusCode)
	}
}
