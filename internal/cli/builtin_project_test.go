package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeProjectFixture writes a small project to search.
func writeProjectFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"billing/invoice.go": "package billing\n\n// ComputeInvoiceTotal adds the lines of an invoice.\nfunc ComputeInvoiceTotal(lines []int) int {\n\tsum := 0\n\tfor _, l := range lines {\n\t\tsum += l\n\t}\n\treturn sum\n}\n",
		"README.md":          "# Shop\n\nA small shop.\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuiltinProjectStdio runs "switchboard builtin project" as a stdio
// child and calls general_query through the CLI.
func TestBuiltinProjectStdio(t *testing.T) {
	t.Parallel()
	setenv(t, "SWITCHBOARD_STATE_DIR", stateDir(t))
	root := writeProjectFixture(t)
	exe, _ := os.Executable()
	cfg := filepath.Join(t.TempDir(), "switchboard.yaml")
	yaml := fmt.Sprintf(`security:
  allowed_commands: [%q]
servers:
  - name: project
    command: %q
    args: [builtin, project, --root, %q]
    env:
      %s: "1"
`, exe, exe, root, envRunMain)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "call", "--config", cfg, "project", "general_query", "query=compute the invoice total", "responseFormat=Concise", "--json")
	wantCode(t, r, ExitOK)
	wantContains(t, "general_query", r.stdout, "billing/invoice.go:4", "backgroundTaskProgress")
	// Without --json the Markdown answer prints as Markdown: its heading
	// and code block on lines of their own, never as escaped JSON.
	r = runCLI(t, "call", "--config", cfg, "project", "general_query", "query=compute the invoice total")
	wantCode(t, r, ExitOK)
	wantContains(t, "general_query", r.stdout, "\n```go\n", "// ComputeInvoiceTotal adds the lines of an invoice.\nfunc ComputeInvoiceTotal", "suggestions:\n")
	if !strings.HasPrefix(r.stdout, "### billing/invoice.go:") {
		t.Errorf("the answer does not start with its Markdown heading:\n%s", r.stdout)
	}
	for _, escaped := range []string{`\n`, `{"results"`, `\"`} {
		if strings.Contains(r.stdout, escaped) {
			t.Errorf("the answer prints escaped JSON (%s):\n%s", escaped, r.stdout)
		}
	}
	r = runCLI(t, "call", "--config", cfg, "project", "general_query", "query=total", `scope={"directories":["../.."]}`)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "scope.directories[0]")
}

// TestBuiltinProjectHTTP serves the project server over streamable HTTP
// and queries it with the go-sdk client.
func TestBuiltinProjectHTTP(t *testing.T) {
	t.Parallel()
	root := writeProjectFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- runCLICtx(t, ctx, "builtin", "project", "--root", root, "--http", addr) }()
	defer func() {
		cancel()
		if r := <-done; r.code != ExitOK {
			t.Errorf("builtin project exit %d: %s", r.code, r.stderr)
		}
	}()
	var cs *mcp.ClientSession
	eventuallyCLI(t, 10*time.Second, "the project server to answer", func() bool {
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
		return err == nil
	})
	defer cs.Close()
	var text string
	eventuallyCLI(t, 10*time.Second, "the index to find the invoice", func() bool {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "general_query", Arguments: map[string]any{"query": "ComputeInvoiceTotal", "responseFormat": "Concise"}})
		if err != nil || res.IsError {
			t.Fatalf("general_query: %v %v", err, res)
		}
		text = res.Content[0].(*mcp.TextContent).Text
		return strings.Contains(text, "billing/invoice.go:4")
	})
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got, want := strings.Join(names, ","), "commit_message,general_query"; got != want {
		t.Errorf("got tools %s, want %s", got, want)
	}
}

func TestBuiltinProjectBadRoot(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "builtin", "project", "--root", filepath.Join(t.TempDir(), "missing"))
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "root")
	r = runCLI(t, "builtin", "project", "extra")
	wantCode(t, r, ExitUsage)
}

// TestBuiltinTasksMissingEnvFile checks that an --env-file that does not
// exist is an error naming it, even when the environment holds every
// setting (the server would otherwise start without the file's values).
func TestBuiltinTasksMissingEnvFile(t *testing.T) {
	t.Parallel()
	setenv(t, "SERVICE_AUTH_TOKEN", "token")
	setenv(t, "FASTAPI_BASE_URL", "http://127.0.0.1:1")
	missing := filepath.Join(t.TempDir(), "nonexist.env")
	// A cancelled context: if the file were ignored, the server would stop
	// at once instead of serving stdio.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := runCLICtx(t, ctx, "builtin", "tasks", "--env-file", missing)
	wantCode(t, r, ExitFailure)
	wantContains(t, "stderr", r.stderr, "the env file "+missing+" does not exist")
	// --env-file "" reads no file, not even ./.env. Over HTTP: the stdio
	// server is the process's own stdin and stdout, which it closes as it
	// stops, under the parallel tests that read them (a data race).
	r = runCLICtx(t, ctx, "builtin", "tasks", "--env-file", "", "--http", "127.0.0.1:0")
	if r.code == ExitFailure || strings.Contains(r.stderr, "env file") {
		t.Errorf(`--env-file "": got exit %d, stderr %q; want the server to start without a file`, r.code, r.stderr)
	}
}
