package cli

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestHelpExamplesOfServerEverything: every --help example that uses
// server-everything (a server named everything, or --stdio running it)
// names a tool, prompt or resource that the server-everything of
// test/peers has, with arguments it declares, so that the example works
// when pasted. They named add, simple_prompt and test://static/resource/1,
// which server-everything renamed long ago ("server everything has no
// tool named add").
func TestHelpExamplesOfServerEverything(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: everythingURL(t)}, nil)
	if err != nil {
		t.Fatalf("connecting to server-everything: %v", err)
	}
	defer cs.Close()
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing server-everything's tools: %v", err)
		}
		tools[tool.Name] = tool
	}
	prompts := map[string]*mcp.Prompt{}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("listing server-everything's prompts: %v", err)
		}
		prompts[p.Name] = p
	}
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("listing server-everything's resources: %v", err)
		}
		uris = append(uris, r.URI)
	}
	var templates []string
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("listing server-everything's resource templates: %v", err)
		}
		templates = append(templates, r.URITemplate)
	}
	// A URI of a template matches it with each {variable} filled.
	readable := func(uri string) bool {
		if slices.Contains(uris, uri) {
			return true
		}
		for _, tmpl := range templates {
			if prefix, _, ok := strings.Cut(tmpl, "{"); ok && strings.HasPrefix(uri, prefix) && !strings.Contains(uri[len(prefix):], "/") {
				return true
			}
		}
		return false
	}

	checked := 0
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard})
	forEachCommand(root, func(c *cobra.Command) {
		for line := range strings.Lines(c.Example) {
			_, cmdline, ok := strings.Cut(line, "switchboard ")
			if !ok || !strings.Contains(cmdline, "everything") {
				continue
			}
			words, err := config.SplitCommand(cmdline)
			if err != nil {
				t.Errorf("%s --help: example %q does not split: %v", commandName(c), line, err)
				continue
			}
			// The words after the command: SERVER (or --stdio "CMD"), then NAME.
			if len(words) < 3 || !slices.Contains([]string{"call", "tool", "prompt", "read"}, words[0]) {
				continue
			}
			rest := words[1:]
			switch {
			case rest[0] == "everything":
				rest = rest[1:]
			case rest[0] == "--stdio" && strings.Contains(rest[1], "server-everything"):
				rest = rest[2:]
			default:
				continue
			}
			if len(rest) == 0 {
				continue
			}
			what, params := rest[0], rest[1:]
			checked++
			var declared []string
			switch words[0] {
			case "call", "tool":
				tool, ok := tools[what]
				if !ok {
					t.Errorf("%s --help: example %q names tool %q, which server-everything does not have", commandName(c), strings.TrimSpace(line), what)
					continue
				}
				if props, ok := tool.InputSchema.(map[string]any)["properties"].(map[string]any); ok {
					for k := range props {
						declared = append(declared, k)
					}
				}
			case "prompt":
				p, ok := prompts[what]
				if !ok {
					t.Errorf("%s --help: example %q names prompt %q, which server-everything does not have", commandName(c), strings.TrimSpace(line), what)
					continue
				}
				for _, a := range p.Arguments {
					declared = append(declared, a.Name)
				}
			case "read":
				if !readable(what) {
					t.Errorf("%s --help: example %q reads %q, which server-everything neither lists nor has a template of", commandName(c), strings.TrimSpace(line), what)
				}
			}
			for _, p := range params {
				if k, _, ok := strings.Cut(p, "="); ok && !strings.HasPrefix(p, "-") && !slices.Contains(declared, k) {
					t.Errorf("%s --help: example %q passes %s, which %s does not declare (it has %v)", commandName(c), strings.TrimSpace(line), k, what, declared)
				}
			}
		}
	})
	if checked < 4 {
		t.Errorf("checked %d examples that use server-everything, want the call, tool, prompt and read ones", checked)
	}
}
