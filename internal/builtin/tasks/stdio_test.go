package tasks_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testpg"

	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
)

// envStdioBackend, when set, makes the test binary run the task server
// over stdio against the backend at its value (go-sdk mcp/cmd_test.go's
// pattern).
const envStdioBackend = "TASKS_TEST_STDIO_BACKEND"

func TestMain(m *testing.M) {
	if url := os.Getenv(envStdioBackend); url != "" {
		srv, err := tasks.NewServer(testSettings(url), tasks.Options{})
		if err == nil {
			err = tasks.ServeStdio(context.Background(), srv)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	testpg.StopShared() // the reference backend tests' PostgreSQL
	os.Exit(code)
}

func TestServeStdio(t *testing.T) {
	fb := newFakeBackend(t)
	fb.add(tasks.Task{ID: 1, Title: "over stdio", Priority: "Low", UserID: "dana"})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envStdioBackend+"="+fb.srv.URL)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	got := wantOK(t, call(t, cs, "dana", tasks.ToolListTasks, nil))
	if tasks := got["tasks"].([]any); len(tasks) != 1 {
		t.Errorf("got %v, want dana's one task", got)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("server process: got %v, want a clean exit", cmd.ProcessState)
	}
}
