package taskapi_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/builtin/taskapi"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// ExampleNewHandler serves the task API over a SQLite file and creates a
// task for a user, as the task MCP server does: the service token in
// Authorization, the user in X-User-ID.
func ExampleNewHandler() {
	dir, err := os.MkdirTemp("", "taskapi-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.OpenTasks(context.Background(), filepath.Join(dir, "tasks.db"), store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	h, err := taskapi.NewHandler(taskapi.Options{Store: db, ServiceToken: "s3cret"})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	send := func(method, path, body string) {
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set("X-User-ID", "alice")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, strings.Contains(string(out), `"title":"Buy milk"`))
	}
	send(http.MethodPost, "/tasks", `{"title": "Buy milk", "priority": "High"}`)
	send(http.MethodGet, "/tasks", "")
	// Output:
	// 201 true
	// 200 true
}
