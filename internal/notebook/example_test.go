package notebook_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/notebook"
	"github.com/switchboard-mcp/switchboard/internal/toolcall"
)

// upperCaller stands for the execution engine (a *toolcall.Engine in
// Switchboard): it answers every call with its message in capitals.
type upperCaller struct{}

func (upperCaller) Call(_ context.Context, req toolcall.Request) (*toolcall.Result, error) {
	m, _ := req.Arguments["message"].(string)
	return &toolcall.Result{Status: toolcall.StatusSuccess, ContentType: toolcall.ContentText, Display: toolcall.DisplayInline,
		CallToolResult: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(m)}}}}, nil
}

// ExampleRun runs the tool-call blocks of a Markdown document and writes
// each result under its block; a second run finds them up to date.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "notebook-example-*")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	doc := filepath.Join(dir, "doc.md")
	src := "# Shouting\n\n```echo\ntool: shout\nmessage: hello\n```\n"
	if err := os.WriteFile(doc, []byte(src), 0o644); err != nil {
		log.Fatal(err)
	}
	cfg := config.Default()
	cfg.Servers = []config.Server{{Name: "echo", Transport: config.TransportHTTP, URL: "http://127.0.0.1:1/mcp"}}

	rep, err := notebook.Run(context.Background(), doc, notebook.Options{Config: cfg, Caller: upperCaller{}})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range rep.Blocks {
		fmt.Printf("line %d: %s/%s %s\n", b.Line, b.Server, b.Tool, b.Status)
	}
	written, _ := os.ReadFile(doc)
	fmt.Println("document holds the result:", strings.Contains(string(written), "HELLO"))

	again, err := notebook.Run(context.Background(), doc, notebook.Options{Config: cfg, Caller: upperCaller{}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("second run rewrote it:", again.Written)
	// Output:
	// line 3: echo/shout success
	// document holds the result: true
	// second run rewrote it: false
}
