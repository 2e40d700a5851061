package tasks_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/builtin/tasks"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// ExampleNewServer puts the task MCP server in front of the reference
// backend (taskapi over a SQLite file) and creates a task for the user
// the call's _meta names.
func ExampleNewServer() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "tasks-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.OpenTasks(ctx, filepath.Join(dir, "tasks.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	api, err := taskapi.NewHandler(taskapi.Options{Store: db, ServiceToken: "s3cret"})
	if err != nil {
		log.Fatal(err)
	}
	backend := httptest.NewServer(api)
	defer backend.Close()

	srv, err := tasks.NewServer(tasks.Settings{ServiceAuthToken: "s3cret", BackendURL: backend.URL,
		LogLevel: "INFO", Port: 3000, BackendTimeout: 5 * time.Second}, tasks.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      tasks.ToolCreateTask,
		Arguments: map[string]any{"title": "Buy milk", "priority": "High"},
		Meta:      mcp.Meta{tasks.MetaUserID: "alice"},
	})
	if err != nil {
		log.Fatal(err)
	}
	task, _ := res.StructuredContent.(map[string]any)
	fmt.Println(res.IsError, task["title"], task["priority"], task["user_id"])
	// Output:
	// false Buy milk High alice
}
