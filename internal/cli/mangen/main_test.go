package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// TestGenerate checks that every command gets a man page with its
// synopsis, flags and examples, headed by its own name.
func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no man page for %s: %v", c.CommandPath(), err)
			return
		}
		page := string(data)
		title := strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")) // SWITCHBOARD-CALL
		for _, want := range []string{".TH \"" + title + "\" \"1\"", "SYNOPSIS", "EXAMPLE"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s does not contain %q", name, want)
			}
		}
		if c.HasAvailableLocalFlags() && !strings.Contains(page, "OPTIONS") {
			t.Errorf("%s lists no options", name)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(cli.CommandTree())
}
