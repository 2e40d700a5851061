package daemon

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stdio server that sends progress faster than the client reads it
// does not have the daemon queue every notification: while the client
// does not read, the newest progress replaces the one waiting, and when
// the client reads its stream it gets fewer notifications than were
// sent, in order, the last one before the result.
func TestUpstreamFloodIsCoalesced(t *testing.T) {
	t.Parallel()
	const steps = 50000 // about 10 MB of events: more than the sockets' buffers hold
	cfg := testConfig(okServer(t, "ok"))
	cfg.Gateway.WriteTimeout = 2 * time.Minute // the client reads late, not never
	r := start(t, cfg)
	s := newRawSession(t, r.url+"/mcp", nil)
	s.waitListed("ok__progress")
	c, err := r.d.pool.Client("ok")
	if err != nil {
		t.Fatal(err)
	}

	addr := strings.TrimPrefix(r.url, "http://")
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ok__progress","arguments":{"steps":%d},"_meta":{"progressToken":"flood"}}}`, steps)
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", addr, s.id, len(body), body)

	// The daemon has read everything the server sent, the client nothing.
	// (Longer than eventually's 20 s: under -race on shared CPUs the
	// server's 50,000 steps take a while.)
	for deadline := time.Now().Add(90 * time.Second); ; {
		read, handed := c.HeldNotifications()
		if read >= steps {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon read %d of the server's %d notifications (handed %d to the SDK) in 90 s", read, steps, handed)
		}
		time.Sleep(10 * time.Millisecond) // polling a counter: nothing to wait on
	}

	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	events := sseData(t, readAll(t, resp))
	var progress []float64
	result := -1
	for i, e := range events {
		if e["method"] == "notifications/progress" {
			p, _ := e["params"].(map[string]any)
			progress = append(progress, p["progress"].(float64))
		}
		if e["id"] != nil {
			result = i
			if i != len(events)-1 {
				t.Errorf("the result is event %d of %d, want the last", i+1, len(events))
			}
		}
	}
	read, handed := c.HeldNotifications()
	t.Logf("%d events, %d of them progress; the daemon read %d messages and handed %d notifications to the SDK", len(events), len(progress), read, handed)
	if result < 0 {
		t.Fatalf("no result among %d events", len(events))
	}
	if len(progress) == 0 || progress[len(progress)-1] != steps {
		t.Fatalf("got %d progress notifications, the last %v, want the last to be %d", len(progress), progress[max(0, len(progress)-1):], steps)
	}
	if len(progress) >= steps {
		t.Errorf("got all %d progress notifications: none coalesced", len(progress))
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] {
			t.Fatalf("progress out of order at %d: %v then %v", i, progress[i-1], progress[i])
		}
	}
}
