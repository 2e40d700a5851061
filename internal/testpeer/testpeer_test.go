package testpeer

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStartEverything starts server-everything in each HTTP mode, checks that
// it answers as that transport should, and that cleanup leaves no process.
func TestStartEverything(t *testing.T) {
	tests := []struct {
		mode  string
		path  string
		check func(t *testing.T, url string)
	}{
		{"sse", "/sse", checkSSE},
		{"streamableHttp", "/mcp", checkStreamable},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			var pid int
			t.Run("serve", func(t *testing.T) {
				p := startEverything(t, tt.mode)
				pid = p.cmd.Process.Pid
				if !strings.HasPrefix(p.url, "http://127.0.0.1:") || !strings.HasSuffix(p.url, tt.path) {
					t.Errorf("got URL %q, want http://127.0.0.1:PORT%s", p.url, tt.path)
				}
				tt.check(t, p.url)
			})
			if pid == 0 {
				t.Fatal("the server never started")
			}
			// The subtest's cleanup has run: the child and its group must be gone.
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("after cleanup, kill(%d, 0) = %v, want ESRCH", pid, err)
			}
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("after cleanup, kill(-%d, 0) = %v, want ESRCH", pid, err)
			}
		})
	}
}

// checkSSE opens the event stream and expects the endpoint event first.
func checkSSE(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("GET %s: got %s (%s), want 200 OK (text/event-stream)", url, resp.Status, ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var event []string
	for sc.Scan() && sc.Text() != "" {
		event = append(event, sc.Text())
	}
	if len(event) != 2 || event[0] != "event: endpoint" || !strings.HasPrefix(event[1], "data: /message?sessionId=") {
		t.Errorf("first event: got %q, want [\"event: endpoint\" \"data: /message?sessionId=...\"]", event)
	}
}

// checkStreamable expects a GET without a session to be refused in JSON-RPC terms.
func checkStreamable(t *testing.T, url string) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var msg struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); resp.StatusCode != http.StatusBadRequest || err != nil || msg.JSONRPC != "2.0" || msg.Error.Code != -32000 {
		t.Errorf("GET %s without a session: got %s %s, want 400 and a JSON-RPC error -32000", url, resp.Status, body)
	}
}

// TestTakenPort checks that a child that cannot listen is seen to exit, even
// though its port accepts connections (someone else's) and it printed its
// "listening" line: StartEverything then retries on another port.
func TestTakenPort(t *testing.T) {
	for _, mode := range []string{"sse", "streamableHttp"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			port := l.Addr().(*net.TCPAddr).Port
			p, err := spawn(t, Node(t), []string{entry(t, "server-everything"), mode}, []string{"PORT=" + strconv.Itoa(port)})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.waitListening(port, time.Now().Add(startTimeout)); !errors.Is(err, errExited) {
				t.Errorf("on a taken port: got %v, want %v; output:\n%s", err, errExited, p.out)
			}
		})
	}
}

// everythingTools are the tools server-everything has from the start; a Go
// SDK client with no handlers declares roots, which adds get-roots-list after
// initialize, and simulate-research-query always follows (see the package doc).
var (
	everythingTools = []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
		"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
		"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	}
	everythingLateTools = []string{"get-roots-list", "simulate-research-query"}
)

// TestPeersOverMCP runs each peer the way the rest of the code base will, and
// talks MCP to it with the Go SDK: the commands and URLs from this package must
// lead to working servers with the tools the package doc lists.
func TestPeersOverMCP(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		transport func(t *testing.T) mcp.Transport
		want      []string // tools that must be listed, eventually
		call      string   // a tool to call with args
		args      map[string]any
		wantText  string // in the call's text content
	}{
		{
			name: "everything/stdio",
			transport: func(t *testing.T) mcp.Transport {
				bin, args := EverythingCommand(t)
				// It outlives a closed stdin while its roots/list is unanswered (see the package doc).
				return &mcp.CommandTransport{Command: exec.Command(bin, args...), TerminateDuration: time.Second}
			},
			want: append(slices.Clone(everythingTools), everythingLateTools...),
			call: "get-sum", args: map[string]any{"a": 2, "b": 3}, wantText: "5",
		},
		{
			name: "everything/sse",
			transport: func(t *testing.T) mcp.Transport {
				return &mcp.SSEClientTransport{Endpoint: sharedEverything(t, "sse")}
			},
			want: append(slices.Clone(everythingTools), everythingLateTools...),
			call: "echo", args: map[string]any{"message": "hi"}, wantText: "hi",
		},
		{
			name: "everything/streamableHttp",
			transport: func(t *testing.T) mcp.Transport {
				return &mcp.StreamableClientTransport{Endpoint: sharedEverything(t, "streamableHttp")}
			},
			want: append(slices.Clone(everythingTools), everythingLateTools...),
			call: "echo", args: map[string]any{"message": "hi"}, wantText: "hi",
		},
		{
			name: "memory",
			transport: func(t *testing.T) mcp.Transport {
				bin, args := MemoryCommand(t)
				return &mcp.CommandTransport{Command: exec.Command(bin, args...)}
			},
			want:     []string{"create_entities", "read_graph", "search_nodes"},
			call:     "create_entities",
			args:     map[string]any{"entities": []any{map[string]any{"name": "switchboard", "entityType": "project", "observations": []any{}}}},
			wantText: "switchboard",
		},
		{
			name: "filesystem",
			transport: func(t *testing.T) mcp.Transport {
				bin, args := FilesystemCommand(t, root)
				return &mcp.CommandTransport{Command: exec.Command(bin, args...)}
			},
			want: []string{"read_text_file", "list_directory", "write_file"},
			call: "read_text_file", args: map[string]any{"path": filepath.Join(root, "hello.txt")}, wantText: "hello",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "testpeer", Version: "v0"}, nil)
			cs, err := client.Connect(ctx, tt.transport(t), nil)
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			defer cs.Close()

			// Some tools are added after initialize: poll until they are listed.
			var missing []string
			ticker := time.NewTicker(50 * time.Millisecond)
			defer ticker.Stop()
			for {
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("listing tools: %v", err)
				}
				missing = missing[:0]
				for _, name := range tt.want {
					if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name }) {
						missing = append(missing, name)
					}
				}
				if len(missing) == 0 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("tools never listed: %v", missing)
				case <-ticker.C:
				}
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.call, Arguments: tt.args})
			if err != nil {
				t.Fatalf("calling %s: %v", tt.call, err)
			}
			var text strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
			if res.IsError || !strings.Contains(text.String(), tt.wantText) {
				t.Errorf("calling %s: got isError=%v text %q, want text containing %q", tt.call, res.IsError, text.String(), tt.wantText)
			}
		})
	}
}

// TestMemoryCommandIsolated checks that server-memory's graph goes to the
// test's temporary directory, not into node_modules.
func TestMemoryCommandIsolated(t *testing.T) {
	t.Parallel()
	bin, args := MemoryCommand(t)
	envFile, ok := strings.CutPrefix(args[0], "--env-file=")
	if !ok {
		t.Fatalf("got args %q, want --env-file=... first", args)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "testpeer", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, args...)}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	entities := map[string]any{"entities": []any{map[string]any{"name": "n", "entityType": "t", "observations": []any{}}}}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: entities}); err != nil {
		t.Fatalf("calling create_entities: %v", err)
	}
	graph := filepath.Join(filepath.Dir(envFile), "memory.jsonl")
	if data, err := os.ReadFile(graph); err != nil || !strings.Contains(string(data), `"name":"n"`) {
		t.Errorf("reading %s: got %q, %v; want the entity n", graph, data, err)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalMessage runs fn with a fatalRecorder and returns what it failed with.
func fatalMessage(t *testing.T, fn func(testing.TB)) string {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(rec)
	}()
	<-done
	return rec.msg
}

// TestMissingPeersFail checks that a test needing peers fails, never skips,
// and says how to install them.
func TestMissingPeersFail(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "test", "peers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test", "peers", "package-lock.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "test", "peers"))

	for name, fn := range map[string]func(testing.TB){
		"Dir":               func(tb testing.TB) { Dir(tb) },
		"EverythingCommand": func(tb testing.TB) { EverythingCommand(tb) },
		"MemoryCommand":     func(tb testing.TB) { MemoryCommand(tb) },
		"FilesystemCommand": func(tb testing.TB) { FilesystemCommand(tb, dir) },
		"StartEverything":   func(tb testing.TB) { StartEverything(tb, "sse") },
	} {
		msg := fatalMessage(t, fn)
		if !strings.Contains(msg, "make peers") || !strings.Contains(msg, "not installed") {
			t.Errorf("%s without peers: got Fatalf %q, want one naming `make peers`", name, msg)
		}
	}

	// Installed, but from an older lock file.
	hidden := filepath.Join(dir, "test", "peers", "node_modules", ".package-lock.json")
	if err := os.MkdirAll(filepath.Dir(hidden), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hidden, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(hidden, old, old); err != nil {
		t.Fatal(err)
	}
	if msg := fatalMessage(t, func(tb testing.TB) { Dir(tb) }); !strings.Contains(msg, "older than") || !strings.Contains(msg, "make peers") {
		t.Errorf("Dir with stale peers: got Fatalf %q, want one naming `make peers`", msg)
	}
}

func TestUnknownMode(t *testing.T) {
	msg := fatalMessage(t, func(tb testing.TB) { StartEverything(tb, "websocket") })
	if !strings.Contains(msg, `unknown mode "websocket"`) {
		t.Errorf("got Fatalf %q, want one naming the unknown mode", msg)
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		writes []string
		want   string
	}{
		{[]string{"ab", "cd"}, "abcd"},
		{[]string{"abcdef"}, "[2 bytes dropped]\ncdef"},
		{[]string{"abc", "def", "g"}, "[3 bytes dropped]\ndefg"},
	}
	for _, tt := range tests {
		b := &tailBuffer{limit: 4}
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
			}
		}
		if got := b.String(); got != tt.want {
			t.Errorf("after %q: got %q, want %q", tt.writes, got, tt.want)
		}
	}
}

func TestDeclaresModule(t *testing.T) {
	tests := []struct {
		mod  string
		want bool
	}{
		{"module " + modulePath + "\n\ngo 1.26\n", true},
		{"// comment\nmodule \"" + modulePath + "\"\n", true},
		{"module " + modulePath + "/other\n", false},
		{"go 1.26\n", false},
	}
	for _, tt := range tests {
		if got := declaresModule([]byte(tt.mod), modulePath); got != tt.want {
			t.Errorf("declaresModule(%q) = %v, want %v", tt.mod, got, tt.want)
		}
	}
}
