package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// closedPort returns an address on which nothing listens: a port just
// freed.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns the text of the JSON records logged so far: their
// values, decoded, one record a line.
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		fmt.Fprintln(&out, rec)
	}
	return out.String()
}

// TestConnectFailuresSayWhy: every way a first connection fails leaves a
// last error that says what happened, suggestions that say what to try,
// and the same in the error a caller gets and in the log — never only
// "connecting to NAME". Each cause is a real one: a closed port, an
// unknown host, a plain listener behind https://, HTTP servers answering
// 404, 501 or a web page, a missing executable, children that exit.
func TestConnectFailuresSayWhy(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/unimplemented":
			w.WriteHeader(http.StatusNotImplemented)
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><title>Welcome</title>"))
		}
	}))
	t.Cleanup(web.Close)
	tlsWeb := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsWeb.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail on purpose
	tlsWeb.StartTLS()
	t.Cleanup(tlsWeb.Close)
	emptyPath := t.TempDir()

	// A listener that speaks something other than TLS or HTTP.
	ssh, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ssh.Close() })
	go func() {
		for {
			c, err := ssh.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			c.Close()
		}
	}()
	notExec := filepath.Join(emptyPath, "server.js")
	if err := os.WriteFile(notExec, []byte("console.log('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrongDir := testserver.Server(t, "wrongdir", "ok")
	wrongDir.Cwd = filepath.Join(emptyPath, "gone")

	refused := closedPort(t)
	network := func(name string, tr config.Transport, url string) config.Server {
		return config.Server{Name: name, Transport: tr, URL: url, ConnectTimeout: 10 * time.Second, Enabled: true}
	}
	uvx := config.Server{Name: "fetch", Transport: config.TransportStdio, Command: "uvx", Args: []string{"mcp-server-fetch"},
		Env: map[string]string{"PATH": emptyPath}, ConnectTimeout: 10 * time.Second, Enabled: true}
	absent := config.Server{Name: "absent", Transport: config.TransportStdio, Command: filepath.Join(emptyPath, "server"),
		ConnectTimeout: 10 * time.Second, Enabled: true}
	tests := []struct {
		name      string
		srv       config.Server
		wantMsg   []string
		wantHint  string
		notInMsgs []string
	}{
		{"connection refused", network("api", config.TransportHTTP, "http://"+refused+"/mcp"),
			[]string{"connection refused by " + refused, "http://" + refused + "/mcp"}, "start the server, or check the host and port in servers.api.url", nil},
		{"connection refused, ad hoc", network(config.AdHocName, config.TransportHTTP, "http://"+refused+"/mcp"),
			[]string{"connection refused by " + refused}, "check the host and port in the --url", nil},
		{"unknown host", network("api", config.TransportHTTP, "http://switchboard-test.invalid/mcp"),
			[]string{`no such host "switchboard-test.invalid"`}, "check the host name in servers.api.url", nil},
		{"TLS against plain HTTP", network("api", config.TransportHTTP, "https://"+web.Listener.Addr().String()+"/mcp"),
			[]string{"TLS handshake failed: " + web.Listener.Addr().String() + " answered plain HTTP"}, "use http:// instead of https://", nil},
		{"TLS certificate not trusted", network("api", config.TransportHTTP, tlsWeb.URL+"/mcp"),
			[]string{"TLS handshake failed: the certificate of " + tlsWeb.Listener.Addr().String() + " is not trusted"}, "trust store", nil},
		{"TLS against something else", network("api", config.TransportHTTP, "https://"+ssh.Addr().String()+"/mcp"),
			[]string{"TLS handshake failed: " + ssh.Addr().String() + " did not answer with TLS"}, "check the scheme and port in servers.api.url", nil},
		{"HTTP 404", network("api", config.TransportHTTP, web.URL+"/missing"),
			[]string{"HTTP 404 Not Found from " + web.URL + "/missing: 404 page not found"}, "usually answer at /mcp", nil},
		{"HTTP 501", network("api", config.TransportHTTP, web.URL+"/unimplemented"),
			[]string{"HTTP 501 Not Implemented from " + web.URL + "/unimplemented"}, "set transport: sse", nil},
		{"a web page, not MCP", network("api", config.TransportHTTP, web.URL+"/page"),
			[]string{web.URL + "/page answered with Content-Type text/html; charset=utf-8, not MCP"}, "check the path in servers.api.url", nil},
		{"SSE URL that is no event stream", network("events", config.TransportSSE, web.URL+"/page"),
			[]string{web.URL + "/page is not an event stream (Content-Type text/html; charset=utf-8)"}, "set transport: http", nil},
		{"SSE URL answering 404", network("events", config.TransportSSE, web.URL+"/missing"),
			[]string{"HTTP 404 Not Found from " + web.URL + "/missing"}, "SSE servers at /sse", nil},
		{"uvx not installed", uvx, []string{"executable uvx not found on PATH"}, "install uv", nil},
		{"executable missing", absent, []string{"executable " + absent.Command + " does not exist"}, "check the path in servers.absent.command", nil},
		{"not executable", config.Server{Name: "script", Transport: config.TransportStdio, Command: notExec, ConnectTimeout: 10 * time.Second, Enabled: true},
			[]string{notExec + " is not executable (permission denied)"}, "chmod +x", nil},
		{"working directory missing", wrongDir, []string{"working directory " + wrongDir.Cwd + " does not exist"}, "fix servers.wrongdir.cwd", nil},
		{"exits 3 silently", testserver.Server(t, "quiet", "exit-silent"),
			[]string{"exited with code 3 before answering initialize; it wrote nothing to stderr"}, "run the command by hand", nil},
		{"exits 3 saying why", testserver.Server(t, "loud", "exit"),
			[]string{"fatal: missing API key GIZMO_TOKEN (exited with code 3 before answering initialize)"}, "run the command by hand", []string{"its stderr says"}},
		{"npx of a missing package", testserver.Server(t, "npm", "npm-404"),
			[]string{"npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-nonexistent - Not found (exited with code 1 before answering initialize)"},
			"the package is not in the registry: check its name in servers.npm.args", []string{"A complete log of this run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs lockedBuffer
			s := upstream.NewSupervisor(upstream.SupervisorOptions{
				Server: tt.srv, Once: true,
				Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = s.Run(ctx) }()
			defer func() { cancel(); <-done }()
			wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
			defer wcancel()
			if err := s.WaitSettled(wctx); err != nil {
				t.Fatalf("the attempt did not conclude: %v", err)
			}
			snap := s.Snapshot()
			_, callErr := s.Client()
			fe := fault.As(callErr)
			if snap.State != upstream.StateError || fe == nil || fe.Kind != fault.Connection {
				t.Fatalf("got state %s and error %v, want state error and a connection error", snap.State, callErr)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(snap.LastError, w) {
					t.Errorf("last error: got %q, want it to contain %q", snap.LastError, w)
				}
				if !strings.Contains(fe.Message, w) {
					t.Errorf("the caller's error: got %q, want it to contain %q", fe.Message, w)
				}
				if !strings.Contains(logs.String(), w) {
					t.Errorf("the log: got %q, want it to contain %q", logs.String(), w)
				}
			}
			for _, no := range tt.notInMsgs {
				if strings.Contains(snap.LastError, no) {
					t.Errorf("last error: got %q, want it without %q", snap.LastError, no)
				}
			}
			if !containsAny(snap.Suggestions, tt.wantHint) || !containsAny(fe.Suggestions, tt.wantHint) {
				t.Errorf("suggestions: got %q (snapshot) and %q (the caller's error), want one that says %q", snap.Suggestions, fe.Suggestions, tt.wantHint)
			}
			if !strings.Contains(logs.String(), tt.wantHint) {
				t.Errorf("the log: got %q, want the suggestion %q", logs.String(), tt.wantHint)
			}
		})
	}
}

func containsAny(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// TestCommandFoundOnTheChildsPath: a bare command is looked up on the PATH
// the child gets (its env's PATH), not only on Switchboard's.
func TestCommandFoundOnTheChildsPath(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "gizmo-server")); err != nil {
		t.Fatal(err)
	}
	srv := testserver.Server(t, "gizmo", "ok", "PATH="+dir)
	srv.Command = "gizmo-server"
	c, err := upstream.Dial(context.Background(), srv, upstream.DialOptions{})
	if err != nil {
		t.Fatalf("a command on the PATH set in the server's env: %v", err)
	}
	c.Close()
}
