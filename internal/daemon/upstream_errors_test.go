package daemon

import (
	"bytes"
	"context"
	"html"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/control"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// syncBuffer is a buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpstreamFailuresSayWhyEverywhere walks a failed connection's cause
// from the transport to each place a person reads it: the control API
// (what `servers` and `servers --json` print), the web console, the
// daemon's state lines and its log. Each says what happened; the API, the
// console and the log also say what to try.
func TestUpstreamFailuresSayWhyEverywhere(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	api := config.Server{Name: "api", Transport: config.TransportHTTP, URL: "http://" + refused + "/mcp",
		ConnectTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second, Enabled: true, LoadTools: true}
	quiet := testserver.Server(t, "quiet", "exit-silent")

	var out, logs syncBuffer
	r := start(t, testConfig(api, quiet), func(o *Options) {
		o.Out = &out
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	want := map[string]struct{ msg, hint string }{
		"api":   {"connection refused by " + refused + " (http://" + refused + "/mcp)", "start the server, or check the host and port in servers.api.url"},
		"quiet": {"exited with code 3 before answering initialize; it wrote nothing to stderr", "run the command by hand to see what it does: "},
	}

	c := control.Dial(control.SocketPath(r.stateDir))
	t.Cleanup(c.Close)
	var infos []control.ServerInfo
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		infos, err = c.Servers(context.Background())
		if err != nil {
			// The control socket may not be up yet.
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
			continue
		}
		failed := 0
		for _, si := range infos {
			if si.LastError != "" {
				failed++
			}
		}
		if failed == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the servers did not both fail within 20s: %+v", infos)
		}
	}
	// The state lines and the log say each failure in their own time,
	// perhaps after the control API has it: wait until they mention
	// every one (what they say is checked below).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		said := true
		for _, w := range want {
			said = said && strings.Contains(out.String(), w.msg) && strings.Contains(logs.String(), w.msg)
		}
		if said {
			break
		}
	}
	_, page := get(t, r.url+"/")
	page = html.UnescapeString(page)
	for _, si := range infos {
		w := want[si.Server]
		if !strings.Contains(si.LastError, w.msg) {
			t.Errorf("%s: the control API's last_error is %q, want it to contain %q", si.Server, si.LastError, w.msg)
		}
		if !strings.Contains(strings.Join(si.Suggestions, "\n"), w.hint) {
			t.Errorf("%s: the control API's suggestions are %q, want one that says %q", si.Server, si.Suggestions, w.hint)
		}
		if !strings.Contains(page, w.msg) || !strings.Contains(page, w.hint) {
			t.Errorf("%s: the console's servers page does not show %q and %q", si.Server, w.msg, w.hint)
		}
		if !strings.Contains(out.String(), si.Server+": ") || !strings.Contains(out.String(), w.msg) {
			t.Errorf("%s: the daemon's state lines %q do not say %q", si.Server, out.String(), w.msg)
		}
		if l := logs.String(); !strings.Contains(l, w.msg) || !strings.Contains(l, w.hint) {
			t.Errorf("%s: the log %q does not say %q and %q", si.Server, l, w.msg, w.hint)
		}
	}
}
