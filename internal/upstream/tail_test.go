package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Real-shaped stderr of servers that fail to start, as their launchers
// print it.
const (
	nodeMissingModule = "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module '/nonexistent.js'\n" +
		"    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n    at Module._load (node:internal/modules/cjs/loader:1038:27)\n" +
		"  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n"
	pythonTraceback = "Traceback (most recent call last):\n  File \"server.py\", line 3, in <module>\n    import mcp\nModuleNotFoundError: No module named 'mcp'\n"
	// npm 8 and 9 (Node 16, 18).
	npm8NotFound = "npm ERR! code E404\n" +
		"npm ERR! 404 Not Found - GET https://registry.npmjs.org/mcp-server-nope - Not found\n" +
		"npm ERR! 404 \n" +
		"npm ERR! 404  'mcp-server-nope@*' is not in this registry.\n" +
		"npm ERR! 404 \n" +
		"npm ERR! 404 Note that you can also install from a\n" +
		"npm ERR! 404 tarball, folder, http url, or git url.\n\n" +
		"npm ERR! A complete log of this run can be found in:\n" +
		"npm ERR!     /home/me/.npm/_logs/2023-01-01T00_00_00_000Z-debug-0.log\n"
	// uvx of a package that does not exist.
	uvxNotFound = "  × No solution found when resolving tool dependencies:\n" +
		"  ╰─▶ Because mcp-server-nope was not found in the package registry and you require mcp-server-nope, we can\n" +
		"      conclude that your requirements are unsatisfiable.\n"
	dockerNoImage = "Unable to find image 'mcp/nope:latest' locally\n" +
		"docker: Error response from daemon: pull access denied for mcp/nope, repository does not exist or may require 'docker login'.\n" +
		"See 'docker run --help'.\n"
	goPanic = "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/server/main.go:12 +0x1d\nexit status 2\n"
)

func TestStderrSummary(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"node stack", nodeMissingModule, "Error: Cannot find module '/nonexistent.js'"},
		{"python traceback", pythonTraceback, "ModuleNotFoundError: No module named 'mcp'"},
		{"python traceback, then a log line", pythonTraceback + "INFO shutting down\n", "ModuleNotFoundError: No module named 'mcp'"},
		{"npm 10 package not found", testserver.NPMNotFound, // npm 10 (Node 20 and later)
			"npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-nonexistent - Not found"},
		{"npm 8 package not found", npm8NotFound, "npm ERR! 404 Not Found - GET https://registry.npmjs.org/mcp-server-nope - Not found"},
		{"npm's log pointer alone", "npm error A complete log of this run can be found in: /x/debug-0.log\n", ""},
		{"uvx package not found", uvxNotFound,
			"╰─▶ Because mcp-server-nope was not found in the package registry and you require mcp-server-nope, we can"},
		{"docker image missing", dockerNoImage,
			"docker: Error response from daemon: pull access denied for mcp/nope, repository does not exist or may require 'docker login'."},
		{"go panic", goPanic, "panic: boom"},
		{"an error code alone", "connecting to the database\nENOENT: /var/run/db.sock\n", "ENOENT: /var/run/db.sock"},
		{"nothing that looks like an error", "starting\nlistening on stdio\nbye\n", "starting\nlistening on stdio\nbye"},
		{"last lines only", "a\nb\nc\nd\n", "b\nc\nd"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stderrSummary(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDescribeExit: how a child ended, from real processes.
func TestDescribeExit(t *testing.T) {
	t.Parallel()
	exe := testserver.Command(t)
	run := func(mode string, kill bool) *os.ProcessState {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), testserver.EnvMode+"="+mode)
		stdin, err := cmd.StdinPipe() // "hang" reads it until killed
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kill {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
		return cmd.ProcessState
	}
	if got, want := describeExit(run("exit-silent", false)), "exited with code 3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := describeExit(run("hang", true)), "was killed by signal killed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTailBuffer: the tail keeps the newest whole lines however the bytes
// arrive, and cuts a line past maxLine after its beginning (not inside a
// UTF-8 sequence), with a mark of how much was cut.
func TestTailBuffer(t *testing.T) {
	t.Parallel()
	mark := func(n int) string { return fmt.Sprintf(lineCutMark, n) }
	tests := []struct {
		name         string
		max, maxLine int
		writes       []string
		want         string
	}{
		{"short lines", 64, 16, []string{"a\nb\n", "c\n"}, "a\nb\nc"},
		{"the ring wraps: whole lines only", 16, 8, []string{"line 1\nline 2\n", "line 3\nline 4\n"}, "line 3\nline 4"},
		{"a line written a byte at a time", 64, 16, strings.Split("hello\nworld\n", ""), "hello\nworld"},
		{"a long line is cut after maxLine", 400, 10, []string{"0123456789abcdef\nnext\n"}, "0123456789" + mark(6) + "\nnext"},
		{"a long line across writes", 400, 10, []string{"0123456", "789abc", "def\nnext\n"}, "0123456789" + mark(6) + "\nnext"},
		{"a line being cut shows the mark so far", 400, 10, []string{"ok\n0123456789abcdef"}, "ok\n0123456789" + mark(6)},
		{"not inside a UTF-8 sequence", 400, 10, []string{"012345678é!!\n"}, "012345678" + mark(4)},
		{"a write larger than the ring", 40, 10, []string{strings.Repeat("z", 100) + "\n" + "tail\n"}, "tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(tt.max)
			b.maxLine = tt.maxLine
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
